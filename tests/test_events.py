"""Error events: one structured, scrubbed, schema-valid event per failed invocation."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from control_plane import Check, PackError, Result, hookimpl, rate_limited, schema_mismatch
from control_plane._features.observability.events import (
    ErrorEvent,
    ErrorEvents,
    FileSink,
    StreamSink,
    correlation_from_metadata,
    correlation_scope,
    current_correlation,
)
from control_plane._kernel.errors import InvalidInput, RequestRejected, UnknownPack
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.pack import Pack
from control_plane._kernel.registry import Registry
from control_plane._runtime.plugins import load_registry

ROOT = Path(__file__).resolve().parent.parent
EVENT_SCHEMA = json.loads((ROOT / "schemas" / "error-event.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(
    EVENT_SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)

BASELINE_PACK_CODES = [
    "auth_failed",
    "rate_limited",
    "not_found",
    "timeout",
    "schema_mismatch",
    "network_error",
]
SECRET = "hunter2-planted-secret"


def _out(codes: list[str], **props: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            **props,
            "error": {"type": "object", "properties": {"code": {"enum": codes}}},
        },
    }


def _raise(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    code = doc["code"]
    if code == "ok":
        return {"ok": True}
    if code == "rate_limited":
        raise rate_limited(7, "slow down")
    if code == "schema_mismatch":
        raise schema_mismatch({"ok": True}, "bad field")
    if code == "secret":
        raise RuntimeError(f"db said: password={SECRET} for postgres://admin:{SECRET}@db/x")
    raise PackError(code, f"{code} happened")


async def _sleep(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    await asyncio.sleep(5)
    return {"ok": True}


def _checks(doc: dict[str, Any], ctx: Any) -> Result:
    return Result(
        {"ok": True},
        [Check("size", "pass", "fine"), Check("codec", "fail", "wrong codec", "h264", "vp9")],
    )


def make_invoker() -> Invoker:
    registry = Registry()
    registry.register(
        Pack(
            name="t.fail",
            version="1.2.3",
            summary="raises what it is told",
            input_schema={
                "type": "object",
                "properties": {"code": {"type": "string"}},
                "required": ["code"],
            },
            output_schema=_out(BASELINE_PACK_CODES, ok={"type": "boolean"}),
            handler=_raise,
        ),
        "tests",
    )
    registry.register(
        Pack(
            name="t.slow",
            version="0.1.0",
            summary="sleeps",
            input_schema={"type": "object"},
            output_schema=_out(["timeout"], ok={"type": "boolean"}),
            handler=_sleep,
        ),
        "tests",
    )
    registry.register(
        Pack(
            name="t.check",
            version="2.0.0",
            summary="returns findings",
            input_schema={"type": "object"},
            output_schema=_out(["not_found"], ok={"type": "boolean"}),
            handler=_checks,
            validates=True,
        ),
        "tests",
    )
    return Invoker(registry)


def read_events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_one_schema_valid_event_per_failure(tmp_path: Path) -> None:
    invoker = make_invoker()
    sink = FileSink(tmp_path / "events.jsonl")
    events = ErrorEvents([sink])
    invoker.hooks.register(events)
    codes = [*BASELINE_PACK_CODES, "undeclared_thing", "secret"]
    outcomes = {}
    for code in ["ok", *codes]:
        outcomes[code] = invoker.invoke_sync("t.fail", {"code": code}, request_id=f"rq-{code}")
    outcomes["deadline"] = invoker.invoke_sync("t.slow", {}, request_id="rq-slow", timeout=0.05)
    outcomes["strict"] = invoker.invoke_sync("t.check", {}, request_id="rq-strict", strict=True)
    outcomes["lenient"] = invoker.invoke_sync("t.check", {}, request_id="rq-lenient")
    sink.close()
    invoker.close()

    lines = read_events(tmp_path / "events.jsonl")
    failed = {k: o for k, o in outcomes.items() if not o.ok}
    assert len(lines) == len(failed) == len(codes) + 2
    by_request = {line["request_id"]: line for line in lines}
    assert set(by_request) == {o.request_id for o in failed.values()}
    for line in lines:
        VALIDATOR.validate(line)
    for outcome in failed.values():
        line = by_request[outcome.request_id]
        assert outcome.error is not None
        assert line["event"] == "invocation_failed"
        assert line["code"] == outcome.error.code
        assert line["pack"] == outcome.pack
        assert line["version"] == outcome.version
        assert line["origin"] == outcome.error.origin
        assert line["retryable"] == outcome.error.retryable
        assert line["reference_id"] == outcome.error.reference_id
        assert line["message"] == outcome.error.message
        assert line["duration_ms"] >= 0
        assert line["timestamp"].endswith("Z")
    assert by_request["rq-not_found"]["origin"] == "pack:t.fail"
    assert by_request["rq-rate_limited"]["retryable"] is True
    assert by_request["rq-slow"]["code"] == "timeout"
    assert by_request["rq-slow"]["origin"] == "control_plane"
    assert by_request["rq-strict"]["code"] == "artifact_failed"
    for rid in ("rq-undeclared_thing", "rq-secret"):
        assert by_request[rid]["code"] == "internal_error"
        assert by_request[rid]["reference_id"].startswith("ref_")
    assert SECRET not in (tmp_path / "events.jsonl").read_text()


def test_events_carry_correlation_ids_of_the_running_request(tmp_path: Path) -> None:
    invoker = make_invoker()
    seen: list[ErrorEvent] = []
    events = ErrorEvents([seen.append])
    invoker.hooks.register(events)

    async def call(flow: str) -> None:
        with correlation_scope({"flow_id": flow, "token": f"token={SECRET}"}):
            await invoker.invoke("t.fail", {"code": "not_found"}, request_id=flow)

    async def main() -> None:
        await asyncio.gather(*(call(f"flow-{i}") for i in range(8)))
        await invoker.invoke("t.fail", {"code": "not_found"}, request_id="bare")

    asyncio.run(main())
    invoker.close()
    assert len(seen) == 9
    for event in seen:
        if event.request_id == "bare":
            assert dict(event.correlation) == {}
        else:
            assert event.correlation["flow_id"] == event.request_id
            assert SECRET not in event.correlation["token"]
        VALIDATOR.validate(event.to_dict())


def test_the_invoker_reads_correlation_ids_from_the_callers_metadata() -> None:
    """An adapter hands the request's metadata over as it is (the gRPC server does): the
    call's events and refusals carry its ids, and nothing is left set after the call."""
    invoker = make_invoker()
    seen: list[ErrorEvent] = []
    invoker.hooks.register(ErrorEvents([seen.append]))
    metadata = [("x-correlation-flow_id", "f-7"), ("user-agent", "grpc-python")]

    async def main() -> None:
        await invoker.invoke("t.fail", {"code": "not_found"}, request_id="r-1", metadata=metadata)
        with pytest.raises(RequestRejected):
            await invoker.invoke("t.nope", {}, request_id="r-2", metadata=metadata)
        await invoker.invoke("t.fail", {"code": "not_found"}, request_id="r-3")

    asyncio.run(main())
    invoker.close()
    correlation = {event.request_id: dict(event.correlation) for event in seen}
    assert correlation == {"r-1": {"flow_id": "f-7"}, "r-2": {"flow_id": "f-7"}, "r-3": {}}
    assert dict(current_correlation()) == {}


def test_correlation_from_grpc_metadata() -> None:
    metadata = [
        ("x-correlation-task_id", "t-1"),
        ("X-Correlation-Attempt", b"3"),
        ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        ("x-correlation-blob-bin", b"\x00"),
        ("authorization", "Bearer abcdefghijklmnop"),
        ("x-correlation-bad key!", "dropped"),
    ]
    ids = correlation_from_metadata(metadata)
    assert ids == {
        "task_id": "t-1",
        "attempt": "3",
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    }
    assert correlation_from_metadata(None) == {}
    many = [(f"x-correlation-k{i}", "v" * 1000) for i in range(40)]
    bounded = correlation_from_metadata(many)
    assert len(bounded) == 16
    assert all(len(v) == 256 for v in bounded.values())


def test_transport_rejections_are_events_with_origin_transport() -> None:
    invoker = make_invoker()
    seen: list[ErrorEvent] = []
    events = ErrorEvents([seen.append])
    with pytest.raises(UnknownPack) as unknown:
        invoker.invoke_sync("no.such", {})
    with pytest.raises(InvalidInput) as invalid:
        invoker.invoke_sync("t.fail", {"code": 5})
    invoker.close()
    with correlation_scope({"flow_id": "f-9"}):
        events.emit_rejection(unknown.value, request_id="r1")
    events.emit_rejection(invalid.value, version="1.2.3")
    events.emit_rejection("overloaded", pack="t.fail", message="too many calls", request_id="r3")
    assert [e.code for e in seen] == ["unknown_pack", "invalid_input", "overloaded"]
    assert [e.pack for e in seen] == ["no.such", "t.fail", "t.fail"]
    assert [e.retryable for e in seen] == [False, False, True]
    assert {e.origin for e in seen} == {"transport"}
    assert {e.event for e in seen} == {"request_rejected"}
    assert seen[0].correlation == {"flow_id": "f-9"}
    assert seen[0].version is None and seen[1].version == "1.2.3"
    assert "/code" in seen[1].message
    for event in seen:
        VALIDATOR.validate(event.to_dict())
        assert ErrorEvent.from_dict(json.loads(event.to_json())) == event
    with pytest.raises(ValueError, match="not a rejection reason"):
        events.emit_rejection("Not Snake")


def test_a_raising_sink_never_breaks_the_call_or_the_other_sinks() -> None:
    invoker = make_invoker()
    seen: list[ErrorEvent] = []

    def broken(event: ErrorEvent) -> None:
        raise OSError("disk full")

    events = ErrorEvents([broken, seen.append])
    invoker.hooks.register(events)
    outcome = invoker.invoke_sync("t.fail", {"code": "not_found"})
    invoker.close()
    assert outcome.code == "not_found"
    assert len(seen) == 1
    assert events.sink_errors == 1
    events.remove_sink(broken)
    assert events.sinks == (seen.append,)
    with pytest.raises(TypeError):
        events.add_sink("not callable")  # type: ignore[arg-type]


def test_stream_sink_writes_json_lines_to_stderr_by_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    invoker = make_invoker()
    events = ErrorEvents([StreamSink()])
    invoker.hooks.register(events)
    invoker.invoke_sync("t.fail", {"code": "ok"})
    invoker.invoke_sync("t.fail", {"code": "auth_failed"})
    invoker.close()
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = [json.loads(x) for x in captured.err.splitlines()]
    assert [x["code"] for x in lines] == ["auth_failed"]
    buffer = io.StringIO()
    StreamSink(buffer)(ErrorEvent.from_dict(lines[0]))
    assert json.loads(buffer.getvalue()) == lines[0]


def test_file_sink_is_thread_safe_and_appends(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "events.jsonl"
    path.parent.mkdir()
    path.write_text('{"earlier": true}\n')
    sink = FileSink(path)
    template = ErrorEvent.rejection("overloaded", pack="t.x", message="m" * 3000)

    def write(n: int) -> None:
        for i in range(200):
            sink(ErrorEvent.rejection("unknown_pack", pack=f"p{n}.{i}", message=template.message))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sink.close()
    lines = path.read_text().splitlines()
    assert lines[0] == '{"earlier": true}'
    parsed = [json.loads(x) for x in lines[1:]]
    assert len(parsed) == 1600
    assert len({p["event_id"] for p in parsed}) == 1600
    assert all(p["message"] == template.message for p in parsed)
    with pytest.raises(ValueError, match="closed"):
        sink(template)


def test_plugins_register_event_sinks_through_the_hook(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CAPABILITY_PACKS_PLUGINS", raising=False)
    seen: list[ErrorEvent] = []

    class Good:
        @hookimpl
        def register_event_sinks(self, register: Any) -> None:
            register(seen.append)

    class NotCallable:
        @hookimpl
        def register_event_sinks(self, register: Any) -> None:
            register(42)

    class Raises:
        @hookimpl
        def register_event_sinks(self, register: Any) -> None:
            raise RuntimeError("boom")

    result = load_registry(
        builtins=False,
        entry_points_=False,
        extra=[("good", Good()), ("not_callable", NotCallable()), ("raises", Raises())],
    )
    assert result.event_sinks == (seen.append,)
    failed = {f.plugin: f.reason for f in result.registry.failures}
    assert set(failed) == {"not_callable", "raises"}
    assert "not callable" in failed["not_callable"]
    assert "RuntimeError: boom" in failed["raises"]
    events = ErrorEvents(result.event_sinks)
    events.emit_rejection("overloaded")
    assert [e.code for e in seen] == ["overloaded"]


def test_success_outcome_has_no_event() -> None:
    invoker = make_invoker()
    outcome = invoker.invoke_sync("t.fail", {"code": "ok"})
    invoker.close()
    with pytest.raises(ValueError, match="no error event"):
        ErrorEvent.from_outcome(outcome)


def test_a_line_of_hostile_caller_fields_still_fits_one_pipe_write() -> None:
    # Before: a rejection of a caller-made pack name and request id of 300 control
    # characters each (six bytes apiece once escaped) plus 16 correlation ids made a
    # 4,175-byte stderr line: over PIPE_BUF, so --workers' lines could interleave.
    from control_plane._features.observability.events import PIPE_BUF, fitted_line
    from control_plane._kernel.rejection import Rejection

    hostile = "\x01" * 300
    rejection = Rejection.of("unknown_pack", f"no pack named {hostile}", pack=hostile)
    correlation = {f"k{i:02d}" + "x" * 60: '"' * 256 for i in range(16)}
    event = ErrorEvent.rejection(rejection, request_id=hostile, correlation=correlation)
    line = fitted_line(event)
    assert len(line) <= PIPE_BUF and line.endswith(b"\n") and line.count(b"\n") == 1
    body = json.loads(line)
    assert set(body) == set(event.to_dict()) and body["pack"].endswith("...")


def test_a_queued_emitter_calls_an_unqueued_sink_in_the_callers_thread() -> None:
    events = ErrorEvents(queued=True)
    behind: list[int] = []
    inline: list[int] = []

    def queued_sink(event: ErrorEvent) -> None:
        behind.append(threading.get_ident())

    def inline_sink(event: ErrorEvent) -> None:
        inline.append(threading.get_ident())

    def broken(event: ErrorEvent) -> None:
        raise SystemExit(1)

    events.add_sink(queued_sink)
    events.add_sink(inline_sink, queued=False)
    events.add_sink(broken, queued=False)
    try:
        events.emit_rejection("unknown_pack", pack="x.y")
        assert inline == [threading.get_ident()]  # before emit returned, in this thread
        assert events.sink_errors == 1  # the raising one was logged and skipped
        assert events.flush()
        assert len(behind) == 1 and behind[0] != threading.get_ident()
        events.remove_sink(inline_sink)
        events.emit_rejection("unknown_pack", pack="x.y")
        assert len(inline) == 1 and events.flush() and len(behind) == 2
    finally:
        events.close()
