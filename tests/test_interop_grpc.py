"""gRPC retries any gRPC library understands, and one shape for every failure.

* A stock Node.js caller (``@grpc/grpc-js`` + ``@grpc/proto-loader``, installed
  project-locally under ``tests/node`` by ``.ci/run``) with the service config of
  docs/grpc.md retries a ``rate_limited`` pack after ``grpc-retry-pushback-ms``, retries a
  retryable code up to ``maxAttempts``, and never retries a permanent failure that shares
  a retryable status (a result over the message size: ``RESOURCE_EXHAUSTED`` with
  pushback ``-1``).
* Every kind of failure a caller can receive -- each baseline code, pack codes, a contract
  violation, and each refusal (unknown pack, invalid input, input too large, overload,
  unauthenticated, result too large) -- carries ``code`` and ``retryable`` in
  ``ErrorInfo.metadata``, and its pushback agrees with ``retryable``.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import testpacks
from google.rpc import error_details_pb2, status_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from server_support import ROOT, ServerThread

from control_plane import Context, Pack, PackError, Reach, hookimpl
from control_plane._features.grpc import status as wire
from control_plane._features.grpc.admission import AdmissionLimits
from control_plane._features.grpc.auth import TokenAuth
from control_plane._kernel.outcome import Outcome
from control_plane._runtime.plugins import LoadResult, load_registry
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

pytestmark = pytest.mark.system  # docs/setup.md, Test tiers

NODE_DIR = ROOT / "tests" / "node"
PROTO_DIR = ROOT / "proto"
TOKEN = "interop-token-0123456789abcdef"

OPEN: dict[str, Any] = {"type": "object"}


def _schema(codes: list[str]) -> dict[str, Any]:
    return testpacks.output_schema(codes, attempts={"type": "integer"})


class Attempts:
    """What the interop packs saw: per request id, (event, monotonic time) pairs."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.log: dict[str, list[tuple[str, float]]] = {}

    def add(self, request_id: str, event: str) -> int:
        with self.lock:
            entries = self.log.setdefault(request_id, [])
            entries.append((event, time.monotonic()))
            return sum(1 for e, _ in entries if e == "start")

    def events(self, request_id: str) -> list[tuple[str, float]]:
        with self.lock:
            return list(self.log.get(request_id, []))


ATTEMPTS = Attempts()


def throttled(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """``rate_limited`` (``retry_after``) on the first attempt per request id, then ok."""
    n = ATTEMPTS.add(ctx.request_id, "start")
    if n == 1:
        ATTEMPTS.add(ctx.request_id, "failed")
        raise PackError("rate_limited", "slow down", retry_after=float(doc["retry_after"]))
    return {"attempts": n}


def down(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Always a retryable ``network_error`` (no retry_after): the client's backoff applies."""
    ATTEMPTS.add(ctx.request_id, "start")
    raise PackError("network_error", "downstream unreachable")


def big(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """A result over the server's maximum message size."""
    ATTEMPTS.add(ctx.request_id, "start")
    return {"blob": "x" * 200_000}


def slow(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Hold an admission slot until ``RELEASE`` is set (bounded)."""
    HELD.set()
    RELEASE.wait(20)
    return {"attempts": 1}


RELEASE = threading.Event()
HELD = threading.Event()


class InteropPlugin:
    @hookimpl
    def register_packs(self, register: Any) -> None:
        register(
            Pack(
                "interop.throttled",
                "1.0.0",
                "Throttle once.",
                OPEN,
                _schema(["rate_limited"]),
                throttled,
                reach=Reach(),
            )
        )
        register(
            Pack(
                "interop.down",
                "1.0.0",
                "Down.",
                OPEN,
                _schema(["network_error"]),
                down,
                reach=Reach(),
            )
        )
        register(
            Pack("interop.big", "1.0.0", "Big.", OPEN, _schema(["timeout"]), big, reach=Reach())
        )
        register(
            Pack("interop.slow", "1.0.0", "Slow.", OPEN, _schema(["timeout"]), slow, reach=Reach())
        )


def _load() -> LoadResult:
    return load_registry(
        builtins=False,
        entry_points_=False,
        extra=[testpacks, ("interop", InteropPlugin())],
    )


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    srv = ServerThread(_load(), max_message_bytes=64 * 1024).start()
    yield srv
    srv.stop()


def _node_ready() -> Path:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed (.ci/run installs nodejs)")
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.fail("tests/node has no node_modules: run `(cd tests/node && npm ci)` (.ci/run)")
    return Path(node)


def _node_call(
    target: str, config: dict[str, Any], pack: str, doc: dict[str, Any], request_id: str
) -> dict[str, Any]:
    node = _node_ready()
    proc = subprocess.run(
        [
            str(node),
            str(NODE_DIR / "retry_client.js"),
            target,
            str(PROTO_DIR),
            json.dumps(config),
            pack,
            json.dumps(doc),
            request_id,
        ],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def _fast_backoff(max_attempts: int = 5) -> dict[str, Any]:
    """The documented config, with a client backoff far below the pushback under test."""
    config = wire.service_config(max_attempts=max_attempts)
    policy = config["methodConfig"][0]["retryPolicy"]
    policy["initialBackoff"] = "0.01s"
    policy["maxBackoff"] = "0.01s"
    return config


def test_documented_service_config_is_the_generated_one() -> None:
    text = (ROOT / "docs" / "grpc.md").read_text()
    block = re.search(r"<!-- service-config -->\n```json\n(.*?)```", text, re.S)
    assert block is not None, "docs/grpc.md lost its service config block"
    assert json.loads(block.group(1)) == wire.service_config()
    policy = wire.service_config()["methodConfig"][0]["retryPolicy"]
    assert set(policy["retryableStatusCodes"]) == {
        "RESOURCE_EXHAUSTED",
        "DEADLINE_EXCEEDED",
        "UNAVAILABLE",
    }


def test_node_client_retries_rate_limited_after_the_pushback(server: ServerThread) -> None:
    out = _node_call(
        server.target, _fast_backoff(), "interop.throttled", {"retry_after": 0.6}, "node-throttled"
    )
    assert out == {"ok": True, "result": {"attempts": 2}}, out
    events = ATTEMPTS.events("node-throttled")
    assert [e for e, _ in events] == ["start", "failed", "start"]
    # The client's own backoff is <= 10 ms: a second attempt 600 ms later is the pushback.
    assert events[2][1] - events[1][1] >= 0.6


def test_node_client_retries_a_retryable_code_up_to_max_attempts(server: ServerThread) -> None:
    out = _node_call(server.target, _fast_backoff(3), "interop.down", {}, "node-down")
    assert out["ok"] is False and out["code"] == "UNAVAILABLE", out
    assert [e for e, _ in ATTEMPTS.events("node-down")] == ["start"] * 3


def test_node_client_does_not_retry_a_permanent_resource_exhausted(server: ServerThread) -> None:
    """RESOURCE_EXHAUSTED is retryable for rate_limited and overload, not for a result
    over the size limit: its pushback of -1 stops every gRPC retry policy."""
    out = _node_call(server.target, _fast_backoff(), "interop.big", {}, "node-big")
    assert out["ok"] is False and out["code"] == "RESOURCE_EXHAUSTED", out
    assert [e for e, _ in ATTEMPTS.events("node-big")] == ["start"]


def test_node_client_does_not_retry_a_permanent_code(server: ServerThread) -> None:
    out = _node_call(server.target, _fast_backoff(), "test.fail", {"code": "not_found"}, "n-nf")
    assert out["ok"] is False and out["code"] == "NOT_FOUND", out


# -- every failure kind: code and retryable in ErrorInfo.metadata ---------------------------


def _failure(
    target: str,
    pack: str,
    doc: dict[str, Any] | bytes,
    *,
    token: str | None = TOKEN,
    request_id: str = "walk",
) -> tuple[grpc.StatusCode, error_details_pb2.ErrorInfo, str | None]:
    raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    with grpc.insecure_channel(target) as channel:
        stub = pb_grpc.ControlPlaneServiceStub(channel)
        metadata = [("authorization", f"Bearer {token}")] if token else None
        with pytest.raises(grpc.RpcError) as info:
            stub.InvokePack(
                pb.InvokePackRequest(pack=pack, input=raw, request_id=request_id),
                metadata=metadata,
                timeout=20,
            )
    err = info.value
    trailers = dict(err.trailing_metadata() or ())
    rich = status_pb2.Status.FromString(trailers[wire.DETAILS_KEY])
    found = [d for d in rich.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
    assert len(found) == 1, rich
    error_info = error_details_pb2.ErrorInfo()
    found[0].Unpack(error_info)
    pushback = trailers.get(wire.PUSHBACK_KEY)
    return err.code(), error_info, pushback if pushback is None else str(pushback)


BASELINE_RETRYABLE = {"rate_limited": True, "timeout": True, "network_error": True}


def test_every_failure_kind_carries_code_and_retryable() -> None:
    """Walk every failure a caller can receive; each has code + retryable, and the
    pushback trailer agrees with retryable (-1 exactly when not retryable)."""
    load = _load()
    plain = ServerThread(load, max_message_bytes=64 * 1024, max_input_bytes=4096).start()
    guarded = ServerThread(
        _load(), limits=AdmissionLimits(per_pack={"interop.slow": 1}, retry_after=0.25)
    ).start()
    locked = ServerThread(_load(), auth=TokenAuth([TOKEN])).start()
    seen: dict[str, tuple[grpc.StatusCode, dict[str, str], str | None]] = {}
    try:
        for code in [*testpacks.BASELINE_CODES, "quota_exceeded", "dependency_missing"]:
            if code == "artifact_failed":
                continue  # strict mode below
            status, info, pushback = _failure(plain.target, "test.fail", {"code": code})
            seen[f"pack:{code}"] = (status, dict(info.metadata), pushback)
        status, info, pushback = _failure(
            plain.target, "test.undeclared", {}, request_id="violation"
        )
        seen["contract_violation"] = (status, dict(info.metadata), pushback)
        with grpc.insecure_channel(plain.target) as channel:
            stub = pb_grpc.ControlPlaneServiceStub(channel)
            with pytest.raises(grpc.RpcError) as strict:
                stub.InvokePack(
                    pb.InvokePackRequest(
                        pack="test.findings",
                        input=json.dumps({"checks": [{"id": "c1", "severity": "fail"}]}).encode(),
                        strict=True,
                    ),
                    timeout=20,
                )
        trailers = dict(strict.value.trailing_metadata() or ())
        rich = status_pb2.Status.FromString(trailers[wire.DETAILS_KEY])
        artifact = error_details_pb2.ErrorInfo()
        rich.details[0].Unpack(artifact)
        seen["pack:artifact_failed"] = (
            strict.value.code(),
            dict(artifact.metadata),
            trailers.get(wire.PUSHBACK_KEY),
        )
        for kind, (pack, doc) in {
            "unknown_pack": ("no.such.pack", {}),
            "invalid_input": ("test.strict_input", {"name": 1}),
            "not_json": ("test.echo", b"{not json"),
            "input_too_large": ("test.echo", {"pad": "x" * 8192}),
            "result_too_large": ("interop.big", {}),
        }.items():
            status, info, pushback = _failure(plain.target, pack, doc)
            seen[kind] = (status, dict(info.metadata), pushback)
        status, info, pushback = _failure(locked.target, "test.echo", {}, token=None)
        seen["unauthenticated"] = (status, dict(info.metadata), pushback)
        status, info, pushback = _failure(locked.target, "test.echo", {}, token="x" * 32)
        seen["bad_token"] = (status, dict(info.metadata), pushback)
        # overload: one call holds the only slot of interop.slow
        RELEASE.clear()
        HELD.clear()
        with grpc.insecure_channel(guarded.target) as channel:
            stub = pb_grpc.ControlPlaneServiceStub(channel)
            holder = stub.InvokePack.future(
                pb.InvokePackRequest(pack="interop.slow", input=b"{}"), timeout=30
            )
            try:
                assert HELD.wait(20), "the holder never started"
                with pytest.raises(grpc.RpcError) as refused:
                    stub.InvokePack(
                        pb.InvokePackRequest(pack="interop.slow", input=b"{}"), timeout=20
                    )
                exc = refused.value
                tr = dict(exc.trailing_metadata() or ())
                r = status_pb2.Status.FromString(tr[wire.DETAILS_KEY])
                ei = error_details_pb2.ErrorInfo()
                r.details[0].Unpack(ei)
                seen["overloaded"] = (exc.code(), dict(ei.metadata), tr.get(wire.PUSHBACK_KEY))
            finally:
                RELEASE.set()
                holder.result(30)
    finally:
        RELEASE.set()
        for srv in (plain, guarded, locked):
            srv.stop()

    expected_kinds = {
        *(f"pack:{c}" for c in testpacks.BASELINE_CODES),
        "pack:artifact_failed",
        "pack:quota_exceeded",
        "pack:dependency_missing",
        "contract_violation",
        "unknown_pack",
        "invalid_input",
        "not_json",
        "input_too_large",
        "result_too_large",
        "unauthenticated",
        "bad_token",
        "overloaded",
    }
    assert set(seen) == expected_kinds
    for kind, (status, metadata, pushback) in seen.items():
        assert metadata.get("code"), (kind, metadata)
        assert metadata.get("retryable") in ("true", "false"), (kind, metadata)
        retryable = metadata["retryable"] == "true"
        if retryable:
            assert status in wire.RETRYABLE_STATUSES, (kind, status)
            assert pushback != wire.NO_RETRY_PUSHBACK, kind
        else:
            assert pushback == wire.NO_RETRY_PUSHBACK, (kind, pushback)
    # the codes themselves
    for code in testpacks.BASELINE_CODES:
        meta = seen[f"pack:{code}"][1]
        assert meta["code"] == code
        assert (meta["retryable"] == "true") == BASELINE_RETRYABLE.get(code, False)
    assert seen["pack:artifact_failed"][1]["code"] == "artifact_failed"
    assert seen["pack:quota_exceeded"][1]["retryable"] == "true"
    assert seen["pack:dependency_missing"][1]["retryable"] == "false"
    assert seen["contract_violation"][1]["code"] == "internal_error"
    assert seen["unknown_pack"][1]["code"] == "unknown_pack"
    assert seen["invalid_input"][1]["code"] == "invalid_input"
    assert seen["not_json"][1]["code"] == "invalid_input"
    assert seen["input_too_large"][1]["code"] == "invalid_input"
    assert seen["result_too_large"][1]["code"] == "result_too_large"
    assert seen["unauthenticated"][1]["code"] == "unauthenticated"
    assert seen["bad_token"][0] == grpc.StatusCode.UNAUTHENTICATED
    assert seen["overloaded"][1]["code"] == "overloaded"
    assert seen["overloaded"][1]["retryable"] == "true"
    # pushback of a retry_after is its milliseconds (test.fail: retry_after 2.5 s)
    assert seen["pack:rate_limited"][2] == "2500"
    assert seen["overloaded"][2] == "250"
    # retryable without retry_after: no pushback, the client's backoff applies
    assert seen["pack:network_error"][2] is None


@settings(max_examples=300, deadline=None)
@given(
    retry_after=st.one_of(
        st.none(),
        st.floats(min_value=0, max_value=86400, allow_nan=False),
        st.sampled_from([0.3, 0.1234567, 1e-9, 59.999999]),
    ),
    code=st.sampled_from(["rate_limited", "network_error", "not_found", "quota_exceeded"]),
)
def test_the_servers_pushback_is_the_one_the_status_says(
    retry_after: float | None, code: str
) -> None:
    """The server computes the pushback from the envelope (no parsing on the error path);
    it must equal what the rich status it sends says: ``RetryInfo``'s delay in
    milliseconds, ``-1`` when not retryable, none for a retryable failure without one."""
    retryable = code != "not_found"
    if code == "rate_limited" and retry_after is None:
        retry_after = 1.0
    env: dict[str, Any] = {
        "code": code,
        "message": "m",
        "retryable": retryable,
        "origin": "pack:p",
    }
    if retry_after is not None:
        env["retry_after"] = retry_after
    outcome = Outcome.model_validate({"pack": "p", "version": "1", "request_id": "r", "error": env})
    status = wire.encode_failure(outcome).status
    trailing = dict(status.trailing_metadata)
    rich = status_pb2.Status.FromString(trailing[wire.DETAILS_KEY])
    delays = [
        error_details_pb2.RetryInfo.FromString(d.value).retry_delay
        for d in rich.details
        if d.Is(error_details_pb2.RetryInfo.DESCRIPTOR)
    ]
    expected = (
        None if not delays else str(delays[0].seconds * 1000 + math.ceil(delays[0].nanos / 1e6))
    )
    assert trailing.get(wire.PUSHBACK_KEY) == (expected if retryable else wire.NO_RETRY_PUSHBACK)
