"""upstash-redis (Upstash's Redis-over-HTTP SDK, its asyncio client, httpx underneath)
against a fake Upstash REST endpoint on 127.0.0.1 answering Upstash's bodies (``{"error":
"..."}``: Redis error replies and the plan limits Upstash enforces, on HTTP 400, and 401 for
a bad token): a wrong token, a read-only token, Redis errors (wrong type, not an integer,
an unknown script), the plan's request, data-size and request-size limits, ``maxmemory``,
a proxy's HTML page; plus the transport failures. The SDK sets no timeout of its own
(``httpx`` with ``timeout=None``), so the pack bounds each call with ``asyncio.wait_for``;
its retries are off (``rest_retries=0``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    QUOTA,
    Http,
    family,
    http_setup,
    run_async,
    transport_cases,
)

FAM = family("upstash-redis", "fake Upstash Redis REST API", http_setup, half="heldout18")

Op = Callable[[Any], Coroutine[Any, Any, Any]]


async def _with(url: str, op: Op) -> Any:
    from upstash_redis.asyncio import Redis

    redis = Redis(
        url,
        "AX1aAAIjcDE0PLANTEDupstashRestToken5f6a7b8c9d0e1f",
        rest_retries=0,
        allow_telemetry=False,
    )
    try:
        return await asyncio.wait_for(op(redis), 1.0)
    finally:
        await redis.close()


async def _set(r: Any) -> Any:
    return await r.set("session:4f2a", "eyJ1c2VyIjo0Mn0=", ex=3600)


async def _lpush(r: Any) -> Any:
    return await r.lpush("session:4f2a", "event")


async def _incr(r: Any) -> Any:
    return await r.incr("quota:tenant:17")


async def _evalsha(r: Any) -> Any:
    return await r.evalsha("e0e1f9fabfc9d4800c877a703b823ac0578ff8db", keys=["quota:tenant:17"])


def _call(op: Op = _set) -> Callable[[str], Any]:
    return lambda url: run_async(_with(url, op))


def _row(
    id: str,
    status: int,
    body: Any,
    expect: frozenset[str],
    why: str,
    op: Op = _set,
    content_type: str = "application/json",
) -> None:
    def run(ctx: Http) -> Any:
        ctx.http.set(status, body, {}, content_type)
        return _call(op)(ctx.http.url)

    FAM.add(id, expect, f"HTTP {status}: {why}", run)


_row("unauthorized", 401, {"error": "Unauthorized"}, AUTH, "the REST token is wrong")
_row(
    "read_only_token",
    400,
    {"error": "NOPERM this user has no permissions to run the 'set' command"},
    AUTH,
    "a read-only token was used for a write",
)
_row(
    "wrongtype",
    400,
    {"error": "WRONGTYPE Operation against a key holding the wrong kind of value"},
    INT,
    "the key holds a string, not a list (the caller's data model)",
    _lpush,
)
_row(
    "not_integer",
    400,
    {"error": "ERR value is not an integer or out of range"},
    INT,
    "INCR on a value that is not a number",
    _incr,
)
_row(
    "noscript",
    400,
    {"error": "NOSCRIPT No matching script. Please use EVAL."},
    NF,
    "the script's SHA is not loaded on the database",
    _evalsha,
)
_row(
    "max_requests",
    400,
    {
        "error": "ERR max requests limit exceeded. Limit: 500000, Usage: 500000. See "
        "https://upstash.com/docs/redis/troubleshooting/max_requests_limit for details"
    },
    QUOTA,
    "the plan's monthly command allowance is spent",
)
_row(
    "max_data_size",
    400,
    {
        "error": "ERR max data size exceeded. Limit: 268435456 Bytes, Usage: 268435456 "
        "Bytes. See https://upstash.com/docs/redis/troubleshooting/max_data_size_exceeded "
        "for details"
    },
    QUOTA,
    "the database holds as much data as the plan allows",
)
_row(
    "max_request_size",
    400,
    {
        "error": "ERR max request size exceeded. Limit: 1048576 Bytes, Usage: 2097204 "
        "Bytes. See https://upstash.com/docs/redis/troubleshooting/max_request_size_exceeded "
        "for details"
    },
    INT | QUOTA,
    "one command is larger than the plan's request size",
)
_row(
    "oom",
    400,
    {"error": "OOM command not allowed when used memory > 'maxmemory'."},
    QUOTA,
    "the database is at its memory limit and evicts nothing",
)
_row(
    "proxy_502",
    502,
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
    NET | INT,
    "the edge proxy reached no database node (an HTML page the SDK parses as JSON)",
    content_type="text/html",
)
transport_cases(
    FAM,
    lambda host, port: _call()(f"http://{host}:{port}"),
    dns_port=80,
    silent="server never answers (the pack's deadline)",
)
