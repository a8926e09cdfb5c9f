"""Metrics: drive real calls, then read the endpoint over HTTP with the Prometheus parser."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import socket
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from control_plane import Check, PackError, Result, rate_limited
from control_plane._features.grpc.client import AsyncClient, PackCallError
from control_plane._features.grpc.server import create_server
from control_plane._features.observability.events import ErrorEvents, FileSink
from control_plane._features.observability.incident_store import IncidentStore
from control_plane._features.observability.metrics import Metrics, start_metrics_server
from control_plane._features.observability.observability import install, install_configured
from control_plane._features.observability.observability_cli import (
    add_serve_arguments,
    observability_config,
)
from control_plane._kernel.errors import InvalidInput, UnknownPack
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.pack import Pack
from control_plane._kernel.registry import LoadFailure, Registry
from control_plane._runtime.plugins import LoadResult, get_plugin_manager
from control_plane._runtime.runtime import TRUST_ALL, RuntimeConfig, build_runtime

SECRET = "pl4nted-m3trics-secret"
CODES = ["auth_failed", "rate_limited", "not_found", "timeout", "network_error"]
GATE = threading.Event()
STARTED = threading.Semaphore(0)


def _out(codes: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            "error": {"type": "object", "properties": {"code": {"enum": codes}}},
        },
    }


def _fail(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    code = doc.get("code", "ok")
    if code == "ok":
        return {"ok": True}
    if code == "rate_limited":
        raise rate_limited(3)
    if code == "secret":
        raise RuntimeError(f"upstream rejected password={SECRET}")
    raise PackError(code, code)


async def _sleepy(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    await asyncio.sleep(10)
    return {"ok": True}


def _checks(doc: dict[str, Any], ctx: Any) -> Result:
    return Result(
        {"ok": True},
        [
            Check("a", "pass", "fine"),
            Check("b", "warn", "meh"),
            Check("c", "fail", "bad"),
            Check("d", "fail", "worse"),
        ],
    )


def _gate(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    STARTED.release()
    GATE.wait(10)
    return {"ok": True}


def make_invoker() -> Invoker:
    registry = Registry()
    specs = [
        ("t.fail", _fail, CODES, None),
        ("t.sleepy", _sleepy, ["timeout"], None),
        ("t.check", _checks, ["not_found"], True),
        ("t.gate", _gate, ["not_found"], None),
    ]
    for name, handler, codes, validates in specs:
        registry.register(
            Pack(
                name=name,
                version="3.1.4",
                summary="metrics test pack",
                input_schema={"type": "object", "properties": {"code": {"type": "string"}}},
                output_schema=_out(codes),
                handler=handler,
                validates=validates,
            ),
            "tests",
        )
    return Invoker(registry, max_workers=8)


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int) -> Samples:
    """Every sample on the endpoint, keyed by (sample name, sorted labels)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def invocations(samples: Samples, pack: str, code: str, origin: str) -> float:
    return value(samples, "capability_packs_invocations_total", pack=pack, code=code, origin=origin)


def test_counts_by_pack_code_and_origin_over_http(tmp_path: Path) -> None:
    invoker = make_invoker()
    obs = install(
        invoker,
        load_failures=[
            LoadFailure("broken_plugin", "failed to load: ImportError"),
            LoadFailure("half_plugin", "bad schema", "x.y"),
            LoadFailure("half_plugin", "bad vocabulary", "x.z"),
        ],
        events=ErrorEvents(),
        store=IncidentStore(tmp_path / "i.db"),
    )
    port = obs.serve_metrics(0)
    assert port > 0 and obs.metrics.port == port

    for _ in range(3):
        assert invoker.invoke_sync("t.fail", {"code": "ok"}).ok
    for code in CODES:
        assert invoker.invoke_sync("t.fail", {"code": code}).code == code
    invoker.invoke_sync("t.fail", {"code": "rate_limited"})
    secret = invoker.invoke_sync("t.fail", {"code": "secret"})
    violation = invoker.invoke_sync("t.fail", {"code": "not_in_vocabulary"})
    late = invoker.invoke_sync("t.sleepy", {}, timeout=0.02)
    strict = invoker.invoke_sync("t.check", {}, strict=True)
    lenient = invoker.invoke_sync("t.check", {})
    assert (secret.code, violation.code, late.code) == ("internal_error",) * 2 + ("timeout",)
    assert (strict.code, lenient.ok) == ("artifact_failed", True)
    for bad in ({"code": 1}, {"code": []}):
        with pytest.raises(InvalidInput) as invalid:
            invoker.invoke_sync("t.fail", bad)
        obs.emit_rejection(invalid.value)
    with pytest.raises(UnknownPack) as unknown:
        invoker.invoke_sync("made.up", {})
    obs.emit_rejection(unknown.value)
    obs.emit_rejection("overloaded", pack="t.fail")

    s = scrape(port)
    assert invocations(s, "t.fail", "ok", "none") == 3
    for code in CODES:
        expected = 2 if code == "rate_limited" else 1
        assert invocations(s, "t.fail", code, "pack:t.fail") == expected, code
    assert invocations(s, "t.fail", "internal_error", "control_plane") == 2
    assert invocations(s, "t.sleepy", "timeout", "control_plane") == 1
    assert invocations(s, "t.check", "artifact_failed", "control_plane") == 1
    assert invocations(s, "t.check", "ok", "none") == 1
    total_fail_calls = 3 + len(CODES) + 1 + 2
    assert (
        sum(
            v
            for (name, labels), v in s.items()
            if name == "capability_packs_invocations_total" and ("pack", "t.fail") in labels
        )
        == total_fail_calls
    )
    # Latency: one observation per call that reached the pack.
    hist = "capability_packs_invocation_duration_seconds"
    assert value(s, f"{hist}_count", pack="t.fail") == total_fail_calls
    assert value(s, f"{hist}_bucket", pack="t.fail", le="+Inf") == total_fail_calls
    assert value(s, f"{hist}_sum", pack="t.sleepy") >= 0.02
    # Contract violations: the undeclared code, and only that.
    assert value(s, "capability_packs_contract_violations_total", pack="t.fail") == 1
    assert value(s, "capability_packs_contract_violations_total", pack="t.check") == 0
    # Validation findings by severity, strict or not.
    findings = "capability_packs_validation_findings_total"
    assert value(s, findings, pack="t.check", severity="pass") == 2
    assert value(s, findings, pack="t.check", severity="warn") == 2
    assert value(s, findings, pack="t.check", severity="fail") == 4
    # Rejections are counted by reason only: no caller-made pack name becomes a label.
    rejected = "capability_packs_rejected_requests_total"
    assert value(s, rejected, reason="invalid_input") == 2
    assert value(s, rejected, reason="unknown_pack") == 1
    assert value(s, rejected, reason="overloaded") == 1
    assert not any(("pack", "made.up") in labels for _, labels in s)
    assert value(s, "capability_packs_plugin_load_failures", plugin="broken_plugin") == 1
    assert value(s, "capability_packs_plugin_load_failures", plugin="half_plugin") == 2
    assert value(s, "capability_packs_in_flight", pack="t.fail") == 0
    assert value(s, "capability_packs_event_store_dropped_total") == 0
    # The store saw the same failures as the endpoint.
    assert obs.store is not None and obs.store.flush()
    by_code = dict(obs.store.errors(by="code"))
    assert by_code["internal_error"] == 2 and by_code["rate_limited"] == 2
    assert by_code["invalid_input"] == 2 and by_code["unknown_pack"] == 1

    obs.close()
    invoker.close()
    assert invoker.hooks.started == () and invoker.hooks.finished == ()
    assert invoker.hooks.incident == () and invoker.hooks.refused == ()
    with pytest.raises(urllib.error.URLError):
        scrape(port)


async def test_in_flight_gauge_follows_running_and_cancelled_calls() -> None:
    invoker = make_invoker()
    obs = install(invoker, events=ErrorEvents())
    port = obs.serve_metrics(0)
    GATE.clear()

    async def in_flight() -> float:
        samples = await asyncio.to_thread(scrape, port)
        return value(samples, "capability_packs_in_flight", pack="t.gate")

    calls = [asyncio.create_task(invoker.invoke("t.gate", {})) for _ in range(3)]
    for _ in calls:
        assert await asyncio.to_thread(STARTED.acquire, True, 5)
    assert await in_flight() == 3
    calls[0].cancel()
    with pytest.raises(asyncio.CancelledError):
        await calls[0]
    assert await in_flight() == 2
    GATE.set()
    outcomes = await asyncio.gather(*calls[1:])
    assert all(o.ok for o in outcomes)
    assert await in_flight() == 0
    obs.close()
    invoker.close()


def test_metrics_server_binds_the_port_asked_for_or_a_free_one() -> None:
    metrics = Metrics()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    assert start_metrics_server(free, metrics=metrics) == free
    assert scrape(free)  # the families are there before any call
    with pytest.raises(RuntimeError):
        metrics.serve(0)
    metrics.close()
    assert metrics.port is None
    other = Metrics()
    port = start_metrics_server(0, "127.0.0.1", metrics=other)
    assert port not in (0, free)
    families = {f.name for f in text_string_to_metric_families(_text(port))}
    assert {
        "capability_packs_invocations",
        "capability_packs_invocation_duration_seconds",
        "capability_packs_contract_violations",
        "capability_packs_validation_findings",
        "capability_packs_in_flight",
        "capability_packs_plugin_load_failures",
        "capability_packs_rejected_requests",
        "capability_packs_event_store_dropped",
    } <= families
    other.close()


def _text(port: int) -> str:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return str(response.read().decode())


async def test_through_a_real_grpc_server(tmp_path: Path) -> None:
    """Calls over gRPC; then the endpoint, the event stream and the store agree."""
    registry = make_invoker().registry
    runtime = build_runtime(
        RuntimeConfig(handler_threads=8, trust=TRUST_ALL),
        load=LoadResult(registry, (), get_plugin_manager()),
    )
    events_file = tmp_path / "events.jsonl"
    obs = runtime.observe(
        events=ErrorEvents([FileSink(events_file)]),
        store=IncidentStore(tmp_path / "incidents.db"),
    )
    metrics_port = obs.serve_metrics(0)
    server, port = create_server("127.0.0.1:0", runtime)
    await server.start()
    caught: dict[str, PackCallError] = {}
    try:
        async with AsyncClient(f"127.0.0.1:{port}", timeout=10) as client:
            assert (await client.invoke("t.fail", {"code": "ok"})).ok
            for code in ("not_found", "auth_failed", "secret"):
                with pytest.raises(PackCallError) as err:
                    await client.invoke("t.fail", {"code": code}, request_id=f"rq-{code}")
                caught[code] = err.value
    finally:
        await server.stop(0.5)
    samples = await asyncio.to_thread(scrape, metrics_port)
    assert invocations(samples, "t.fail", "ok", "none") == 1
    assert invocations(samples, "t.fail", "not_found", "pack:t.fail") == 1
    assert invocations(samples, "t.fail", "auth_failed", "pack:t.fail") == 1
    assert invocations(samples, "t.fail", "internal_error", "control_plane") == 1

    internal = caught["secret"]
    assert internal.code == "internal_error"
    ref = internal.reference_id
    assert ref is not None and SECRET not in str(internal)
    assert obs.store is not None
    assert obs.store.flush()
    incident = obs.store.get(ref)
    assert incident is not None
    assert incident.request_id == "rq-secret"
    assert "RuntimeError: upstream rejected password=" in incident.traceback
    assert "Traceback (most recent call last)" in incident.traceback
    assert SECRET not in incident.traceback

    lines = [json.loads(x) for x in events_file.read_text().splitlines()]
    assert [(x["request_id"], x["code"]) for x in lines] == [
        ("rq-not_found", "not_found"),
        ("rq-auth_failed", "auth_failed"),
        ("rq-secret", "internal_error"),
    ]
    assert lines[2]["reference_id"] == ref
    runtime.close()


def test_serve_options_configure_everything(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser(prog="packctl serve")
    add_serve_arguments(parser)
    args = parser.parse_args(
        [
            "--metrics-port",
            "0",
            "--events-file",
            str(tmp_path / "ev" / "events.jsonl"),
            "--incident-db",
            str(tmp_path / "db" / "i.db"),
            "--incident-retention",
            "2d",
            "--incident-max-rows",
            "10",
        ]
    )
    invoker = make_invoker()
    obs = install_configured(
        invoker, observability_config(args), load_failures=[LoadFailure("p", "r")]
    )
    assert obs.store is not None
    assert (obs.store.path, obs.store.max_age, obs.store.max_rows) == (
        tmp_path / "db" / "i.db",
        2 * 86400,
        10,
    )
    port = obs.metrics.port
    assert port is not None
    invoker.invoke_sync("t.fail", {"code": "not_found"})
    assert value(scrape(port), "capability_packs_plugin_load_failures", plugin="p") == 1
    obs.close()
    invoker.close()
    lines = (tmp_path / "ev" / "events.jsonl").read_text().splitlines()
    assert [json.loads(x)["code"] for x in lines] == ["not_found"]
    assert IncidentStore(tmp_path / "db" / "i.db", read_only=True).errors() == [("not_found", 1)]

    quiet = parser.parse_args(["--no-event-stream", "--no-incident-db"])
    invoker = make_invoker()
    obs = install_configured(invoker, observability_config(quiet))
    assert obs.store is None and obs.events.sinks == () and obs.metrics.port is None
    obs.close()
    invoker.close()


def test_flush_writes_the_delayed_event_lines_and_the_store_rows_before_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As served (events on stderr through the delayed writer, the incident store), a
    failure's line and row may wait; ``flush()`` writes both now, without closing."""
    parser = argparse.ArgumentParser(prog="packctl serve")
    add_serve_arguments(parser)
    args = parser.parse_args(["--incident-db", str(tmp_path / "i.db")])
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    invoker = make_invoker()
    obs = install_configured(invoker, observability_config(args))
    try:
        invoker.invoke_sync("t.fail", {"code": "not_found"})
        obs.flush()
        assert [json.loads(x)["code"] for x in stderr.getvalue().splitlines()] == ["not_found"]
        assert IncidentStore(tmp_path / "i.db", read_only=True).errors() == [("not_found", 1)]
        invoker.invoke_sync("t.fail", {"code": "auth_failed"})  # still served after a flush
    finally:
        obs.close()
        invoker.close()
    assert [json.loads(x)["code"] for x in stderr.getvalue().splitlines()] == [
        "not_found",
        "auth_failed",
    ]


def test_latency_and_counts_match_prometheus_clients_own_histogram_under_threads() -> None:
    """The per-call series are plain counters turned into families at scrape time: the
    histogram must say what ``prometheus_client.Histogram`` says for the same durations
    (bounds themselves, zero, past the last bound), and no update may be lost when many
    threads count at once."""
    from prometheus_client import CollectorRegistry, Histogram, generate_latest

    from control_plane._features.observability.metrics import LATENCY_BUCKETS
    from control_plane._kernel.outcome import ErrorEnvelope, Outcome

    invoker = make_invoker()
    metrics = Metrics()
    metrics.prime(invoker.registry)
    loaded = invoker.registry.get("t.fail")
    reference_registry = CollectorRegistry()
    reference = Histogram("ref", "reference", buckets=LATENCY_BUCKETS, registry=reference_registry)
    durations = [0.0, *LATENCY_BUCKETS, *(b * 1.0001 for b in LATENCY_BUCKETS), 61.0, 1e9]
    ok = Outcome.build("t.fail", "3.1.4", "r", result={"ok": True})
    failed = Outcome.build(
        "t.fail",
        "3.1.4",
        "r",
        error=ErrorEnvelope.build(
            code="not_found", message="gone", retryable=False, origin="pack:t.fail"
        ),
    )
    per_thread = 500

    def count() -> None:
        for i in range(per_thread):
            end = metrics.call_started(loaded)
            metrics.call_finished(
                loaded, failed if i % 5 == 0 else ok, durations[i % len(durations)]
            )
            end()

    threads = [threading.Thread(target=count) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for _ in range(8):
        for i in range(per_thread):
            reference.observe(durations[i % len(durations)])

    ours = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(generate_latest(metrics.registry).decode())
        for s in f.samples
    }
    theirs = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(generate_latest(reference_registry).decode())
        for s in f.samples
        if not s.name.endswith("_created")
    }
    hist = "capability_packs_invocation_duration_seconds"
    for (name, labels), expected in theirs.items():
        suffix = name.removeprefix("ref")
        got = ours[(hist + suffix, tuple(sorted((*labels, ("pack", "t.fail")))))]
        assert got == pytest.approx(expected), (suffix, labels)
    calls = 8 * per_thread
    assert ours[(f"{hist}_count", (("pack", "t.fail"),))] == calls
    ok_labels = (("code", "ok"), ("origin", "none"), ("pack", "t.fail"))
    failed_labels = (("code", "not_found"), ("origin", "pack:t.fail"), ("pack", "t.fail"))
    assert ours[("capability_packs_invocations_total", ok_labels)] == calls * 4 / 5
    assert ours[("capability_packs_invocations_total", failed_labels)] == calls / 5
    assert ours[("capability_packs_in_flight", (("pack", "t.fail"),))] == 0
