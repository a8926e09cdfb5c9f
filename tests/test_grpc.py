"""The wire: a real server on 127.0.0.1:0, raw gRPC stubs, statuses and rich details."""

from __future__ import annotations

import asyncio
import gc
import io
import json
import logging
import sys
import time
import types
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import orjson
import pytest
import testpacks
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from server_support import ServerThread, load_test_packs

from control_plane._features.grpc import status as wire
from control_plane._features.grpc.server import (
    SERVICE_NAME,
    JsonFormatter,
    KeyValueFormatter,
    create_server,
    deadline_budget,
)
from control_plane._kernel.vocabulary import BASELINE
from control_plane._runtime.runtime import RuntimeConfig, build_runtime
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

INVOKE = "/control_plane.v1.ControlPlaneService/InvokePack"


@pytest.fixture
def channel(server: ServerThread) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.target) as ch:
        yield ch


@pytest.fixture
def stub(channel: grpc.Channel) -> pb_grpc.ControlPlaneServiceStub:
    return pb_grpc.ControlPlaneServiceStub(channel)


def invoke(stub: Any, pack: str, doc: Any = None, **kwargs: Any) -> pb.InvokePackResponse:
    raw = b"" if doc is None else orjson.dumps(doc)
    return stub.InvokePack(pb.InvokePackRequest(pack=pack, input=raw, **kwargs), timeout=10)


def failure(stub: Any, pack: str, doc: Any = None, **kwargs: Any) -> grpc.RpcError:
    timeout = kwargs.pop("timeout", 10)
    raw = b"" if doc is None else orjson.dumps(doc)
    with pytest.raises(grpc.RpcError) as info:
        stub.InvokePack(pb.InvokePackRequest(pack=pack, input=raw, **kwargs), timeout=timeout)
    return info.value


def rich(err: grpc.RpcError) -> dict[str, Any]:
    """Decode the status details of a failed call."""
    raw = dict(err.trailing_metadata())[wire.DETAILS_KEY]
    status = status_pb2.Status.FromString(raw)
    assert status.code == err.code().value[0]
    assert status.message == err.details()
    out: dict[str, Any] = {"status": status, "types": []}
    for detail in status.details:
        for name, cls in (
            ("error_info", error_details_pb2.ErrorInfo),
            ("retry_info", error_details_pb2.RetryInfo),
            ("bad_request", error_details_pb2.BadRequest),
            ("pack_error", pb.PackError),
        ):
            if detail.Is(cls.DESCRIPTOR):
                msg = cls()
                detail.Unpack(msg)
                out[name] = msg
                out["types"].append(name)
    return out


# -- success ---------------------------------------------------------------------------


@pytest.mark.parametrize("pack", ["test.echo", "test.sync_echo"])
def test_success_returns_result_bytes_version_and_request_id(stub: Any, pack: str) -> None:
    reply, call = stub.InvokePack.with_call(
        pb.InvokePackRequest(pack=pack, input=b'{"n": 12345678901234567890}', request_id="r-1"),
        timeout=10,
    )
    assert call.code() == grpc.StatusCode.OK
    assert reply.pack == pack
    assert reply.pack_version == "1.0.0"
    assert reply.request_id == "r-1"
    assert not reply.HasField("validation")
    # Integers keep their precision: JSON bytes, not Struct.
    assert json.loads(reply.result) == {"echo": {"n": 12345678901234567890}, "request_id": "r-1"}


def test_empty_input_means_empty_object(stub: Any) -> None:
    reply = invoke(stub, "test.echo")
    assert orjson.loads(reply.result)["echo"] == {}
    assert len(reply.request_id) == 32


def test_list_packs_reports_packs_and_load_failures(stub: Any) -> None:
    reply = stub.ListPacks(pb.ListPacksRequest(), timeout=10)
    names = [p.name for p in reply.packs]
    assert names == sorted(names)
    assert "test.fail" in names
    fail = next(p for p in reply.packs if p.name == "test.fail")
    assert fail.version == "2.1.0"
    # not_permitted, the refusal by grant, is every pack's and comes last.
    assert list(fail.codes)[-3:] == ["quota_exceeded", "dependency_missing", "not_permitted"]
    assert "internal_error" in fail.codes
    assert fail.plugin == "testpacks"
    assert [(f.plugin, "broken on purpose" in f.reason) for f in reply.load_failures] == [
        ("broken_plugin", True)
    ]


def test_describe_pack_has_effective_schemas_and_vocabulary(stub: Any) -> None:
    reply = stub.DescribePack(pb.DescribePackRequest(name="test.fail"), timeout=10)
    output = orjson.loads(reply.output_schema)
    assert "internal_error" in output["properties"]["error"]["properties"]["code"]["enum"]
    assert orjson.loads(reply.input_schema)["required"] == ["code"]
    vocab = {e.code: e for e in reply.vocabulary}
    assert list(vocab) == [*testpacks.FAIL_CODES, "not_permitted"]
    assert vocab["auth_failed"].grpc_status == "PERMISSION_DENIED"
    assert vocab["auth_failed"].baseline
    assert vocab["rate_limited"].retryable
    assert vocab["rate_limited"].recovery_hint == BASELINE["rate_limited"].recovery_hint
    assert vocab["quota_exceeded"].grpc_status == "UNAVAILABLE"
    assert vocab["quota_exceeded"].retryable and not vocab["quota_exceeded"].baseline
    assert vocab["dependency_missing"].grpc_status == "FAILED_PRECONDITION"
    assert list(vocab["dependency_missing"].absorbs) == ["not_found"]
    assert vocab["dependency_missing"].recovery_hint == "install the tool"

    findings = stub.DescribePack(pb.DescribePackRequest(name="test.findings"), timeout=10)
    assert findings.validates
    assert [e.code for e in findings.vocabulary][-1] == "artifact_failed"
    assert "validation" in orjson.loads(findings.output_schema)["properties"]


def test_describe_unknown_pack_is_not_found(stub: Any) -> None:
    with pytest.raises(grpc.RpcError) as info:
        stub.DescribePack(pb.DescribePackRequest(name="no.such"), timeout=10)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    details = rich(info.value)
    assert details["error_info"].reason == "UNKNOWN_PACK"
    assert details["error_info"].metadata["pack"] == "no.such"


# -- each code, with its rich status ---------------------------------------------------


@pytest.mark.parametrize("code", testpacks.BASELINE_CODES)
def test_each_baseline_code_has_its_status_and_rich_details(stub: Any, code: str) -> None:
    err = failure(stub, "test.fail", {"code": code}, request_id=f"req-{code}")
    assert err.code() == wire.STATUS_BY_CODE[code]
    assert err.code().name == BASELINE[code].grpc_status
    assert err.details().startswith(f"{code}: ")
    details = rich(err)
    info = details["error_info"]
    assert info.reason == code.upper()
    assert info.domain == "test.fail"
    assert info.metadata["code"] == code
    assert info.metadata["request_id"] == f"req-{code}"
    assert info.metadata["retryable"] == ("true" if BASELINE[code].retryable else "false")
    env = details["pack_error"]
    assert env.code == code
    assert env.retryable == BASELINE[code].retryable
    assert env.recovery_hint == BASELINE[code].recovery_hint
    assert env.pack == "test.fail"
    assert env.pack_version == "2.1.0"
    assert env.request_id == f"req-{code}"
    assert details["types"][0] == "error_info"
    assert details["types"][-1] == "pack_error"
    if code == "rate_limited":
        assert details["retry_info"].retry_delay.seconds == 2
        assert details["retry_info"].retry_delay.nanos == 500_000_000
        assert env.retry_after == 2.5
    else:
        assert "retry_info" not in details
        assert not env.HasField("retry_after")
    if code == "schema_mismatch":
        assert env.partial
        partial = orjson.loads(env.partial_result)
        assert partial["kept"] == 1
        assert testpacks.SECRET not in partial["note"]
    if code == "internal_error":
        assert env.reference_id.startswith("ref_")
        assert info.metadata["reference_id"] == env.reference_id
        assert env.detail and env.origin == "control_plane"
    else:
        assert "reference_id" not in info.metadata


def test_auth_failed_is_never_unauthenticated(stub: Any) -> None:
    err = failure(stub, "test.fail", {"code": "auth_failed"})
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    statuses = set(wire.STATUS_BY_CODE.values()) | {
        wire.status_for("any_pack_code", flag) for flag in (True, False)
    }
    assert grpc.StatusCode.UNAUTHENTICATED not in statuses
    with pytest.raises(ValueError, match="reserved"):
        wire.grpc_status("UNAUTHENTICATED")


@pytest.mark.parametrize(
    ("code", "status", "retryable"),
    [
        ("quota_exceeded", grpc.StatusCode.UNAVAILABLE, True),
        ("dependency_missing", grpc.StatusCode.FAILED_PRECONDITION, False),
    ],
)
def test_pack_codes_use_the_documented_default(
    stub: Any, code: str, status: grpc.StatusCode, retryable: bool
) -> None:
    err = failure(stub, "test.fail", {"code": code})
    assert err.code() == status
    details = rich(err)
    assert details["error_info"].reason == code.upper()
    assert details["pack_error"].code == code
    assert details["pack_error"].retryable is retryable


def test_undeclared_code_becomes_internal_error(server: ServerThread, stub: Any) -> None:
    err = failure(stub, "test.undeclared", {})
    assert err.code() == grpc.StatusCode.INTERNAL
    assert rich(err)["pack_error"].code == "internal_error"
    assert server.server is not None
    assert server.server.invoker.contract_violations["test.undeclared"] == 1


# -- validation and strict mode --------------------------------------------------------

CHECKS = [
    {"id": "a.pass", "severity": "pass", "message": "fine"},
    {"id": "b.warn", "severity": "warn", "message": "loud", "expected": -14, "actual": -12},
    {"id": "c.fail", "severity": "fail", "message": "broken", "location": "/streams/0"},
]


def test_findings_are_data_without_strict(stub: Any) -> None:
    reply = invoke(stub, "test.findings", {"checks": CHECKS})
    assert orjson.loads(reply.result) == {"checked": 3}
    assert reply.validation.status == pb.SEVERITY_FAIL
    checks = list(reply.validation.checks)
    assert [c.id for c in checks] == ["a.pass", "b.warn", "c.fail"]
    assert [c.severity for c in checks] == [pb.SEVERITY_PASS, pb.SEVERITY_WARN, pb.SEVERITY_FAIL]
    assert orjson.loads(checks[1].expected) == -14
    assert orjson.loads(checks[1].actual) == -12
    assert checks[2].location == "/streams/0"
    assert checks[0].expected == b""


def test_strict_turns_fail_findings_into_artifact_failed(stub: Any) -> None:
    err = failure(stub, "test.findings", {"checks": CHECKS}, strict=True)
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    details = rich(err)
    assert details["error_info"].reason == "ARTIFACT_FAILED"
    env = details["pack_error"]
    assert env.code == "artifact_failed"
    assert [(c.id, c.severity) for c in env.checks] == [("c.fail", pb.SEVERITY_FAIL)]
    # Every finding still travels, warnings included.
    assert [c.id for c in env.validation.checks] == ["a.pass", "b.warn", "c.fail"]


def test_strict_fail_on_warn(stub: Any) -> None:
    warn_only = CHECKS[:2]
    assert invoke(stub, "test.findings", {"checks": warn_only}, strict=True).validation.status == (
        pb.SEVERITY_WARN
    )
    err = failure(
        stub, "test.findings", {"checks": warn_only}, strict=True, fail_on=pb.FAIL_ON_WARN
    )
    env = rich(err)["pack_error"]
    assert [(c.id, c.severity) for c in env.checks] == [("b.warn", pb.SEVERITY_WARN)]


# -- refused requests ------------------------------------------------------------------


def test_invalid_input_has_field_violations(stub: Any) -> None:
    err = failure(stub, "test.strict_input", {"name": 7, "extra": True}, request_id="bad-1")
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = rich(err)
    assert details["error_info"].reason == "INVALID_INPUT"
    assert details["error_info"].domain == wire.REJECTION_DOMAIN
    assert details["error_info"].metadata["pack"] == "test.strict_input"
    assert details["error_info"].metadata["request_id"] == "bad-1"
    fields = {v.field for v in details["bad_request"].field_violations}
    assert "/name" in fields
    assert "" in fields  # the missing required "count" is a violation of the root
    assert "pack_error" not in details


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b"null"])
def test_input_that_is_not_a_json_object_is_invalid(stub: Any, raw: bytes) -> None:
    with pytest.raises(grpc.RpcError) as info:
        stub.InvokePack(pb.InvokePackRequest(pack="test.echo", input=raw), timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert rich(info.value)["bad_request"].field_violations[0].field == ""


def test_unknown_pack_is_not_found_without_a_pack_error(stub: Any) -> None:
    err = failure(stub, "no.such.pack", {})
    assert err.code() == grpc.StatusCode.NOT_FOUND
    details = rich(err)
    assert details["types"] == ["error_info", "bad_request"]  # the field: `pack`
    assert details["bad_request"].field_violations[0].field == "pack"
    assert details["error_info"].reason == "UNKNOWN_PACK"
    assert "test.echo" in err.details()


# -- deadlines -------------------------------------------------------------------------


@pytest.mark.parametrize("pack", ["test.hang", "test.hang_async"])
def test_deadline_expiry_becomes_timeout(stub: Any, pack: str) -> None:
    started = time.monotonic()
    err = failure(stub, pack, {"seconds": 30}, timeout=0.6)
    assert time.monotonic() - started < 2
    assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    details = rich(err)
    assert details["error_info"].reason == "TIMEOUT"
    assert details["pack_error"].code == "timeout"
    assert details["pack_error"].retryable


def test_deadline_budget_leaves_a_margin() -> None:
    assert deadline_budget(None) is None
    assert deadline_budget(1.0) == pytest.approx(0.9)
    assert deadline_budget(60.0) == pytest.approx(59.75)
    assert deadline_budget(0.05) == pytest.approx(0.04)
    assert deadline_budget(0.0) == 0.0


def test_sync_handlers_run_in_parallel_threads(server: ServerThread) -> None:
    def one(_: int) -> bytes:
        with grpc.insecure_channel(server.target) as ch:
            return bytes(
                invoke(pb_grpc.ControlPlaneServiceStub(ch), "test.hang", {"seconds": 0.4}).result
            )

    started = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, range(4)))
    assert all(orjson.loads(r) == {"slept": True} for r in results)
    assert time.monotonic() - started < 1.5


async def test_async_handlers_run_concurrently_on_the_loop(aio_server: Any) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{aio_server.port}") as ch:
        stub = pb_grpc.ControlPlaneServiceStub(ch)
        started = time.monotonic()
        replies = await asyncio.gather(
            *(
                stub.InvokePack(
                    pb.InvokePackRequest(pack="test.hang_async", input=b'{"seconds": 0.3}'),
                    timeout=5,
                )
                for _ in range(20)
            )
        )
        assert time.monotonic() - started < 1.5
    assert all(orjson.loads(r.result) == {"slept": True} for r in replies)


# -- secrets ---------------------------------------------------------------------------


def _received_bytes(channel: grpc.Channel, pack: str, doc: Any) -> tuple[bytes, bytes]:
    """Every byte the caller receives for one call (body, metadata, status), and the details."""
    raw_call = channel.unary_unary(INVOKE)  # no deserializer: raw bytes
    request = pb.InvokePackRequest(pack=pack, input=orjson.dumps(doc)).SerializeToString()
    chunks: list[bytes] = []
    details = b""
    try:
        body, call = raw_call.with_call(request, timeout=10)
        chunks.append(body)
    except grpc.RpcError as exc:
        call = exc
        chunks.append(exc.details().encode())
        chunks.append(exc.debug_error_string().encode())
    for key, value in [*(call.initial_metadata() or ()), *(call.trailing_metadata() or ())]:
        raw = value if isinstance(value, bytes) else value.encode()
        chunks.extend((key.encode(), raw))
        if key == wire.DETAILS_KEY:
            details = raw
    return b"\n".join(chunks), details


@pytest.mark.parametrize("mode", ["internal", "network", "typed", "partial"])
def test_a_secret_in_a_handler_exception_never_reaches_the_caller(
    server: ServerThread, channel: grpc.Channel, mode: str
) -> None:
    received, details = _received_bytes(channel, "test.leak", {"mode": mode})
    assert details
    assert testpacks.SECRET.encode() not in received
    # Nor inside any decoded field of the details (e.g. the partial result's JSON).
    status = status_pb2.Status.FromString(details)
    envelopes = []
    for detail in status.details:
        if detail.Is(pb.PackError.DESCRIPTOR):
            env = pb.PackError()
            detail.Unpack(env)
            envelopes.append(env)
    assert len(envelopes) == 1
    env = envelopes[0]
    assert testpacks.SECRET not in str(env)
    assert testpacks.SECRET.encode() not in env.partial_result
    expected = {"internal": "internal_error", "network": "network_error"}
    assert env.code == expected.get(mode, {"typed": "network_error"}.get(mode, "schema_mismatch"))
    if mode == "internal":
        assert server.server is not None
        incident = server.server.invoker.incidents.get(env.reference_id)
        assert incident is not None and incident.pack == "test.leak"
    else:
        assert "[REDACTED]" in env.message


# -- health, reflection, limits --------------------------------------------------------


def test_health_overall_service_and_per_pack(channel: grpc.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    serving = health_pb2.HealthCheckResponse.SERVING
    for service in ("", SERVICE_NAME, "test.echo", "test.fail"):
        reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        assert reply.status == serving, service
    with pytest.raises(grpc.RpcError) as info:
        health.Check(health_pb2.HealthCheckRequest(service="no.such"), timeout=5)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_reflection_lists_the_service(channel: grpc.Channel) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    replies = list(
        stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
        )
    )
    names = {s.name for s in replies[0].list_services_response.service}
    assert {SERVICE_NAME, "grpc.health.v1.Health"} <= names


def test_max_message_size_is_enforced_both_ways() -> None:
    srv = ServerThread(load_test_packs(), max_message_bytes=64 * 1024).start()
    try:
        with grpc.insecure_channel(
            srv.target, options=[("grpc.max_receive_message_length", 1 << 24)]
        ) as ch:
            stub = pb_grpc.ControlPlaneServiceStub(ch)
            assert len(invoke(stub, "test.big", {"size": 1000}).result) > 1000
            err = failure(stub, "test.big", {"size": 100_000})
            assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "maximum message size of 65536 bytes" in err.details()
            assert "--max-message-bytes" in err.details()
            err = failure(stub, "test.echo", {"blob": "y" * 100_000})
            assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "65536" in err.details()
    finally:
        srv.stop()


# -- logs ------------------------------------------------------------------------------


def test_failed_calls_are_logged_with_ids(stub: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="capability_packs")
    err = failure(stub, "test.fail", {"code": "internal_error"}, request_id="log-1")
    ref = rich(err)["pack_error"].reference_id
    records = [r for r in caplog.records if getattr(r, "event", None) == "failed"]
    assert records, caplog.text
    record = records[-1]
    assert record.request_id == "log-1"  # type: ignore[attr-defined]
    assert record.pack == "test.fail"  # type: ignore[attr-defined]
    assert record.code == "internal_error"  # type: ignore[attr-defined]
    assert record.reference_id == ref  # type: ignore[attr-defined]
    assert record.status == "INTERNAL"  # type: ignore[attr-defined]

    line = json.loads(JsonFormatter().format(record))
    assert {"request_id", "pack", "code", "reference_id", "status", "elapsed_ms"} <= set(line)
    kv = KeyValueFormatter().format(record)
    assert "request_id=log-1" in kv and f"reference_id={ref}" in kv
    assert testpacks.SECRET not in caplog.text


def test_configured_json_logs(stub: Any) -> None:
    from control_plane._features.grpc.server import configure_logging

    stream = io.StringIO()
    configure_logging("json", "debug", stream)
    try:
        invoke(stub, "test.echo", {}, request_id="ok-1")
        failure(stub, "test.fail", {"code": "not_found"}, request_id="nf-1")
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and "nf-1" not in stream.getvalue():
            time.sleep(0.01)
    finally:
        root = logging.getLogger("capability_packs")
        for handler in list(root.handlers):
            root.removeHandler(handler)
        root.setLevel(logging.NOTSET)
        root.propagate = True
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    by_rid = {line.get("request_id"): line for line in lines}
    assert "code" not in by_rid["ok-1"]
    assert by_rid["ok-1"]["status"] == "OK"
    assert by_rid["nf-1"]["code"] == "not_found"
    assert by_rid["nf-1"]["status"] == "NOT_FOUND"


class _Hostile:
    """Collected with an error in ``__del__`` and a ``__repr__`` that raises SystemExit."""

    def __repr__(self) -> str:
        raise SystemExit(f"repr {testpacks.SECRET_TEXTS[0]}")

    def __del__(self) -> None:
        raise RuntimeError(f"finalizer failed: {testpacks.SECRET_TEXTS[1]}")


def test_unraisable_exceptions_and_warnings_print_scrubbed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What Python can only report (a failing ``__del__``; gRPC's Cython layer reports the
    same way) and ``warnings.warn`` went to stderr raw, bypassing the log formatters."""
    import threading
    import warnings

    from control_plane._features.grpc.server import configure_logging

    for name in ("unraisablehook", "excepthook"):
        monkeypatch.setattr(sys, name, getattr(sys, name))
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    stream = io.StringIO()
    logging.captureWarnings(False)  # as in a fresh process (pytest records warnings itself)
    configure_logging("json", "info", stream)
    try:
        hostile = _Hostile()
        del hostile
        gc.collect()
        # A report whose object's repr raises (the hook reads only these attributes).
        sys.unraisablehook(
            types.SimpleNamespace(  # type: ignore[arg-type]
                exc_type=RuntimeError,
                exc_value=RuntimeError(f"callback failed: {testpacks.SECRET_TEXTS[0]}"),
                exc_traceback=None,
                err_msg=None,
                object=_Hostile.__new__(_Hostile),
            )
        )
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.warn(f"deprecated: {testpacks.SECRET_TEXTS[2]}", RuntimeWarning, stacklevel=1)
    finally:
        logging.captureWarnings(False)
        root = logging.getLogger("capability_packs")
        for handler in list(root.handlers):
            root.removeHandler(handler)
        root.setLevel(logging.NOTSET)
        root.propagate = True
    text = stream.getvalue()
    assert "Exception ignored in: <function _Hostile.__del__" in text
    assert "Exception ignored in: <unprintable _Hostile>" in text
    assert "finalizer failed: " in text and "deprecated: " in text and "callback failed" in text
    assert "[REDACTED" in text
    assert testpacks.SECRET not in text


async def test_create_server_binds_an_ephemeral_port(load: Any) -> None:
    srv, port = create_server("127.0.0.1:0", build_runtime(RuntimeConfig(), load=load))
    assert port > 0 and srv.port == port
    await srv.start()
    await srv.stop(None)
    srv.runtime.close()


def test_a_rejected_pack_is_reported_and_not_serving() -> None:
    from control_plane import Pack, hookimpl
    from control_plane._runtime.plugins import load_registry

    open_vocabulary = {
        "type": "object",
        "properties": {"error": {"type": "object", "properties": {"code": {"type": "string"}}}},
    }

    class OpenPlugin:
        @hookimpl
        def register_packs(self, register: Any) -> None:
            register(
                Pack("bad.open", "1.0.0", "Open codes.", {"type": "object"}, open_vocabulary, noop)
            )

    def noop(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {}

    load = load_registry(
        builtins=False, entry_points_=False, extra=[("acme.open", OpenPlugin()), testpacks]
    )
    srv = ServerThread(load, max_workers=2).start()
    try:
        with grpc.insecure_channel(srv.target) as channel:
            stub = pb_grpc.ControlPlaneServiceStub(channel)
            reply = stub.ListPacks(pb.ListPacksRequest(), timeout=10)
            assert "bad.open" not in [p.name for p in reply.packs]
            assert "test.echo" in [p.name for p in reply.packs], "the other plugin still loads"
            [failure] = reply.load_failures
            assert (failure.plugin, failure.pack) == ("acme.open", "bad.open")
            assert "open vocabulary" in failure.reason
            health = health_pb2_grpc.HealthStub(channel)
            check = health_pb2.HealthCheckRequest
            assert health.Check(check(service="bad.open"), timeout=5).status == (
                health_pb2.HealthCheckResponse.NOT_SERVING
            )
            assert health.Check(check(service="test.echo"), timeout=5).status == (
                health_pb2.HealthCheckResponse.SERVING
            )
            err = failure_of(stub, "bad.open")
            assert err.code() == grpc.StatusCode.NOT_FOUND
    finally:
        srv.stop()


def failure_of(stub: Any, pack: str) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        stub.InvokePack(pb.InvokePackRequest(pack=pack, input=b"{}"), timeout=10)
    return info.value
