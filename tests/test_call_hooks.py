"""The call hooks (``call_started``, ``call_finished``, ``request_refused``,
``incident_recorded``): one extension mechanism for third-party plugins and the built-in
metrics, events and incident store alike, each implementation failing alone."""

from __future__ import annotations

import time
from typing import Any

import pytest
from runtime_support import make_pack, plugin

from control_plane._features.observability.events import ErrorEvent, ErrorEvents
from control_plane._kernel.errors import PackError
from control_plane._kernel.hookspecs import hookimpl
from control_plane._kernel.incidents import Incident
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.registry import LoadedPack
from control_plane._runtime.runtime import TRUST_ALL, RuntimeConfig, build_runtime


def _boom(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    raise ZeroDivisionError("a pack bug")


def _missing(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    raise PackError("not_found", "gone")


PACKS = (
    make_pack("h.ok"),
    make_pack("h.bug", handler=_boom),
    make_pack("h.miss", handler=_missing),
)


def code(outcome: Outcome) -> str:
    return outcome.error.code if outcome.error is not None else "ok"


class Observer:
    """A third-party plugin on every call hook; ``fewer`` takes fewer arguments than the
    specs offer (pluggy allows it)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []
        self.open = 0

    @hookimpl
    def call_started(self, pack: LoadedPack) -> Any:
        self.open += 1
        self.seen.append(("started", pack.name))

        def end() -> None:
            self.open -= 1

        return end

    @hookimpl
    def call_finished(self, outcome: Outcome) -> None:
        self.seen.append(("finished", outcome.pack, code(outcome)))

    @hookimpl
    def request_refused(self, event: ErrorEvent) -> None:
        self.seen.append(("refused", event.code))

    @hookimpl
    def incident_recorded(self, incident: Incident) -> None:
        self.seen.append(("incident", incident.pack, incident.reference_id))


class Broken:
    """A plugin whose every hook raises something a plain ``except Exception`` misses."""

    @hookimpl
    def call_started(self, pack: LoadedPack) -> Any:
        raise SystemExit(3)

    @hookimpl
    def call_finished(self, pack: LoadedPack, outcome: Outcome, elapsed_s: float) -> None:
        raise KeyboardInterrupt

    @hookimpl
    def request_refused(self, event: ErrorEvent) -> None:
        raise RuntimeError("refused hook broke")

    @hookimpl
    def incident_recorded(self, incident: Incident) -> None:
        raise SystemExit(4)


@pytest.mark.parametrize("with_broken", [False, True], ids=["alone", "beside-a-broken-one"])
def test_a_loaded_plugin_sees_every_call_refusal_and_incident(with_broken: bool) -> None:
    observer = Observer()
    extra: list[tuple[str, object]] = [("packs", plugin(*PACKS)), ("observer", observer)]
    if with_broken:
        extra.append(("broken", Broken()))
    # The suite's own packs, in this process (TRUST_ALL: they declare no reach).
    config = RuntimeConfig(builtins=False, entry_points=False, extra=tuple(extra), trust=TRUST_ALL)
    runtime = build_runtime(config)
    try:
        assert runtime.registry.failures == []
        obs = runtime.observe(events=ErrorEvents())
        invoker = runtime.invoker
        assert code(invoker.invoke_sync("h.ok", {})) == "ok"
        bug = invoker.invoke_sync("h.bug", {})
        assert code(bug) == "internal_error"
        assert code(invoker.invoke_sync("h.miss", {})) == "not_found"
        obs.emit_rejection("unknown_pack", pack="h.nope")
        ref = bug.error.reference_id if bug.error is not None else None
        assert observer.seen == [
            ("started", "h.ok"),
            ("finished", "h.ok", "ok"),
            ("started", "h.bug"),
            ("incident", "h.bug", ref),
            ("finished", "h.bug", "internal_error"),
            ("started", "h.miss"),
            ("finished", "h.miss", "not_found"),
            ("refused", "unknown_pack"),
        ]
        assert observer.open == 0
        # The built-in plugins on the same hooks counted the same calls.
        assert obs.events.emitted == 3
        obs.close()
        # Closing unregisters the built-ins only; the third-party plugin stays.
        assert code(invoker.invoke_sync("h.ok", {})) == "ok"
        assert observer.seen[-1] == ("finished", "h.ok", "ok")
    finally:
        runtime.close()


def test_a_slow_event_sink_plugin_never_holds_the_call() -> None:
    seen: list[str] = []

    class SlowSink:
        @hookimpl
        def register_event_sinks(self, register: Any) -> None:
            def sink(event: ErrorEvent) -> None:
                time.sleep(2.0)
                seen.append(event.code)

            register(sink)

    config = RuntimeConfig(
        builtins=False,
        entry_points=False,
        extra=(("packs", plugin(*PACKS)), ("slow", SlowSink())),
        trust=TRUST_ALL,
    )
    runtime = build_runtime(config)
    try:
        obs = runtime.observe(events=ErrorEvents(queued=True))
        started = time.monotonic()
        for _ in range(3):
            assert code(runtime.invoker.invoke_sync("h.miss", {})) == "not_found"
        assert time.monotonic() - started < 2.0  # generous: the sink sleeps 2 s per event
        assert obs.events.flush(10.0)
        assert seen == ["not_found"] * 3
    finally:
        runtime.close()
