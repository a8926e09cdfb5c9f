"""Every channel is registered, its owner is on its path, and it scrubs the corpus.

The walk finds channels in the code (log formatters, event sinks, incident sinks, every
string and bytes field of every wire message a caller receives) and fails on one that
``tests/channels.py`` does not account for, or one that lets a secret through:
a new channel cannot skip the scrubber unnoticed. Every registered channel is driven with
every corpus sample, and its owner is seen to run while it is.
"""

from __future__ import annotations

import importlib
import inspect
import io
import logging
import os
import pkgutil
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import leakpacks
import pytest
from channels import CHANNELS, WIRE_FIELDS
from google.protobuf.descriptor import FieldDescriptor
from secret_corpus import SECRETS, Sample

import control_plane
from control_plane._features.grpc import server, status
from control_plane._features.observability import events, incident_store
from control_plane._kernel import enforce, limits, schema
from control_plane._kernel import outcome as outcomes
from control_plane._kernel.classify import Classification
from control_plane._kernel.errors import FieldViolation, InvalidInput, PackError, UnknownPack
from control_plane._kernel.incidents import Incident, Incidents
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.pack import Check
from control_plane._kernel.registry import LoadFailure
from control_plane._kernel.rejection import Rejection
from control_plane._runtime import stderr_relay
from control_plane._runtime.plugins import load_registry
from control_plane.v1 import control_plane_pb2 as pb

REQUESTS = {"ListPacksRequest", "DescribePackRequest", "InvokePackRequest"}


def _modules() -> Iterator[Any]:
    for info in pkgutil.walk_packages(control_plane.__path__, "control_plane."):
        if ".v1" in info.name or info.name.endswith("__main__"):
            continue
        try:
            yield importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue


def _resolve(owner: str) -> Any:
    module, _, qualname = owner.partition(":")
    target: Any = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def test_every_wire_field_a_caller_receives_is_accounted_for() -> None:
    seen = set()
    for message in pb.DESCRIPTOR.message_types_by_name.values():
        if message.name in REQUESTS:
            continue
        for field in message.fields:
            if field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
                key = f"{message.name}.{field.name}"
                seen.add(key)
                assert key in WIRE_FIELDS, f"{key}: which channel scrubs it? (tests/channels.py)"
    assert set(WIRE_FIELDS) == seen  # no stale entries either
    for key, why in WIRE_FIELDS.items():
        assert why in CHANNELS or why.startswith(("static:", "result:")), key


def _classes() -> Iterator[type]:
    for module in _modules():
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__:
                yield cls


# -- every owner, driven with the corpus ----------------------------------------------------


@pytest.fixture(scope="module")
def invoker() -> Iterator[Invoker]:
    logging.disable(logging.CRITICAL)
    load = load_registry(builtins=False, entry_points_=False, extra=[leakpacks])
    logging.disable(logging.NOTSET)
    inv = Invoker(load.registry, classifiers=load.classifiers)
    yield inv
    inv.close()


def _record(text: str, exc: BaseException | None = None) -> logging.LogRecord:
    record = logging.LogRecord(
        "capability_packs.x", logging.ERROR, __file__, 1, "saw %s", (text,), None
    )
    record.reason = text
    record.request_id = text
    if exc is not None:
        record.exc_info = (type(exc), exc, exc.__traceback__)
    return record


def _traceback(text: str) -> str:
    out = io.StringIO()
    saved = (threading.excepthook, __import__("sys").excepthook)
    try:
        server._scrubbing_excepthook(out)
        thread = threading.Thread(target=lambda: (_ for _ in ()).throw(RuntimeError(text)))
        thread.start()
        thread.join()
    finally:
        threading.excepthook, __import__("sys").excepthook = saved
    return out.getvalue()


def _event(text: str) -> events.ErrorEvent:
    return events.ErrorEvent(
        event="invocation_failed",
        code="not_found",
        pack=text,
        version="1.0.0",
        origin="pack:x",
        retryable=False,
        reference_id=None,
        request_id=text,
        message=text,
        timestamp=events.rfc3339(0.0),
        correlation={"k": "v"},
    )


_RELAYED = io.StringIO()
_RELAY = stderr_relay.StderrRelay(_RELAYED)


def _child_output(text: str) -> str:
    """``text`` printed by a child process in one write, as the relay passes it on."""
    _RELAYED.seek(0)
    _RELAYED.truncate()
    fd = _RELAY.pipe()
    os.write(fd, text.encode("utf-8", "surrogatepass") + b"\n")
    os.close(fd)
    deadline = time.monotonic() + 10
    while _RELAY.open_pipes() and time.monotonic() < deadline:
        time.sleep(0.001)
    return _RELAYED.getvalue()


def _probes(invoker: Invoker) -> dict[str, Callable[[str], object]]:
    loaded = invoker.registry.get("leak.channel")
    enforcer = enforce.Enforcer(Incidents())

    def outcome(mode: str, text: str) -> Any:
        return invoker.invoke_sync("leak.channel", {"mode": mode, "text": text}, strict=True)

    def temporal(name: str) -> Callable[[str], object]:
        def probe(text: str) -> object:
            bridge = importlib.import_module("control_plane._features.temporal.bridge")
            if name == "error":
                err = bridge.outcome_to_application_error(outcome("typed", text))
            elif name == "rejection":
                err = bridge.rejection_to_application_error(UnknownPack(text))
                err2 = bridge.rejection_to_application_error(
                    InvalidInput(text, [FieldViolation(text, text)])
                )
                return [str(err), err.details, str(err2), err2.details]
            else:
                return bridge.envelope_for_domain_error(PackError("not_found", text)).model_dump()
            return [str(err), err.details]

        return probe

    def mcp(kind: str) -> Callable[[str], object]:
        def probe(text: str) -> object:
            tools = importlib.import_module("control_plane._features.mcp.bridge.tools")
            if kind == "error":
                from control_plane._features.grpc.client import PackDescription

                spec = next(iter(tools.build_tools([PackDescription.from_loaded(loaded)]).values()))
                return tools.error_content(outcome("exception", text), spec)
            return tools.rejected_content(InvalidInput(text, [FieldViolation(text, text)]))

        return probe

    return {
        "message": outcomes.bounded_text,
        "partial_result": lambda t: enforcer.error(
            loaded,
            Classification(code="schema_mismatch", message=t, partial_result={"n": t, t: [t]}),
            None,
            request_id="r",
            origin="pack:x",
        ).model_dump(),
        "check": lambda t: [
            outcomes.CheckRecord.build(t, "fail", t, t, [t], t).model_dump(),
            outcomes.CheckRecord.of(Check(t, "fail", t, {t: t}, t, t)).model_dump(),
        ],
        "validation_message": lambda t: [
            v.description for v in schema.CompiledSchema({"type": "integer"}).violations(t)
        ],
        "echo": lambda t: [limits.clip(t, 64), limits.clip(t, 4096)],
        "request_id": lambda t: invoker.invoke_sync(
            "leak.scrubbed", {}, request_id=t[:128]
        ).to_dict(),
        "result_opt_in": lambda t: invoker.invoke_sync("leak.scrubbed", {"t": t}).to_dict(),
        "load_failure": lambda t: str(LoadFailure(t, t, t)),
        "incident": lambda t: (
            Incidents().get(
                (inc := Incidents()).record(
                    RuntimeError(t), pack=t, request_id=t, kind="k", summary=t
                )
            )
            or inc.get(inc.record(RuntimeError(t), pack=t, request_id=t, kind="k", summary=t))
        ),
        "incident_store": lambda t: incident_store._incident_row(
            Incident("ref_1", t, t, "k", t, t, 0.0)
        ),
        "event_store": lambda t: incident_store._event_row(_event(t)),
        "event": lambda t: _event(t).to_json(),
        "event_fields": lambda t: events.ErrorEvent.rejection(
            "unknown_pack", pack=t, message=t, request_id=t
        ).to_json(),
        "correlation": lambda t: events.clean_correlation({"k": t}),
        "log": lambda t: [
            server.JsonFormatter().format(_record(t, RuntimeError(t))),
            server.KeyValueFormatter().format(_record(t)),
        ],
        "log_other": lambda t: server.ScrubbingFormatter("%(message)s").format(
            _record(t, RuntimeError(t))
        ),
        "traceback": _traceback,
        "rejection": lambda t: Rejection.of(
            "invalid_input", t, pack=t, request_id=t, violations=[FieldViolation(t, t)]
        ).to_dict(),
        "rejection_wire": lambda t: [
            status.rejection_status(UnknownPack(t), request_id=t).SerializeToString(),
            status.rejection_status(InvalidInput(t, [FieldViolation(t, t)])).SerializeToString(),
        ],
        "child_output": _child_output,
        "mcp_error": mcp("error"),
        "mcp_rejection": mcp("rejection"),
        "temporal_error": temporal("error"),
        "temporal_rejection": temporal("rejection"),
        "temporal_domain_error": temporal("domain"),
    }


def test_every_channel_has_a_probe(invoker: Invoker) -> None:
    assert set(_probes(invoker)) == set(CHANNELS)


@pytest.mark.parametrize("name", sorted(CHANNELS))
def test_every_channel_scrubs_the_corpus(invoker: Invoker, name: str) -> None:
    probe = _probes(invoker)[name]
    leaks: list[tuple[str, str]] = []
    for sample in SECRETS:
        out = repr(probe(sample.text)).encode() + str(probe(sample.text)).encode()
        leaks += _found(sample, out)
    assert leaks == [], leaks[:5]


def _found(sample: Sample, out: bytes) -> list[tuple[str, str]]:
    forms = []
    for secret in sample.secrets:
        forms += [secret.encode(), secret.encode("unicode_escape"), repr(secret)[1:-1].encode()]
    return [(sample.family, f[:20].decode(errors="replace")) for f in forms if f in out]


def test_the_relay_probe_relays_what_a_child_prints() -> None:
    """The child_output probe is not vacuous: text arrives, scrubbed, lines kept whole."""
    out = _child_output("plain line\npassword=hunter2 tail\n\xe9t\xe9")
    label = "[child process] "
    assert out == f"{label}plain line\n{label}password=[REDACTED] tail\n{label}\xe9t\xe9\n"
    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(["QUJD" * 16] * 5)
    assert "QUJD" not in _child_output(key + "\n-----END RSA PRIVATE KEY-----")


def test_drain_waits_for_a_childs_last_partial_line() -> None:
    """At exit the relay's daemon thread must not take a child's last words with it:
    ``drain`` returns once every pipe was read to its end, the partial line relayed."""
    out = io.StringIO()
    relay = stderr_relay.StderrRelay(out)
    fd = relay.pipe("MCP server t")
    os.write(fd, b"first\nlast token=hunter2 no newline")
    os.close(fd)
    assert relay.drain(10.0)
    assert out.getvalue() == (
        "[MCP server t] first\n[MCP server t] last token=[REDACTED] no newline\n"
    )
    # a pipe still open is waited for only as long as asked
    held = relay.pipe("held")
    assert not relay.drain(0.05)
    os.close(held)
    assert relay.drain(10.0)


# -- behaviour, not source text: owners on the path, formatters, logging, sinks --------------

LEAKY = next(s for s in SECRETS if s.secrets)


def _leaks(out: object) -> list[tuple[str, str]]:
    data = out if isinstance(out, bytes) else (repr(out) + str(out)).encode()
    return _found(LEAKY, data)


def _spy(monkeypatch: pytest.MonkeyPatch, owner: str) -> list[int]:
    """Wrap ``owner`` (``module:qualname``) so that each call is counted; return the count."""
    module, _, qualname = owner.partition(":")
    *path, attr = qualname.split(".")
    container: Any = importlib.import_module(module)
    for part in path:
        container = getattr(container, part)
    calls: list[int] = []
    static = inspect.getattr_static(container, attr)
    kind = type(static) if isinstance(static, classmethod | staticmethod) else None
    function = static.__func__ if kind is not None else static

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return function(*args, **kwargs)

    monkeypatch.setattr(container, attr, kind(counted) if kind is not None else counted)
    return calls


@pytest.mark.parametrize("name", sorted(CHANNELS))
def test_every_owner_runs_when_its_channel_carries_a_secret(
    invoker: Invoker, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registered owner is the function the channel's text really goes through."""
    calls = _spy(monkeypatch, CHANNELS[name].owner)
    out = _probes(invoker)[name](LEAKY.text)
    assert calls, f"{name}: {CHANNELS[name].owner} never ran (tests/channels.py is stale)"
    assert _leaks(out) == []


def _formatters() -> list[type[logging.Formatter]]:
    return [c for c in _classes() if issubclass(c, logging.Formatter)]


@pytest.mark.parametrize("cls", _formatters(), ids=lambda c: c.__qualname__)
def test_every_log_formatter_scrubs_message_fields_and_traceback(
    cls: type[logging.Formatter],
) -> None:
    formatter = cls("%(message)s %(reason)s")
    try:
        raise RuntimeError(LEAKY.text)
    except RuntimeError as exc:
        out = formatter.format(_record(LEAKY.text, exc))
    assert LEAKY.text[:8] in out or "saw" in out  # it formatted the record
    assert _leaks(out) == []


def test_there_are_log_formatters_to_check() -> None:
    assert len(_formatters()) >= 3


@pytest.mark.parametrize("fmt", ["json", "kv"])
def test_configured_logging_scrubs_ours_other_libraries_and_warnings(fmt: str) -> None:
    """What ``configure_logging`` installs: every log line the process writes is scrubbed."""
    import sys
    import warnings

    out = io.StringIO()
    top, ours = logging.getLogger(), logging.getLogger("capability_packs")
    saved = (top.handlers[:], ours.handlers[:], ours.level, ours.propagate)
    hooks = (sys.excepthook, threading.excepthook, sys.unraisablehook)
    top.handlers.clear()
    try:
        server.configure_logging(fmt, "INFO", out)
        ours.error("saw %s", LEAKY.text, extra={"reason": LEAKY.text})
        logging.getLogger("grpc._somewhere").error("saw %s", LEAKY.text)
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.warn(LEAKY.text, UserWarning, stacklevel=1)
    finally:
        logging.captureWarnings(False)
        for handler in top.handlers:
            top.removeHandler(handler)
        top.handlers[:], ours.handlers[:] = saved[0], saved[1]
        ours.setLevel(saved[2])
        ours.propagate = saved[3]
        sys.excepthook, threading.excepthook, sys.unraisablehook = hooks
    text = out.getvalue()
    assert text.count("\n") >= 3 and "grpc._somewhere" in text
    assert _leaks(text.encode()) == []


def _sinks() -> list[type]:
    found = []
    for cls in _classes():
        call = cls.__dict__.get("__call__")
        takes_events = call is not None and "ErrorEvent" in str(inspect.signature(call))
        if takes_events or "add_incident" in cls.__dict__ or "add_event" in cls.__dict__:
            found.append(cls)
    return found


def _written_by(cls: type, tmp: Any, text: str) -> bytes:
    """Build a sink of ``cls``, hand it an event (and an incident) carrying ``text``, read back."""
    if cls is events.StreamSink:
        stream = io.StringIO()
        sink = events.StreamSink(stream)
        sink(_event(text))
        return stream.getvalue().encode()
    if cls is events.FileSink:
        file_sink = events.FileSink(tmp / "events.jsonl")
        file_sink(_event(text))
        file_sink.close()
        return (tmp / "events.jsonl").read_bytes()
    if cls is incident_store.IncidentStore:
        store = incident_store.IncidentStore(tmp / "incidents.db", durable=False)
        store.add_event(_event(text))
        store.add_incident(Incident("ref_1", text, text, "k", text, text, 0.0))
        store.close()
        return b"".join(p.read_bytes() for p in tmp.glob("incidents.db*"))
    raise AssertionError(f"{cls.__qualname__}: a new sink; add how to build it to _written_by")


@pytest.mark.parametrize("cls", _sinks(), ids=lambda c: c.__qualname__)
def test_every_event_and_incident_sink_writes_scrubbed(cls: type, tmp_path: Any) -> None:
    written = _written_by(cls, tmp_path, LEAKY.text)
    assert written, cls  # it wrote something
    assert _leaks(written) == []
    # fitted_line (stderr's pipe-sized lines) is what StreamSink writes
    assert _leaks(events.fitted_line(_event(LEAKY.text))) == []


def test_there_are_sinks_to_check() -> None:
    assert len(_sinks()) >= 3
