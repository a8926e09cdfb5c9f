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


PEER_TITLES = {
    "uvloop_echo": "the same bare `grpc.aio` echo on uvloop (the control plane's default loop)",
    "cp_asyncio": "the control plane on the standard library's loop (`packctl serve --loop "
    "asyncio`)",
    "sync_echo": "bare synchronous `grpc.server` echo (16 threads), same bytes",
    "jsonschema": "hand-written `grpc.aio` servicer, same handlers, validating with `jsonschema`",
    "jsonschema_rs": "the same servicer validating with `jsonschema_rs`",
    "mcp_http": "the MCP SDK's server (`MCPServer`), same no-op tool, streamable HTTP, SDK client",
    "mcp_stdio": "the MCP SDK's server, same no-op tool, stdio, SDK client",
    "cp_sync": "experiment: the control plane on the synchronous `grpc.server` (16 threads), "
    "invocations on one event-loop thread (bench/sync_serve.py)",
    "cp_sync_inline": "experiment: the same, each grpc thread running the invocation on a loop "
    "of its own (a ceiling: an awaiting pack holds a thread)",
}
#: The control plane must be at least this many times the MCP SDK server's calls/s.
MCP_FAR_AHEAD = 2.0


def _summarize_peers(
    peers: dict[str, Any], results: dict[str, Any]
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per scenario, concurrency and peer: figures and ratios paired with the same round."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for key, by_conc in peers.items():
        for conc, by_peer in by_conc.items():
            echo = results[key][conc]["echo"]
            cp = results[key][conc]["control_plane"]
            for name, rounds in by_peer.items():
                out.setdefault(key, {}).setdefault(conc, {})[name] = {
                    "rps": spread([r["rps"] for r in rounds]),
                    "p50_ms": spread([r["p50_ms"] for r in rounds]),
                    "p99_ms": spread([r["p99_ms"] for r in rounds]),
                    "cpu_us_per_call": spread([r["cpu_us_per_call"] for r in rounds]),
                    "client_cpu_us_per_call": spread([r["client_cpu_us_per_call"] for r in rounds]),
                    "peer_over_echo": spread(
                        [p["rps"] / e["rps"] for p, e in zip(rounds, echo, strict=True)]
                    ),
                    "control_plane_over_peer": spread(
                        [c["rps"] / p["rps"] for c, p in zip(cp, rounds, strict=True)]
                    ),
                }
    return out


def _summarize_scaling(scaling: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, by_n in scaling.items():
        if not isinstance(by_n, dict):
            continue
        base = by_n[min(by_n, key=int)]
        for n, rounds in by_n.items():
            out.setdefault(key, {})[n] = {
                "rps": spread([r["rps"] for r in rounds]),
                "cpu_us_per_call": spread([r["cpu_us_per_call"] for r in rounds]),
                "client_cpu_us_per_call": spread([r["client_cpu_us_per_call"] for r in rounds]),
                "speedup": spread([r["rps"] / b["rps"] for r, b in zip(rounds, base, strict=True)]),
            }
    return out


def build(
    *,
    machine: dict[str, Any],
    settings: dict[str, Any],
    scenarios: Sequence[Scenario],
    throughput: dict[str, Any],
    cold: dict[str, Any] | None,
    rss: dict[str, Any] | None,
    scaling: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON document: raw rounds, summaries and the targets."""
    summary: dict[str, dict[str, Any]] = {}
    for sc in scenarios:
        summary[sc.key] = {
            conc: _summarize(row) for conc, row in throughput["results"][sc.key].items()
        }
    peers = _summarize_peers(throughput.get("peers", {}), throughput["results"])
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
        if sc.p99_target:
            p99 = at16["ratio_p99"]["median"]
            targets.append(
                {
                    "target": f"{sc.key}: p99 <= 1.25x echo at 16",
                    "measured": round(p99, 3),
                    "met": p99 <= 1.25,
                }
            )
    rs = peers.get("error", {}).get("16", {}).get("jsonschema_rs")
    if rs is not None:
        level = rs["control_plane_over_peer"]["median"]
        targets.append(
            {
                "target": "error: at least level with a jsonschema_rs servicer at 16 (cp / peer)",
                "measured": round(level, 3),
                "met": level >= 1.0,
            }
        )
    for name in ("mcp_http", "mcp_stdio"):
        found = peers.get("success", {}).get("16", {}).get(name)
        if found is not None:
            ahead = found["control_plane_over_peer"]["median"]
            targets.append(
                {
                    "target": f"success: far ahead of the MCP SDK server ({name}) at 16: "
                    f">= {MCP_FAR_AHEAD:g}x its calls/s",
                    "measured": round(ahead, 3),
                    "met": ahead >= MCP_FAR_AHEAD,
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
        "throughput": {
            "rounds": throughput["results"],
            "summary": summary,
            "processes": throughput.get("processes", []),
        },
        "peers": {"rounds": throughput.get("peers", {}), "summary": peers},
        "scaling": (
            None
            if scaling is None
            else {
                "concurrency": scaling["concurrency"],
                "channels": scaling["channels"],
                "rounds": {k: v for k, v in scaling.items() if isinstance(v, dict)},
                "summary": _summarize_scaling(scaling),
            }
        ),
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
        f"- {st['rounds']} interleaved round(s) of {st['duration_s']:g} s per window"
        f"{' (a new echo and control plane per round)' if st.get('fresh_servers') else ''} "
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
    peers = doc.get("peers", {}).get("summary", {})
    if peers:
        lines += [
            "",
            "Peers, measured in the same rounds (interleaved after the echo and the control "
            "plane; ratios paired per round): what a user would pick instead.",
            "",
        ]
        names = sorted({n for c in peers.values() for p in c.values() for n in p})
        lines += [f"- **{n}**: {PEER_TITLES.get(n, n)}" for n in names]
        lines += [
            "",
            "| path | conc | peer | peer req/s | peer / echo | control plane / peer "
            "| peer p99 ms | CPU µs/call peer | client CPU µs/call |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|",
        ]
        for key, by_conc in peers.items():
            for conc, by_peer in by_conc.items():
                for name, f in by_peer.items():
                    lines.append(
                        f"| {key} | {conc} | {name} | {_fmt(f['rps'])} "
                        f"| {_fmt(f['peer_over_echo'], 2)} "
                        f"| **{_fmt(f['control_plane_over_peer'], 2)}** "
                        f"| {_fmt(f['p99_ms'], 2)} | {f['cpu_us_per_call']['median']:.0f} "
                        f"| {f['client_cpu_us_per_call']['median']:.0f} |"
                    )
    scaling = doc.get("scaling")
    if scaling is not None:
        lines += [
            "",
            f"Scaling (`packctl serve --workers N`, {scaling['concurrency']} concurrent calls "
            f"over {scaling['channels']} client channels, each its own connection; the load "
            "generator is one process on the same cores; CPU is the supervisor's and every "
            "worker's):",
            "",
            "| path | workers | req/s | speedup vs 1 | CPU µs/call (all workers) "
            "| client CPU µs/call |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for key, by_n in scaling["summary"].items():
            for n, f in by_n.items():
                lines.append(
                    f"| {key} | {n} | {_fmt(f['rps'])} | {_fmt(f['speedup'], 2)} "
                    f"| {f['cpu_us_per_call']['median']:.0f} "
                    f"| {f['client_cpu_us_per_call']['median']:.0f} |"
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
