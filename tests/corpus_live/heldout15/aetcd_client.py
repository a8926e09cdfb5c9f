"""The ``aetcd`` asyncio etcd v3 client (gRPC) as a pack uses it, against real etcd servers
(Debian's ``etcd-server``: one with auth enabled, a small ``--max-request-bytes`` and users with
prefix roles; one whose backend quota is full, the NOSPACE alarm raised) started by the setup.
A 2 s gRPC deadline on every call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import aetcd  # type: ignore[import-untyped]

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    run_async,
    served,
)
from corpus_live.heldout2._daemons import Etcd, etcd

Ctx = Served[Etcd]

FAM = family(
    "aetcd",
    "the aetcd gRPC client against etcd v3 (Debian), real",
    served(etcd),
    half="heldout15",
)

Op = Callable[[Any, Ctx], Awaitable[Any]]


async def _session(c: Ctx, host: str, port: int, user: str | None, pw: str | None, op: Op) -> None:
    client = aetcd.Client(
        host=host, port=port, username=user, password=pw, timeout=2, connect_wait_timeout=2
    )
    try:
        await op(client, c)
    finally:
        await client.close()


def _et(
    op: Op,
    *,
    user: str | None = "app",
    password: str | None = "app-pw",
    host: str = LOOPBACK,
    port: Any = None,
) -> Any:
    def run(c: Ctx) -> None:
        p = port(c) if port is not None else c.server.port
        run_async(_session(c, host, p, user, password, op))

    return run


async def _put(client: Any, c: Ctx) -> Any:
    return await client.put(b"app/config/mode", b"fast")


async def _put_other(client: Any, c: Ctx) -> Any:
    return await client.put(b"billing/limit", b"100")


async def _put_big(client: Any, c: Ctx) -> Any:
    return await client.put(b"app/blob", b"x" * 8192)


async def _revoke_missing(client: Any, c: Ctx) -> Any:
    return await client.revoke_lease(0x5EED1234)


async def _lease_twice(client: Any, c: Ctx) -> Any:
    await client.lease(30, lease_id=0x5EED5678)
    return await client.lease(30, lease_id=0x5EED5678)


FAM.add("wrong_password", AUTH, "authentication failed: bad password", _et(_put, password="nope"))
FAM.add(
    "unknown_user",
    AUTH,
    "authentication failed: no such user",
    _et(_put, user="mallory", password="x"),
)
FAM.add(
    "no_credentials",
    AUTH,
    "auth is enabled and the client sends no token",
    _et(_put, user=None, password=None),
)
FAM.add(
    "read_only_role",
    AUTH,
    "the reader role may only read app/: permission denied",
    _et(_put, user="reader", password="reader-pw"),
)
FAM.add(
    "outside_prefix",
    AUTH,
    "app's role covers app/ only: permission denied",
    _et(_put_other),
)
FAM.add(
    "request_too_large",
    INT | QUOTA,
    "a put above the server's --max-request-bytes",
    _et(_put_big),
)
FAM.add(
    "nospace",
    QUOTA,
    "the backend quota is full: database space exceeded",
    _et(_put, user=None, password=None, port=lambda c: c.server.full_port),
)
FAM.add("lease_not_found", NF, "revoke a lease that does not exist", _et(_revoke_missing))
FAM.add(
    "duplicate_lease",
    EXISTS,
    "grant a lease with an ID that is taken",
    _et(_lease_twice),
)
FAM.add("refused", NET, "nothing listens", _et(_put, port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _et(_put, host=UNRESOLVABLE, port=lambda c: 2379))
FAM.add("silent", TO, "the server never answers", _et(_put, port=lambda c: c.net.silent))
FAM.add("dropped", NET, "the peer closes at once", _et(_put, port=lambda c: c.net.close_now))
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP/2",
    _et(_put, port=lambda c: c.net.garbage),
)
