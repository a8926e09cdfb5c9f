"""Every adapter runs packs on the one Runtime and renders the one Outcome and Rejection.

* ``Pack(isolated=True)`` is honoured by ``packctl serve``, ``call --local``, ``gate
  --local``, ``packctl mcp --local`` and the kit's served pack (the Temporal worker: in
  tests/test_temporal.py): the handler reports the process it ran in.
* A refusal (unknown pack, invalid input) reaches the caller of each adapter as the same
  :class:`~control_plane._kernel.rejection.Rejection` the runtime raised: reason, message,
  retryable flag and hint, never re-derived.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import isolated_packs
import pytest
from mcp import StdioServerParameters
from mcp.client import Client as McpClient
from server_support import PACKCTL, ROOT, subprocess_env
from test_cli import start_serve, stop_serve

from control_plane._features.cli import cli
from control_plane._features.grpc import status as wire
from control_plane._features.grpc.client import Client
from control_plane._features.kit.served import ServedPack
from control_plane._features.kit.target import PackTarget
from control_plane._kernel.errors import InvalidInput, RequestRejected, UnknownPack
from control_plane._runtime.runtime import TRUST_ALL, RuntimeConfig, build_runtime

PLUGINS = "testpacks,isolated_packs"


@pytest.fixture(autouse=True)
def _only_test_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAPABILITY_PACKS_PLUGINS", PLUGINS)
    monkeypatch.setenv(isolated_packs.ENV_ADAPTER_PID, str(os.getpid()))


def _json(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out)


# -- isolation, whatever the adapter ---------------------------------------------------


@pytest.mark.system
def test_build_runtime_isolates_declared_packs() -> None:
    with build_runtime(RuntimeConfig(plugins=("isolated_packs",))) as runtime:
        assert runtime.isolated == {"iso.where"}
        outcome = runtime.invoker.invoke_sync("iso.where", {})
    assert outcome.result is not None and outcome.result["pid"] != os.getpid()


@pytest.mark.system
def test_serve_isolates_declared_packs() -> None:
    proc, target = start_serve(
        "--plugin", "isolated_packs", env=subprocess_env(CAPABILITY_PACKS_PLUGINS=PLUGINS)
    )
    try:
        with Client(target) as client:
            outcome = client.invoke("iso.where", {}, timeout=30)
    finally:
        stop_serve(proc)
    assert outcome.result is not None
    assert outcome.result["pid"] != proc.pid
    assert not isolated_packs.in_adapter_process(outcome.result["cmdline"])


@pytest.mark.system
def test_call_local_isolates_declared_packs(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["call", "iso.where", "--local", "--plugin", "isolated_packs", "--output", "json"]
    assert cli.main([*argv, "--strict", "--input", "{}"]) == cli.EXIT_OK
    printed = _json(capsys)
    assert printed["result"]["pid"] != os.getpid()
    assert not isolated_packs.in_adapter_process(printed["result"]["cmdline"])


@pytest.mark.system
def test_gate_local_isolates_declared_packs(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("artifact")
    gate = tmp_path / "packctl-gate.toml"
    gate.write_text(
        '[[steps]]\nname = "where"\npack = "iso.where"\nartifacts = "*.txt"\n'
        'artifact_field = "path"\nstrict = true\n'
    )
    argv = ["gate", str(gate), "--local", "--plugin", "isolated_packs", "--format", "json"]
    out = tmp_path / "report.json"
    # Strict: the pack's check fails (exit 1) if its handler ran in this process.
    assert cli.main([*argv, "--output", str(out)]) == 0
    assert '"isolated"' in out.read_text()


@pytest.mark.system
def test_the_kits_served_pack_isolates_declared_packs() -> None:
    served = ServedPack(PackTarget("iso.where", plugin="isolated_packs")).start()
    try:
        outcome = served.invoke({})
    finally:
        served.stop()
    assert outcome.result is not None and outcome.result["pid"] != os.getpid()
    assert not isolated_packs.in_adapter_process(outcome.result["cmdline"])


@asynccontextmanager
async def _mcp_local() -> AsyncIterator[McpClient]:
    params = StdioServerParameters(
        command=PACKCTL[0],
        args=[
            *PACKCTL[1:],
            "mcp",
            "--local",
            "--plugin",
            "isolated_packs",
            "--plugin",
            "testpacks",
        ],
        env=subprocess_env(CAPABILITY_PACKS_PLUGINS=PLUGINS),
        cwd=str(ROOT),
    )
    async with McpClient(params, read_timeout_seconds=30) as client:
        yield client


@pytest.mark.system
async def test_mcp_local_isolates_declared_packs() -> None:
    async with _mcp_local() as client:
        result = await client.call_tool("iso.where", {})
        unknown = await client.call_tool("no.such_pack", {})
        invalid = await client.call_tool("test.fail", {"code": 3})
    assert not result.is_error
    structured = result.structured_content
    assert structured is not None
    # Not the bridge process (its command line names packctl's module): a worker of it.
    assert not isolated_packs.in_adapter_process(structured["result"]["cmdline"])
    # Refusals: the rejection vocabulary's reason, retryable flag and hint.
    for answer, reason in ((unknown, "unknown_pack"), (invalid, "invalid_input")):
        assert answer.is_error
        assert answer.structured_content is not None
        rejected = answer.structured_content["rejected"]
        expected = await asyncio.to_thread(_rejection_of, reason)
        assert rejected["reason"] == reason
        assert rejected["retryable"] is expected.retryable
        assert rejected["recovery_hint"] == expected.recovery_hint


# -- one rejection, rendered by every adapter ------------------------------------------


def _rejection_of(reason: str) -> Any:
    """The rejection the runtime raises for an unknown pack or an invalid input."""
    with build_runtime(RuntimeConfig(plugins=("testpacks",), trust=TRUST_ALL)) as runtime:
        try:
            if reason == "unknown_pack":
                runtime.invoker.invoke_sync("no.such_pack", {})
            else:
                runtime.invoker.invoke_sync("test.fail", {"code": 3})
        except RequestRejected as exc:
            return exc.rejection
    raise AssertionError(f"no {reason} rejection")


CASES = [("unknown_pack", "no.such_pack", "{}"), ("invalid_input", "test.fail", '{"code": 3}')]


@pytest.mark.system
@pytest.mark.parametrize(("reason", "pack", "doc"), CASES)
def test_grpc_renders_the_rejection(reason: str, pack: str, doc: str) -> None:
    proc, target = start_serve("--plugin", "testpacks")
    try:
        channel = grpc.insecure_channel(target)
        from control_plane.v1 import control_plane_pb2 as pb
        from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

        stub = pb_grpc.ControlPlaneServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.InvokePack(pb.InvokePackRequest(pack=pack, input=doc.encode()), timeout=10)
        channel.close()
    finally:
        stop_serve(proc)
    rpc = caught.value
    parsed = wire.parse_status(rpc.code(), rpc.details(), rpc.trailing_metadata())
    expected = _rejection_of(reason)
    assert rpc.code() == grpc.StatusCode[expected.grpc_status]
    assert parsed.error_info is not None
    metadata = dict(parsed.error_info.metadata)
    assert parsed.error_info.reason == reason.upper()
    assert metadata["code"] == reason
    assert metadata["retryable"] == ("true" if expected.retryable else "false")
    assert wire.rejection_from_status(parsed) is not None


# A system test: the CLI describes the --plugin module in a confined worker first.
@pytest.mark.system
@pytest.mark.parametrize(("reason", "pack", "doc"), CASES)
def test_cli_renders_the_rejection(
    reason: str, pack: str, doc: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["call", pack, "--local", "--plugin", "testpacks", "--output", "json", "--input", doc]
    assert cli.main(argv) == cli.EXIT_USAGE
    problem = _json(capsys)["problem"]
    expected = _rejection_of(reason)
    assert problem["kind"] == expected.reason
    if reason == "unknown_pack":
        assert problem["message"] == expected.message


def test_the_rejection_exceptions_carry_their_rejection() -> None:
    unknown = _rejection_of("unknown_pack")
    invalid = _rejection_of("invalid_input")
    assert isinstance(RequestRejected.of(unknown), UnknownPack)
    assert isinstance(RequestRejected.of(invalid), InvalidInput)
    assert RequestRejected.of(invalid).rejection == invalid
