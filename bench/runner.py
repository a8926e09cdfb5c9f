"""``python -m bench``: the whole benchmark in one run (see ``bench/README.md``).

1. Start the control plane (``packctl serve --plugin bench.packs``) and capture, per
   scenario, exactly what it answers; start the echo server with those bytes.
2. For each round, scenario and concurrency: echo, then control plane (interleaved).
3. Cold start: ``packctl serve`` with 100 packs until ``grpc.health.v1`` says SERVING
   (and with no packs, for the interpreter-and-imports floor).
4. RSS: a fresh control plane, ``VmRSS`` idle, after a warm-up, after N mixed calls.
5. Write ``results.json`` and ``results.md`` (``--out``), print the table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

from bench import report
from bench.echo import method_for
from bench.loadgen import measure, measure_calls
from bench.packs import SECRET, request_document
from bench.peers import MCP_TOOL
from bench.procs import (
    ROOT,
    Server,
    _children,
    _env,
    free_port,
    rss_bytes,
    start_control_plane,
    start_echo,
    start_peer,
    tree_cpu_seconds,
    wait_healthy,
    wait_ready,
)
from bench.scenarios import SCENARIOS, Scenario
from control_plane._features.grpc import status as wire

__all__ = ["main", "run"]

INVOKE = "/control_plane.v1.ControlPlaneService/InvokePack"
#: Peers measured beside the echo and the control plane (see ``bench/peers.py``).
GRPC_PEERS = ("uvloop_echo", "cp_asyncio", "sync_echo", "jsonschema", "jsonschema_rs")
MCP_PEERS = ("mcp_http", "mcp_stdio")
PEERS = GRPC_PEERS + MCP_PEERS
#: The control plane on the synchronous grpc.server (bench/sync_serve.py): opt-in.
EXPERIMENTS = ("cp_sync", "cp_sync_inline")
#: Client channels of the ``--workers`` scaling mode (each its own connection, so the
#: kernel can hand them to different workers).
SCALING_CHANNELS = 8
RESULTS_DIR = Path(__file__).resolve().parent / "results"


# -- capture: what the control plane answers, for the echo to repeat -------------------


async def _capture(
    channel: grpc.aio.Channel, scenario: Scenario
) -> tuple[dict[str, Any], grpc.StatusCode, int]:
    """The echo spec for ``scenario``, its expected status, and the reply size in bytes."""
    call = channel.unary_unary(INVOKE)
    try:
        reply: bytes = await call(scenario.request())
    except grpc.aio.AioRpcError as exc:
        trailers = list(exc.trailing_metadata() or ())
        parsed = wire.parse_status(exc.code(), exc.details(), trailers)
        if parsed.code != scenario.code:
            raise RuntimeError(f"{scenario.key}: expected {scenario.code}, got {parsed}") from None
        blob = repr(trailers).encode() + (exc.details() or "").encode()
        if SECRET.encode() in blob:
            raise RuntimeError(f"{scenario.key}: the planted secret reached the caller") from None
        if scenario.code == "internal_error" and not parsed.pack_error.reference_id:  # type: ignore[union-attr]
            raise RuntimeError("internal_error without a reference id") from None
        spec = {
            "kind": "abort",
            "code": exc.code().name,
            "details": exc.details() or "",
            "trailers": [
                [k, v.hex() if isinstance(v, bytes) else v, isinstance(v, bytes)]
                for k, v in trailers
            ],
        }
        size = len((exc.details() or "").encode()) + sum(len(v) for _, v in trailers)
        return spec, exc.code(), size
    if scenario.code is not None:
        raise RuntimeError(f"{scenario.key}: expected {scenario.code}, the call succeeded")
    return {"kind": "ok", "reply": reply.hex()}, grpc.StatusCode.OK, len(reply)


# -- throughput ---------------------------------------------------------------------


async def _one(
    channel: grpc.aio.Channel,
    server: Server,
    method: str,
    payload: bytes,
    expected: grpc.StatusCode,
    concurrency: int,
    duration: float,
    warmup: float,
) -> dict[str, float]:
    await measure(
        channel,
        method,
        payload,
        expected=expected,
        concurrency=concurrency,
        duration=warmup,
        warmup=0,
    )
    cpu0, client0 = tree_cpu_seconds(server.pid), time.process_time()
    m = await measure(
        channel,
        method,
        payload,
        expected=expected,
        concurrency=concurrency,
        duration=duration,
        warmup=0,
    )
    cpu = tree_cpu_seconds(server.pid) - cpu0
    client = time.process_time() - client0
    if m.unexpected:
        raise RuntimeError(f"{server.name} {method}: {m.unexpected} calls ended unexpectedly")
    return _figures(m, cpu, client)


def _figures(m: Any, cpu: float, client: float) -> dict[str, float]:
    return {
        "rps": m.rps,
        "p50_ms": m.p50_ms,
        "p99_ms": m.p99_ms,
        "cpu_us_per_call": cpu / m.calls * 1e6 if m.calls else float("nan"),
        "client_cpu_us_per_call": client / m.calls * 1e6 if m.calls else float("nan"),
        "calls": m.calls,
    }


async def _one_mcp(
    name: str, call: Any, pid: int, concurrency: int, duration: float, warmup: float
) -> dict[str, float]:
    await measure_calls(call, concurrency=concurrency, duration=warmup, warmup=0)
    cpu0, client0 = tree_cpu_seconds(pid), time.process_time()
    m = await measure_calls(call, concurrency=concurrency, duration=duration, warmup=0)
    cpu = tree_cpu_seconds(pid) - cpu0
    client = time.process_time() - client0
    if m.unexpected:
        raise RuntimeError(f"{name}: {m.unexpected} calls ended unexpectedly")
    return _figures(m, cpu, client)


@contextlib.asynccontextmanager
async def _mcp_clients(peers: Sequence[str]) -> Any:
    """``{name: (call, server pid)}`` for the MCP peers in ``peers`` (the SDK's client)."""
    if not any(p in peers for p in MCP_PEERS):
        yield {}
        return
    from mcp import Client, StdioServerParameters

    arguments = {"document": request_document()}
    out: dict[str, tuple[Any, int]] = {}
    async with contextlib.AsyncExitStack() as stack:

        def caller(client: Any) -> Any:
            async def call() -> None:
                result = await client.call_tool(MCP_TOOL, arguments)
                if result.is_error:
                    raise RuntimeError(f"MCP tool failed: {result}")

            return call

        if "mcp_http" in peers:
            server = stack.enter_context(start_peer("mcp_http", "mcp", "--transport", "http"))
            wait_ready(server)
            client = await stack.enter_async_context(Client(f"{_http(server)}/mcp"))
            out["mcp_http"] = (caller(client), server.pid)
        if "mcp_stdio" in peers:
            before = set(_children(os.getpid()))
            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "bench.peers", "mcp", "--transport", "stdio"],
                env=_env("bench.packs"),
                cwd=str(ROOT),
            )
            client = await stack.enter_async_context(Client(params))
            await client.list_tools()
            spawned = sorted(set(_children(os.getpid())) - before)
            out["mcp_stdio"] = (caller(client), spawned[-1] if spawned else 0)
        yield out


def _http(server: Server) -> str:
    return f"http://{server.target}"


async def _throughput(
    cp: Server,
    echo_specs_dir: Path,
    scenarios: Sequence[Scenario],
    concurrencies: Sequence[int],
    rounds: int,
    duration: float,
    warmup: float,
    log: Any,
    peers: Sequence[str] = (),
    fresh: Sequence[str] | None = None,
    serve_args: Sequence[str] = (),
) -> dict[str, Any]:
    """``fresh``: start a new echo and control plane (with these ``packctl serve``
    arguments) for every round after the first, so that what differs between two processes
    of the same code (hash seeds, memory layout: it lasts a process's life) is averaged over
    the rounds instead of biasing all of them."""
    results: dict[str, Any] = {}
    peer_results: dict[str, Any] = {}
    processes: list[dict[str, int]] = []
    round_servers = contextlib.ExitStack()
    async with contextlib.AsyncExitStack() as stack:
        stack.callback(round_servers.close)
        cp_channel = await stack.enter_async_context(grpc.aio.insecure_channel(cp.target))
        specs: dict[str, dict[str, Any]] = {}
        expected: dict[str, grpc.StatusCode] = {}
        sizes: dict[str, int] = {}
        for sc in scenarios:
            specs[sc.key], expected[sc.key], sizes[sc.key] = await _capture(cp_channel, sc)
        echo = stack.enter_context(start_echo(specs, echo_specs_dir))
        others: dict[str, Server] = {}
        if "uvloop_echo" in peers:
            others["uvloop_echo"] = stack.enter_context(
                start_echo(specs, echo_specs_dir, loop="uvloop")
            )
        if "cp_asyncio" in peers:
            others["cp_asyncio"] = stack.enter_context(
                start_control_plane(
                    name="cp_asyncio",
                    state_dir=echo_specs_dir,
                    extra_args=[*serve_args, "--loop", "asyncio"],
                )
            )
        if "sync_echo" in peers:
            others["sync_echo"] = stack.enter_context(start_echo(specs, echo_specs_dir, sync=True))
        for kind in ("jsonschema", "jsonschema_rs"):
            if kind in peers:
                others[kind] = stack.enter_context(
                    start_peer(kind, "servicer", "--validator", kind)
                )
        for name, mode in (("cp_sync", "loop"), ("cp_sync_inline", "inline")):
            if name in peers:
                port = free_port()
                argv = [sys.executable, "-m", "bench.sync_serve", "--port", str(port)]
                argv += ["--db", str(echo_specs_dir / f"{name}.db"), "--mode", mode]
                others[name] = stack.enter_context(Server(name, argv, port, _env("bench.packs")))
        for name, server in (("echo", echo), *others.items()):
            if name.startswith("cp_"):
                wait_healthy(server)
            else:
                wait_ready(server)
        echo_channel = await stack.enter_async_context(grpc.aio.insecure_channel(echo.target))
        channels = {
            name: await stack.enter_async_context(grpc.aio.insecure_channel(server.target))
            for name, server in others.items()
        }
        mcp = await stack.enter_async_context(_mcp_clients(peers))

        def show(rnd: int, key: str, conc: int, name: str, figures: dict[str, float]) -> None:
            log(
                f"round {rnd + 1}/{rounds} {key:<14} c={conc:<3} "
                f"{name:<13} {figures['rps']:8.0f} req/s  "
                f"p50 {figures['p50_ms']:6.2f} ms  "
                f"p99 {figures['p99_ms']:6.2f} ms  "
                f"cpu {figures['cpu_us_per_call']:5.0f} us/call"
            )

        for rnd in range(rounds):
            if fresh is not None and rnd > 0:
                await echo_channel.close()
                await cp_channel.close()
                round_servers.close()
                echo = round_servers.enter_context(start_echo(specs, echo_specs_dir))
                cp = round_servers.enter_context(
                    start_control_plane(state_dir=echo_specs_dir, extra_args=fresh)
                )
                wait_ready(echo)
                wait_healthy(cp)
                echo_channel = grpc.aio.insecure_channel(echo.target)
                cp_channel = grpc.aio.insecure_channel(cp.target)
            processes.append({"round": rnd + 1, "echo_pid": echo.pid, "control_plane_pid": cp.pid})
            for sc in scenarios:
                payload = sc.request()
                for conc in concurrencies:
                    row = results.setdefault(sc.key, {}).setdefault(
                        str(conc), {"echo": [], "control_plane": []}
                    )
                    for server, channel, method in (
                        (echo, echo_channel, method_for(sc.key)),
                        (cp, cp_channel, INVOKE),
                    ):
                        figures = await _one(
                            channel,
                            server,
                            method,
                            payload,
                            expected[sc.key],
                            conc,
                            duration,
                            warmup,
                        )
                        row[server.name].append(figures)
                        show(rnd, sc.key, conc, server.name, figures)
                    prow = peer_results.setdefault(sc.key, {}).setdefault(str(conc), {})
                    for name, server in others.items():
                        method = method_for(sc.key) if name.endswith("_echo") else INVOKE
                        figures = await _one(
                            channels[name],
                            server,
                            method,
                            payload,
                            expected[sc.key],
                            conc,
                            duration,
                            warmup,
                        )
                        prow.setdefault(name, []).append(figures)
                        show(rnd, sc.key, conc, name, figures)
                    if sc.key != "success":
                        continue  # the MCP peers run the no-op tool only
                    for name, (call, pid) in mcp.items():
                        figures = await _one_mcp(name, call, pid, conc, duration, warmup)
                        prow.setdefault(name, []).append(figures)
                        show(rnd, sc.key, conc, name, figures)
        if fresh is not None and rounds > 1:
            await echo_channel.close()
            await cp_channel.close()
    return {
        "processes": processes,
        "results": results,
        "peers": peer_results,
        "request_bytes": {sc.key: len(sc.request()) for sc in scenarios},
        "reply_bytes": sizes,
        "statuses": {k: v.name for k, v in expected.items()},
    }


# -- scaling: packctl serve --workers N -------------------------------------------------


async def _scaling(
    workers: Sequence[int],
    scenarios: Sequence[Scenario],
    concurrency: int,
    rounds: int,
    duration: float,
    warmup: float,
    state: Path,
    extra: Sequence[str],
    log: Any,
) -> dict[str, Any]:
    """Throughput of ``--workers N`` for each N, interleaved, over several connections."""
    out: dict[str, Any] = {}
    options = (("grpc.use_local_subchannel_pool", 1),)
    per_channel = max(1, concurrency // SCALING_CHANNELS)
    with contextlib.ExitStack() as stack:
        servers = {
            n: stack.enter_context(
                start_control_plane(
                    name=f"workers_{n}",
                    state_dir=state,
                    extra_args=[*extra, "--workers", str(n)],
                )
            )
            for n in workers
        }
        for server in servers.values():
            wait_healthy(server)
        async with contextlib.AsyncExitStack() as astack:
            pools = {
                n: [
                    await astack.enter_async_context(
                        grpc.aio.insecure_channel(server.target, options=options)
                    )
                    for _ in range(SCALING_CHANNELS)
                ]
                for n, server in servers.items()
            }
            for rnd in range(rounds):
                for sc in scenarios:
                    payload = sc.request()
                    status = grpc.StatusCode.OK if sc.code is None else None
                    for n, server in servers.items():
                        figures = await _spread_load(
                            pools[n], server, payload, sc, status, per_channel, duration, warmup
                        )
                        out.setdefault(sc.key, {}).setdefault(str(n), []).append(figures)
                        log(
                            f"round {rnd + 1}/{rounds} scaling {sc.key:<8} workers={n:<2} "
                            f"{figures['rps']:8.0f} req/s  "
                            f"cpu {figures['cpu_us_per_call']:5.0f} us/call"
                        )
    return {"concurrency": per_channel * SCALING_CHANNELS, "channels": SCALING_CHANNELS, **out}


async def _spread_load(
    channels: Sequence[grpc.aio.Channel],
    server: Server,
    payload: bytes,
    sc: Scenario,
    status: grpc.StatusCode | None,
    per_channel: int,
    duration: float,
    warmup: float,
) -> dict[str, float]:
    expected = status if status is not None else _status_of(sc)

    async def window(seconds: float) -> list[Any]:
        return list(
            await asyncio.gather(
                *(
                    measure(
                        ch,
                        INVOKE,
                        payload,
                        expected=expected,
                        concurrency=per_channel,
                        duration=seconds,
                        warmup=0,
                    )
                    for ch in channels
                )
            )
        )

    await window(warmup)
    cpu0, client0 = tree_cpu_seconds(server.pid), time.process_time()
    parts = await window(duration)
    cpu = tree_cpu_seconds(server.pid) - cpu0
    client = time.process_time() - client0
    calls = sum(p.calls for p in parts)
    if any(p.unexpected for p in parts):
        raise RuntimeError(f"{server.name}: calls ended unexpectedly")
    seconds = max(p.seconds for p in parts)
    return {
        "rps": calls / seconds,
        "cpu_us_per_call": cpu / calls * 1e6 if calls else float("nan"),
        "client_cpu_us_per_call": client / calls * 1e6 if calls else float("nan"),
        "calls": calls,
    }


def _status_of(sc: Scenario) -> grpc.StatusCode:
    return {
        "network_error": grpc.StatusCode.UNAVAILABLE,
        "artifact_failed": grpc.StatusCode.FAILED_PRECONDITION,
        "internal_error": grpc.StatusCode.INTERNAL,
    }[sc.code or ""]


# -- cold start and RSS --------------------------------------------------------------


def _cold_start(repeats: int, state: Path, extra: Sequence[str], log: Any) -> dict[str, Any]:
    with_packs: list[float] = []
    no_packs: list[float] = []
    for _ in range(repeats):
        with start_control_plane(
            "bench.many_packs", name="cold_100", state_dir=state, extra_args=extra
        ) as server:
            with_packs.append(wait_healthy(server))
            wait_healthy(server, "many.pack_099", timeout=5)
        with start_control_plane("", name="cold_0", state_dir=state, extra_args=extra) as server:
            no_packs.append(wait_healthy(server))
        log(f"cold start: 100 packs {with_packs[-1]:.3f} s, no packs {no_packs[-1]:.3f} s")
    return {"with_100_packs_s": with_packs, "no_packs_s": no_packs}


async def _mixed_calls(target: str, payloads: Sequence[bytes], calls: int, concurrency: int) -> int:
    done = 0
    async with grpc.aio.insecure_channel(target) as channel:
        call = channel.unary_unary(INVOKE)

        async def worker() -> None:
            nonlocal done
            while done < calls:
                payload = payloads[done % len(payloads)]
                done += 1
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await call(payload)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done


def _rss(
    calls: int, warmup_calls: int, state: Path, extra: Sequence[str], log: Any
) -> dict[str, Any]:
    payloads = [sc.request() for sc in SCENARIOS]
    with start_control_plane(name="control_plane_rss", state_dir=state, extra_args=extra) as server:
        wait_healthy(server)
        time.sleep(0.2)
        idle = rss_bytes(server.pid)
        asyncio.run(_mixed_calls(server.target, payloads, warmup_calls, 16))
        warm = rss_bytes(server.pid)
        t0 = time.perf_counter()
        asyncio.run(_mixed_calls(server.target, payloads, calls, 16))
        seconds = time.perf_counter() - t0
        after = rss_bytes(server.pid)
    mib = 1024 * 1024
    log(
        f"RSS: idle {idle / mib:.1f} MiB, after {warmup_calls} warm-up calls {warm / mib:.1f} MiB,"
        f" after {calls} mixed calls {after / mib:.1f} MiB ({seconds:.1f} s)"
    )
    return {
        "calls": calls,
        "warmup_calls": warmup_calls,
        "concurrency": 16,
        "seconds": seconds,
        "idle_bytes": idle,
        "warm_bytes": warm,
        "after_bytes": after,
        "growth_from_idle_mib": (after - idle) / mib,
        "growth_from_warm_mib": (after - warm) / mib,
    }


# -- entry point ---------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run every part of the benchmark; the JSON document (also written to ``args.out``)."""

    def log(text: str) -> None:
        if not args.silent:
            print(text, file=sys.stderr, flush=True)

    scenarios = [sc for sc in SCENARIOS if sc.key in args.scenarios]
    machine = report.machine_info()
    started = time.time()
    extra = args.serve_args.split()
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp_name:
        tmp = Path(tmp_name)
        with start_control_plane(state_dir=tmp, extra_args=extra) as cp:
            wait_healthy(cp)
            throughput = asyncio.run(
                _throughput(
                    cp,
                    tmp,
                    scenarios,
                    args.concurrency,
                    args.rounds,
                    args.duration,
                    args.warmup,
                    log,
                    args.peers,
                    extra if args.fresh_servers else None,
                    extra,
                )
            )
        scaling = None
        if len(args.workers) > 1:
            scaling = asyncio.run(
                _scaling(
                    args.workers,
                    [sc for sc in scenarios if sc.key in ("success", "error")],
                    16,
                    args.rounds,
                    args.duration,
                    args.warmup,
                    tmp,
                    extra,
                    log,
                )
            )
        cold = _cold_start(args.cold_starts, tmp, extra, log) if args.cold_starts else None
        rss = (
            _rss(args.rss_calls, min(1000, args.rss_calls), tmp, extra, log)
            if args.rss_calls
            else None
        )
    machine["loadavg_end"] = report.loadavg()
    doc = report.build(
        machine=machine,
        settings={
            "duration_s": args.duration,
            "warmup_s": args.warmup,
            "rounds": args.rounds,
            "concurrency": list(args.concurrency),
            "scenarios": [sc.key for sc in scenarios],
            "rss_calls": args.rss_calls,
            "cold_starts": args.cold_starts,
            "serve_args": extra,
            "peers": list(args.peers),
            "workers": list(args.workers),
            "fresh_servers": args.fresh_servers,
            "wall_s": round(time.time() - started, 1),
        },
        scenarios=scenarios,
        throughput=throughput,
        scaling=scaling,
        cold=cold,
        rss=rss,
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.name}.json").write_text(report.to_json(doc))
    markdown = report.markdown(doc)
    (out / f"{args.name}.md").write_text(markdown)
    if not args.silent:
        print(markdown)
    log(f"wrote {out / args.name}.json and .md")
    return doc


def _concurrency(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError("a comma-separated list of positive integers")
    return values


def _peers(text: str) -> list[str]:
    if text.strip() == "none":
        return []
    names = [p for p in text.split(",") if p]
    unknown = set(names) - set(PEERS) - set(EXPERIMENTS)
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown peers: {', '.join(sorted(unknown))}")
    return names


def _workers_list(text: str) -> list[int]:
    from control_plane._features.grpc.workers import parse_workers

    try:
        values = [parse_workers(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return sorted(set(values))


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="The control plane against a bare grpc.aio echo server (see bench/README.md).",
    )
    parser.add_argument("--duration", type=float, default=None, help="seconds per window (3)")
    parser.add_argument("--warmup", type=float, default=None, help="warm-up seconds (0.5)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (3)")
    parser.add_argument(
        "--concurrency", type=_concurrency, default=[1, 16, 64], help="e.g. 1,16,64 (default)"
    )
    parser.add_argument(
        "--scenarios",
        type=lambda s: [p for p in s.split(",") if p],
        default=[sc.key for sc in SCENARIOS],
        help="subset of " + ",".join(sc.key for sc in SCENARIOS),
    )
    parser.add_argument("--rss-calls", type=int, default=None, help="mixed calls (100000)")
    parser.add_argument("--cold-starts", type=int, default=None, help="cold starts (3)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one short round, 2k calls for RSS, one cold start (a smoke run: seconds)",
    )
    parser.add_argument(
        "--serve-args",
        default="",
        metavar="ARGS",
        help="extra `packctl serve` arguments, e.g. '--no-incident-db' (default: none)",
    )
    parser.add_argument(
        "--peers",
        type=_peers,
        default=list(PEERS),
        metavar="LIST",
        help="peers measured beside the echo: " + ",".join(PEERS) + " (default all; none);"
        " also the experiments " + ",".join(EXPERIMENTS),
    )
    parser.add_argument(
        "--workers",
        type=_workers_list,
        default=None,
        metavar="LIST",
        help="scaling mode: packctl serve --workers N for each N, e.g. 1,2 (default 1,auto;"
        " 1 alone skips it)",
    )
    parser.add_argument(
        "--fresh-servers",
        action="store_true",
        help="a new echo and control plane for every round (averages what differs between"
        " two processes of the same code over the rounds)",
    )
    parser.add_argument("--out", default=str(RESULTS_DIR), help="directory for the results")
    parser.add_argument("--name", default="results", help="file stem (results.json/.md)")
    parser.add_argument("--silent", action="store_true", help="no progress, no table")
    args = parser.parse_args(argv)
    quick = {"duration": 0.5, "warmup": 0.1, "rounds": 1, "rss_calls": 2000, "cold_starts": 1}
    full = {"duration": 3.0, "warmup": 0.5, "rounds": 3, "rss_calls": 100_000, "cold_starts": 3}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.workers is None:
        args.workers = _workers_list("1,auto")
    unknown = set(args.scenarios) - {sc.key for sc in SCENARIOS}
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    run(parse_args(argv))
    return 0
