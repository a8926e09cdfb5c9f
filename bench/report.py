"""Aggregation (median [min-max] over rounds, paired ratios), machine info, Markdown, JSON."""

from __future__ import annotations

import datetime
import os
import platform
import statistics
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from bench.scenarios import Scenario

__all__ = ["build", "loadavg", "machine_info", "markdown", "spread", "to_json"]

SETUP = (
    "Three processes on one machine: the load generator (this process: one grpc.aio channel"
    " per server, a closed loop of N tasks, the request serialized once and sent as raw bytes"
    " through a generic unary-unary stub without serializers), the control plane (`packctl"
    " serve --plugin bench.packs`, JSON logs to a file) and a bare grpc.aio echo server that"
    " answers each scenario with exactly the bytes the control plane answered (same reply, or"
    " the same status, message and grpc-status-details-bin trailer). No CPU pinning: with 2"
    " cores the three processes share them, so the client's own cost is in every figure and"
    " ratios are compressed toward 1 when the client saturates a core. Rounds interleave"
    " echo and control plane per scenario and concurrency; ratios are paired per round."
)

DASH = "\u2013"  # en dash, for "median [min-max]"

PACKAGES = ("grpcio", "protobuf", "orjson", "jsonschema-rs", "pydantic", "pydantic-core")


def loadavg() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info() -> dict[str, Any]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "kernel": platform.release(),
        "packages": versions,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "loadavg_start": loadavg(),
    }


def spread(values: Sequence[float]) -> dict[str, float]:
    """``{median, min, max}`` of ``values``."""
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
    }


def _summarize(row: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
    echo, cp = row["echo"], row["control_plane"]
    out: dict[str, Any] = {}
    for key in ("rps", "p50_ms", "p99_ms", "cpu_us_per_call", "client_cpu_us_per_call"):
        out[key] = {
            "echo": spread([r[key] for r in echo]),
            "control_plane": spread([r[key] for r in cp]),
        }
    out["ratio_rps"] = spread([c["rps"] / e["rps"] for c, e in zip(cp, echo, strict=True)])
    out["ratio_p50"] = spread([c["p50_ms"] / e["p50_ms"] for c, e in zip(cp, echo, strict=True)])
    out["ratio_p99"] = spread([c["p99_ms"] / e["p99_ms"] for c, e in zip(cp, echo, strict=True)])
    out["ratio_cpu"] = spread(
        [c["cpu_us_per_call"] / e["cpu_us_per_call"] for c, e in zip(cp, echo, strict=True)]
    )
    return out


def build(
    *,
    machine: dict[str, Any],
    settings: dict[str, Any],
    scenarios: Sequence[Scenario],
    throughput: dict[str, Any],
    cold: dict[str, Any] | None,
    rss: dict[str, Any] | None,
) -> dict[str, Any]:
    """The JSON document: raw rounds, summaries and the targets."""
    summary: dict[str, dict[str, Any]] = {}
    for sc in scenarios:
        summary[sc.key] = {
            conc: _summarize(row) for conc, row in throughput["results"][sc.key].items()
        }
    targets: list[dict[str, Any]] = []
    for sc in scenarios:
        at16 = summary[sc.key].get("16")
        if at16 is None:
            continue
        if sc.target_ratio is not None:
            ratio = at16["ratio_rps"]["median"]
            targets.append(
                {
                    "target": f"{sc.key}: throughput >= {sc.target_ratio:.2f}x echo at 16",
                    "measured": round(ratio, 3),
                    "met": ratio >= sc.target_ratio,
                }
            )
            p99 = at16["ratio_p99"]["median"]
            targets.append(
                {
                    "target": f"{sc.key}: p99 <= 1.25x echo at 16",
                    "measured": round(p99, 3),
                    "met": p99 <= 1.25,
                }
            )
    if cold is not None:
        cold["summary"] = {
            "with_100_packs_s": spread(cold["with_100_packs_s"]),
            "no_packs_s": spread(cold["no_packs_s"]),
        }
        value = cold["summary"]["with_100_packs_s"]["median"]
        targets.append(
            {
                "target": "100 packs load and serve health within 1 s",
                "measured": round(value, 3),
                "met": value <= 1.0,
            }
        )
    if rss is not None:
        growth = rss["growth_from_idle_mib"]
        targets.append(
            {
                "target": f"RSS growth after {rss['calls']} mixed calls < 20 MiB",
                "measured": round(growth, 2),
                "met": growth < 20,
            }
        )
    return {
        "machine": machine,
        "settings": settings,
        "setup": SETUP,
        "scenarios": {
            sc.key: {
                "pack": sc.pack,
                "title": sc.title,
                "strict": sc.strict,
                "expected_code": sc.code,
                "grpc_status": throughput["statuses"][sc.key],
                "request_bytes": throughput["request_bytes"][sc.key],
                "reply_bytes": throughput["reply_bytes"][sc.key],
            }
            for sc in scenarios
        },
        "throughput": {"rounds": throughput["results"], "summary": summary},
        "cold_start": cold,
        "rss": rss,
        "targets": targets,
    }


def to_json(doc: dict[str, Any]) -> str:
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


def _fmt(s: dict[str, float], digits: int = 0, suffix: str = "") -> str:
    f = f"{{:.{digits}f}}"
    med = f.format(s["median"])
    return f"{med}{suffix} [{f.format(s['min'])}{DASH}{f.format(s['max'])}]"


def markdown(doc: dict[str, Any]) -> str:
    """The results as a Markdown document (machine, setup, table, targets)."""
    m = doc["machine"]
    st = doc["settings"]
    pkgs = ", ".join(f"{k} {v}" for k, v in m["packages"].items())
    lines = [
        "# Benchmark: control plane vs bare grpc.aio echo",
        "",
        f"- date: {m['date']}; machine: {m['cpu_model']}, {m['cores']} cores, "
        f"{m['implementation']} {m['python']}, Linux {m['kernel']}",
        f"- packages: {pkgs}",
        f"- load average at start {m['loadavg_start']}, at end {m.get('loadavg_end')}",
        f"- {st['rounds']} interleaved round(s) of {st['duration_s']:g} s per window "
        f"(after {st['warmup_s']:g} s warm-up), concurrency {st['concurrency']}; "
        f"wall time {st['wall_s']} s",
        "",
        doc["setup"],
        "",
        f"Figures are median [min{DASH}max] over rounds; ratios are control plane / echo, "
        "paired per round. CPU is the server process's CPU time per call; client CPU is the "
        "load generator's own, per call (against the echo): on 2 shared cores it bounds the "
        "achievable ratio.",
        "",
    ]
    for key, sc in doc["scenarios"].items():
        lines.append(
            f"- **{key}**: {sc['title']}; ends {sc['expected_code'] or 'OK'} "
            f"(gRPC {sc['grpc_status']}), request {sc['request_bytes']} B, "
            f"reply {sc['reply_bytes']} B"
        )
    lines += [
        "",
        "| path | conc | echo req/s | control plane req/s | ratio | echo p50 ms | cp p50 ms "
        "| echo p99 ms | cp p99 ms | p99 ratio | CPU µs/call echo / cp | client CPU µs/call |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, by_conc in doc["throughput"]["summary"].items():
        for conc, s in by_conc.items():
            lines.append(
                f"| {key} | {conc} | {_fmt(s['rps']['echo'])} | {_fmt(s['rps']['control_plane'])}"
                f" | {_fmt(s['ratio_rps'], 2)} | {_fmt(s['p50_ms']['echo'], 2)}"
                f" | {_fmt(s['p50_ms']['control_plane'], 2)} | {_fmt(s['p99_ms']['echo'], 2)}"
                f" | {_fmt(s['p99_ms']['control_plane'], 2)} | {_fmt(s['ratio_p99'], 2)}"
                f" | {s['cpu_us_per_call']['echo']['median']:.0f} / "
                f"{s['cpu_us_per_call']['control_plane']['median']:.0f} "
                f"| {s['client_cpu_us_per_call']['echo']['median']:.0f} |"
            )
    cold = doc.get("cold_start")
    if cold is not None:
        c = cold["summary"]
        lines += [
            "",
            f"Cold start (`packctl serve` spawned until `grpc.health.v1` reports SERVING): "
            f"100 packs {_fmt(c['with_100_packs_s'], 3, ' s')}, "
            f"no packs (interpreter + imports) {_fmt(c['no_packs_s'], 3, ' s')}.",
        ]
    rss = doc.get("rss")
    if rss is not None:
        mib = 1024 * 1024
        lines += [
            "",
            f"RSS (`VmRSS`): idle {rss['idle_bytes'] / mib:.1f} MiB, after "
            f"{rss['warmup_calls']} warm-up calls {rss['warm_bytes'] / mib:.1f} MiB, after "
            f"{rss['calls']} mixed calls (all four paths, 16 concurrent) "
            f"{rss['after_bytes'] / mib:.1f} MiB: growth {rss['growth_from_idle_mib']:.1f} MiB "
            f"from idle, {rss['growth_from_warm_mib']:.1f} MiB from warm.",
        ]
    lines += ["", "| target | measured | met |", "|---|---:|:---:|"]
    for t in doc["targets"]:
        lines.append(f"| {t['target']} | {t['measured']} | {'yes' if t['met'] else '**no**'} |")
    return "\n".join(lines) + "\n"
