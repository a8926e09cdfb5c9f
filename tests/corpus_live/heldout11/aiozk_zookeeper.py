"""aiozk (an asyncio ZooKeeper client) used as a pack uses it (``ZKClient`` with a short session
timeout and a one-try retry policy, digest credentials sent with an auth request, every call
under the pack's own deadline) against a real ZooKeeper (Debian's ``zookeeper``: znodes made
by the setup, some behind digest ACLs). The failure is aiozk's exception for the server's
error code, or the pack's deadline where aiozk keeps trying to reach a server. Nothing is
faked."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import aiozk  # type: ignore[import-untyped]
from aiozk import protocol

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout3._daemons import ZooKeeper, zookeeper

Ctx = Served[ZooKeeper]


def _digest(user: str, password: str) -> str:
    raw = hashlib.sha1(f"{user}:{password}".encode()).digest()
    return f"{user}:{base64.b64encode(raw).decode()}"


async def _auth(zk: aiozk.ZKClient, user: str, password: str) -> None:
    await zk.send(protocol.AuthRequest(type=0, scheme="digest", auth=f"{user}:{password}".encode()))


async def _seed_once(hosts: str) -> None:
    zk = aiozk.ZKClient(hosts, session_timeout=4, read_timeout=1)
    try:
        await zk.start()
        app = aiozk.ACL.make("digest", _digest("app", "app-pw"), True, True, True, True, True)
        world_read = aiozk.ACL.make("world", "anyone", read=True)
        nodes: list[tuple[str, bytes | None, list[Any] | None]] = [
            ("/app", None, None),
            ("/app/cfg", b"v1", None),
            ("/app/full", None, None),
            ("/app/full/child", b"c", None),
            ("/secret", b"s", [app]),
            ("/readonly", b"r", [app, world_read]),
        ]
        for path, data, acl in nodes:
            with contextlib.suppress(aiozk.exc.NodeExists):  # a second try after a slow start
                await zk.create(path, data, acl=acl)
    finally:
        with contextlib.suppress(aiozk.exc.ZKError, OSError, asyncio.TimeoutError):
            await asyncio.wait_for(zk.close(), 1)


async def _seed(hosts: str) -> None:
    """ZooKeeper may accept connections before it serves sessions: try again until it does."""
    for attempt in range(10):
        try:
            await asyncio.wait_for(_seed_once(hosts), 5)
            return
        except (TimeoutError, aiozk.exc.ZKError, OSError):
            if attempt == 9:
                raise
            await asyncio.sleep(0.5)


def _start(stack: contextlib.ExitStack, work: Path) -> ZooKeeper:
    zk = zookeeper(stack, work)
    asyncio.run(_seed(zk.hosts))
    return zk


FAM = family(
    "aiozk",
    "aiozk against ZooKeeper (Debian), real",
    served(_start),
    half="heldout11",
)

Op = Callable[[aiozk.ZKClient], Awaitable[Any]]


def _with(
    op: Op,
    *,
    auth: tuple[str, str] | None = None,
    hosts: Callable[[Ctx], str] | None = None,
    deadline: float = 2.0,
) -> Callable[[Ctx], Coroutine[Any, Any, None]]:
    async def session(where: str) -> None:
        zk = aiozk.ZKClient(
            where,
            session_timeout=2,
            retry_policy=aiozk.RetryPolicy.once(),
            read_timeout=1,
        )
        try:
            await zk.start()
            if auth:
                await _auth(zk, *auth)
            await op(zk)
        finally:
            with contextlib.suppress(aiozk.exc.ZKError, OSError, asyncio.TimeoutError):
                await asyncio.wait_for(zk.close(), 0.5)

    async def run(c: Ctx) -> None:
        where = c.server.hosts if hosts is None else hosts(c)
        await asyncio.wait_for(session(where), deadline)

    return run


FAM.add(
    "no_node", NF, "NoNode: get of a znode that does not exist", _with(lambda z: z.get("/nope"))
)
FAM.add(
    "no_parent",
    NF,
    "NoNode: create under a parent that does not exist",
    _with(lambda z: z.create("/nope/child", b"x")),
)
FAM.add(
    "node_exists",
    EXISTS,
    "NodeExists: create of a znode already there",
    _with(lambda z: z.create("/app/cfg", b"v")),
)
FAM.add(
    "no_auth",
    AUTH,
    "NoAuth: the znode's ACL admits only digest app, the session sent no credentials",
    _with(lambda z: z.get_data("/secret")),
)
FAM.add(
    "wrong_password",
    AUTH,
    "NoAuth: the session authenticated as app with the wrong password",
    _with(lambda z: z.get_data("/secret"), auth=("app", "wrong-pw")),
)
FAM.add(
    "read_only_acl",
    AUTH,
    "NoAuth: anyone may read /readonly, only app may write it",
    _with(lambda z: z.set_data("/readonly", b"w"), auth=("other", "other-pw")),
)
FAM.add(
    "bad_version",
    INT,
    "BadVersion: a compare-and-set with a stale version (re-read, do not retry the same call)",
    _with(lambda z: z.set("/app/cfg", b"v2", 42)),
)
FAM.add(
    "not_empty",
    INT,
    "NotEmpty: delete of a znode that has children",
    _with(lambda z: z.delete("/app/full")),
)


async def _ephemeral_child(z: aiozk.ZKClient) -> None:
    await z.create("/app/eph", b"", ephemeral=True)
    await z.create("/app/eph/child", b"x")


FAM.add(
    "ephemeral_child",
    INT,
    "NoChildrenForEphemerals: an ephemeral znode may not have children",
    _with(_ephemeral_child),
)
FAM.add(
    "invalid_acl",
    INT,
    "InvalidACL: an ip ACL whose id is not an address",
    _with(
        lambda z: z.create(
            "/app/acl", b"x", acl=[aiozk.ACL.make("ip", "not-an-address", read=True)]
        )
    ),
)
FAM.add(
    "unknown_scheme",
    AUTH | INT,
    "AuthFailed: the pack authenticates with a scheme the server does not have",
    _with(lambda z: z.send(protocol.AuthRequest(type=0, scheme="kerberos5", auth=b"app:app-pw"))),
)
FAM.add(
    "refused",
    NET | TO,
    "nothing listens: aiozk keeps trying until the pack's deadline",
    _with(lambda z: z.get("/app"), hosts=lambda c: f"127.0.0.1:{c.net.closed}", deadline=1.5),
)
FAM.add(
    "dns",
    NET | TO,
    "host does not resolve: aiozk keeps trying until the pack's deadline",
    _with(lambda z: z.get("/app"), hosts=lambda c: f"{UNRESOLVABLE}:2181", deadline=1.5),
)
FAM.add(
    "silent",
    TO,
    "the server never answers the session handshake",
    _with(lambda z: z.get("/app"), hosts=lambda c: f"127.0.0.1:{c.net.silent}", deadline=1.5),
)
FAM.add(
    "dropped",
    NET | TO,
    "the server closes every connection at once",
    _with(lambda z: z.get("/app"), hosts=lambda c: f"127.0.0.1:{c.net.close_now}", deadline=1.5),
)
