"""``request_refused`` is the kernel's: every adapter's refusal reaches it, once (issue 43).

Before, only the gRPC server and the Temporal activity (which hold an ``Observability``)
told the hook; a refusal through MCP, ``--local``, the author kit or the gate was never seen.
Each test here goes through one adapter, in this process.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import refusal_packs
from server_support import ServerThread

from control_plane._features.cli.backends import LocalBackend
from control_plane._features.cli.cli import main
from control_plane._features.grpc.client import Client
from control_plane._features.mcp.bridge.server import Bridge
from control_plane._kernel.errors import InvalidInput, RequestRejected, UnknownPack
from control_plane._runtime.plugins import load_registry
from control_plane._runtime.runtime import RuntimeConfig, build_runtime
from control_plane.testing import ConformanceError, PackKit, PackTarget

BAD = {"n": "not a number"}


@pytest.fixture(autouse=True)
def seen() -> Iterator[list[tuple[str, str]]]:
    refusal_packs.SEEN.clear()
    yield refusal_packs.SEEN
    refusal_packs.SEEN.clear()


def test_the_invoker_tells_the_hook_of_each_refusal_once(seen: list[tuple[str, str]]) -> None:
    runtime = build_runtime(
        RuntimeConfig(builtins=False, entry_points=False, extra=(("rp", refusal_packs),))
    )
    try:
        with pytest.raises(InvalidInput) as bad:
            runtime.invoker.invoke_sync("refusal.echo", BAD)
        with pytest.raises(UnknownPack):
            runtime.invoker.invoke_sync("refusal.nope", {})
        assert seen == [("invalid_input", "refusal.echo"), ("unknown_pack", "refusal.nope")]
        # An adapter that reports the same refusal again (the server, Temporal) is a no-op.
        assert bad.value.reported
        runtime.invoker.report_refusal(bad.value)
        assert len(seen) == 2
        assert runtime.invoker.invoke_sync("refusal.echo", {"n": 2}).result == {"n": 2}
        assert len(seen) == 2
    finally:
        runtime.close()


def test_grpc(seen: list[tuple[str, str]]) -> None:
    load = load_registry(
        builtins=False, entry_points_=False, extra=[("refusal_packs", refusal_packs)]
    )
    server = ServerThread(load, max_workers=4).start()
    try:
        with Client(server.target) as client:
            with pytest.raises(RequestRejected):
                client.invoke("refusal.echo", BAD, timeout=10)
            with pytest.raises(RequestRejected):
                client.invoke("refusal.nope", {}, timeout=10)
    finally:
        server.stop()
    assert seen == [("invalid_input", "refusal.echo"), ("unknown_pack", "refusal.nope")]


@pytest.mark.system  # --plugin: a describing worker
def test_local_cli(seen: list[tuple[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["call", "refusal.echo", "--local", "--plugin", "refusal_packs"]
    assert main([*argv, "--input", json.dumps(BAD)]) == 2
    assert main(["call", "refusal.nope", "--local", "--plugin", "refusal_packs"]) == 2
    capsys.readouterr()
    assert ("invalid_input", "refusal.echo") in seen and ("unknown_pack", "refusal.nope") in seen
    assert len(seen) == 2


def test_mcp_bridge(seen: list[tuple[str, str]]) -> None:
    runtime = build_runtime(
        RuntimeConfig(builtins=False, entry_points=False, extra=(("rp", refusal_packs),))
    )
    bridge = Bridge(LocalBackend(runtime))

    async def calls() -> list[bool]:
        try:
            results = [
                await bridge.call("refusal.echo", BAD),  # the invoker's refusal
                await bridge.call("refusal.nope", {}),  # the bridge's own: no such tool
                await bridge.call("refusal.echo", {"n": 1}),
            ]
        finally:
            await bridge.close()
        return [is_error for _, _, is_error in results]

    assert asyncio.run(calls()) == [True, True, False]
    assert seen == [("invalid_input", "refusal.echo"), ("unknown_pack", "refusal.nope")]


def test_author_kit(seen: list[tuple[str, str]]) -> None:
    with (
        PackKit(PackTarget("refusal.echo", plugin=refusal_packs)) as kit,
        pytest.raises(ConformanceError, match="input refused"),
    ):
        kit.invoke(BAD)
    assert seen == [("invalid_input", "refusal.echo")]


@pytest.mark.system  # --plugin: a describing worker
def test_gate_local(
    seen: list[tuple[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.txt").write_text("x")
    gate = tmp_path / "packctl-gate.toml"
    gate.write_text(
        '[[steps]]\npack = "refusal.echo"\nartifacts = "*.txt"\n'
        'artifact_field = "path"\ninput = { n = "not a number" }\n'
    )
    code = main(["gate", str(gate), "--local", "--plugin", "refusal_packs"])
    capsys.readouterr()
    assert code == 2  # could not run: input the pack rejected
    assert seen == [("invalid_input", "refusal.echo")]
