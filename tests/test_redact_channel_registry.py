"""Every channel is registered, owned by one scrubbing function, and scrubs the corpus.

The walk finds channels in the code (log formatters, event sinks, incident sinks, every
string and bytes field of every wire message a caller receives) and fails on one that
``control_plane.core.channels`` does not account for: a new channel cannot skip the
scrubber unnoticed. Then every registered owner is driven with every corpus sample.
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
from google.protobuf.descriptor import FieldDescriptor
from secret_corpus import SECRETS, Sample

import control_plane
from control_plane.core import enforce, limits, schema
from control_plane.core import outcome as outcomes
from control_plane.core.channels import CHANNELS, WIRE_FIELDS
from control_plane.core.classify import Classification
from control_plane.core.errors import FieldViolation, InvalidInput, PackError, UnknownPack
from control_plane.core.incidents import Incident, Incidents
from control_plane.core.invoke import Invoker
from control_plane.core.pack import Check
from control_plane.core.registry import LoadFailure
from control_plane.core.rejection import Rejection
from control_plane.runtime import events, incident_store, stderr_relay
from control_plane.runtime.plugins import load_registry
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.wire import server, status

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


@pytest.mark.parametrize("name", sorted(CHANNELS))
def test_every_owner_exists_and_scrubs(name: str) -> None:
    owner = _resolve(CHANNELS[name].owner)
    assert "scrub" in inspect.getsource(owner) or "clip(" in inspect.getsource(owner)


def test_every_wire_field_a_caller_receives_is_accounted_for() -> None:
    seen = set()
    for message in pb.DESCRIPTOR.message_types_by_name.values():
        if message.name in REQUESTS:
            continue
        for field in message.fields:
            if field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
                key = f"{message.name}.{field.name}"
                seen.add(key)
                assert key in WIRE_FIELDS, f"{key}: which channel scrubs it? (core/channels.py)"
    assert set(WIRE_FIELDS) == seen  # no stale entries either
    for key, why in WIRE_FIELDS.items():
        assert why in CHANNELS or why.startswith(("static:", "result:")), key


def _classes() -> Iterator[type]:
    for module in _modules():
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__:
                yield cls


OWNERS = {CHANNELS[n].owner.rpartition(":")[2].rpartition(".")[2] for n in CHANNELS}


def test_every_log_formatter_goes_through_a_channel_owner() -> None:
    formatters = [c for c in _classes() if issubclass(c, logging.Formatter)]
    assert len(formatters) >= 3
    for cls in formatters:
        source = inspect.getsource(cls.format)
        assert any(f"{owner}(" in source for owner in OWNERS) or "scrub(" in source, cls


def test_no_log_handler_formats_without_the_scrubber() -> None:
    """A plain ``logging.Formatter`` (or ``basicConfig``) would print unscrubbed text."""
    offenders = []
    for module in _modules():
        source = inspect.getsource(module)
        for needle in ("logging.Formatter(", "basicConfig("):
            if needle in source:
                offenders.append(f"{module.__name__}: {needle}")
    assert offenders == []


def test_every_event_and_incident_sink_writes_through_a_channel_owner() -> None:
    sinks = []
    for cls in _classes():
        call = cls.__dict__.get("__call__")
        if call is not None and "ErrorEvent" in str(inspect.signature(call)):
            sinks.append((cls, call))
        for name in ("add_incident", "add_event"):
            if name in cls.__dict__:  # a store: it queues, its writer turns items into rows
                sinks.append((cls, cls))
    assert len(sinks) >= 3
    # fitted_line (stderr's pipe-sized lines) encodes through the event's to_json.
    assert "to_json(" in inspect.getsource(events.fitted_line)
    for cls, where in sinks:
        source = inspect.getsource(where)
        assert any(f"{owner}(" in source for owner in (*OWNERS, "to_json", "fitted_line")), cls


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
            bridge = importlib.import_module("control_plane.adapters.temporal.bridge")
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
            tools = importlib.import_module("control_plane.adapters.mcp_bridge.tools")
            if kind == "error":
                from control_plane.wire.client import PackDescription

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
    assert out == "plain line\npassword=[REDACTED] tail\n\xe9t\xe9\n"
    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(["QUJD" * 16] * 5)
    assert "QUJD" not in _child_output(key + "\n-----END RSA PRIVATE KEY-----")
