"""The load generator: a closed loop of raw-bytes unary calls on one ``grpc.aio`` channel.

The request is serialized once; the stub has no serializers (bytes in, bytes out), so the
client does no protobuf work per call. ``concurrency`` tasks each issue one call at a time
for ``duration`` seconds; every call's latency is kept. A call that ends with another
status than the expected one is counted as unexpected (the run then reports it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import grpc

__all__ = ["CHANNEL_OPTIONS", "Measurement", "measure", "measure_calls", "percentile"]

#: Reconnect quickly (cold-start timing polls servers that are not up yet).
CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 20),
    ("grpc.min_reconnect_backoff_ms", 20),
    ("grpc.max_reconnect_backoff_ms", 100),
)


@dataclass(frozen=True, slots=True)
class Measurement:
    """One timed window against one server."""

    calls: int
    seconds: float
    rps: float
    p50_ms: float
    p99_ms: float
    unexpected: int


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(fraction * len(sorted_values)) - 1))
    return sorted_values[index]


async def _closed_loop(
    call: grpc.aio.UnaryUnaryMultiCallable,
    payload: bytes,
    expected: grpc.StatusCode,
    concurrency: int,
    duration: float,
) -> tuple[list[float], int, float]:
    latencies: list[float] = []
    append = latencies.append
    clock = time.perf_counter
    unexpected = 0
    ok = expected == grpc.StatusCode.OK
    started = clock()
    stop_at = started + duration

    async def worker() -> None:
        nonlocal unexpected
        while True:
            t0 = clock()
            if t0 >= stop_at:
                return
            try:
                await call(payload)
                if not ok:
                    unexpected += 1
            except grpc.aio.AioRpcError as exc:
                if exc.code() != expected:
                    unexpected += 1
            append(clock() - t0)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies, unexpected, clock() - started


async def measure(
    channel: grpc.aio.Channel,
    method: str,
    payload: bytes,
    *,
    expected: grpc.StatusCode,
    concurrency: int,
    duration: float,
    warmup: float,
) -> Measurement:
    """Warm up for ``warmup`` seconds, then measure a ``duration``-second window."""
    call = channel.unary_unary(method)
    if warmup > 0:
        await _closed_loop(call, payload, expected, concurrency, warmup)
    latencies, unexpected, seconds = await _closed_loop(
        call, payload, expected, concurrency, duration
    )
    latencies.sort()
    return Measurement(
        calls=len(latencies),
        seconds=seconds,
        rps=len(latencies) / seconds if seconds > 0 else 0.0,
        p50_ms=percentile(latencies, 0.50) * 1000,
        p99_ms=percentile(latencies, 0.99) * 1000,
        unexpected=unexpected,
    )


async def measure_calls(
    call: Callable[[], Awaitable[object]],
    *,
    concurrency: int,
    duration: float,
    warmup: float,
) -> Measurement:
    """:func:`measure` for any awaitable call (e.g. an MCP client's ``call_tool``).

    ``call`` raises on an unexpected outcome; such calls are counted as unexpected.
    """
    clock = time.perf_counter

    async def window(seconds: float) -> tuple[list[float], int, float]:
        latencies: list[float] = []
        unexpected = 0
        started = clock()
        stop_at = started + seconds

        async def worker() -> None:
            nonlocal unexpected
            while True:
                t0 = clock()
                if t0 >= stop_at:
                    return
                try:
                    await call()
                except Exception:  # noqa: BLE001 - counted, reported by the run
                    unexpected += 1
                latencies.append(clock() - t0)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return latencies, unexpected, clock() - started

    if warmup > 0:
        await window(warmup)
    latencies, unexpected, seconds = await window(duration)
    latencies.sort()
    return Measurement(
        calls=len(latencies),
        seconds=seconds,
        rps=len(latencies) / seconds if seconds > 0 else 0.0,
        p50_ms=percentile(latencies, 0.50) * 1000,
        p99_ms=percentile(latencies, 0.99) * 1000,
        unexpected=unexpected,
    )
