"""kazoo against a real ZooKeeper 3.8 (Debian's ``zookeeper``): ZooKeeper's own result codes
(``NONODE``, ``NODEEXISTS``, ``NOAUTH``, ``BADVERSION``...) as kazoo's exception classes, and
the connection failures of its session handling."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

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


def _start(stack: contextlib.ExitStack, work: Path) -> ZooKeeper:
    zk = zookeeper(stack, work)
    from kazoo.client import KazooClient
    from kazoo.security import make_digest_acl

    client = KazooClient(hosts=zk.hosts, timeout=5)
    client.start(timeout=20)
    try:
        client.create("/app", b"v")
        client.create("/app/cfg", b"v1")
        client.create("/app/full/child", b"x", makepath=True)
        client.create(
            "/secret",
            b"s",
            acl=[make_digest_acl("app", "app-pw", all=True)],
        )
        client.create(
            "/readonly",
            b"r",
            acl=[make_digest_acl("app", "app-pw", read=True)],
        )
    finally:
        client.stop()
        client.close()
    return zk


FAM = family("kazoo", "ZooKeeper 3.8 (Debian), real", served(_start), half="heldout3")


@contextlib.contextmanager
def _client(hosts: str, auth: tuple[str, str] | None = None, timeout: float = 3) -> Any:
    from kazoo.client import KazooClient

    client = KazooClient(
        hosts=hosts,
        timeout=timeout,
        connection_retry={"max_tries": 0},
        auth_data=[("digest", f"{auth[0]}:{auth[1]}")] if auth else None,
    )
    client.start(timeout=timeout)
    try:
        yield client
    finally:
        client.stop()
        client.close()


def _with(fn: Any, auth: tuple[str, str] | None = None) -> Any:
    def run(c: Served[ZooKeeper]) -> Any:
        with _client(c.server.hosts, auth) as client:
            return fn(client)

    return run


FAM.add(
    "no_node", NF, "NONODE: get of a znode that does not exist", _with(lambda z: z.get("/nope"))
)
FAM.add(
    "no_parent",
    NF,
    "NONODE: create under a parent that does not exist",
    _with(lambda z: z.create("/nope/child", b"x")),
)
FAM.add(
    "exists",
    EXISTS,
    "NODEEXISTS: create of a znode already there",
    _with(lambda z: z.create("/app/cfg", b"v")),
)
FAM.add(
    "no_auth",
    AUTH,
    "NOAUTH: the znode's ACL admits only digest app, the session has no credentials",
    _with(lambda z: z.get("/secret")),
)
FAM.add(
    "wrong_password",
    AUTH,
    "NOAUTH: the session authenticated as app with the wrong password",
    _with(lambda z: z.get("/secret"), auth=("app", "wrong-pw")),
)
FAM.add(
    "read_only_acl",
    AUTH,
    "NOAUTH: app may read /readonly but not write it",
    _with(lambda z: z.set("/readonly", b"w"), auth=("app", "app-pw")),
)
FAM.add(
    "bad_version",
    INT,
    "BADVERSION: a compare-and-set with a stale version (the pack must re-read, not retry "
    "the same call)",
    _with(lambda z: z.set("/app/cfg", b"v2", version=42)),
)
FAM.add(
    "not_empty",
    INT,
    "NOTEMPTY: delete of a znode that has children",
    _with(lambda z: z.delete("/app/full")),
)
FAM.add(
    "ephemeral_child",
    INT,
    "NOCHILDRENFOREPHEMERALS: an ephemeral znode may not have children",
    _with(lambda z: (z.create("/app/s", b"", ephemeral=True), z.create("/app/s/child", b"x"))),
)
FAM.add(
    "invalid_acl",
    INT,
    "INVALIDACL: an ACL whose scheme ZooKeeper does not know",
    _with(
        lambda z: z.create(
            "/app/acl",
            b"x",
            acl=[__import__("kazoo.security", fromlist=["ACL"]).make_acl("nosuch", "x", all=True)],
        )
    ),
)


def _connect(hosts: str) -> Any:
    with _client(hosts, timeout=1.5) as client:
        return client.get("/app")


FAM.add(
    "refused",
    NET | TO,
    "nothing listens: kazoo gives up connecting after its start timeout",
    lambda c: _connect(f"127.0.0.1:{c.net.closed}"),
)
FAM.add(
    "dns",
    NET | TO,
    "host does not resolve",
    lambda c: _connect(f"{UNRESOLVABLE}:2181"),
)
FAM.add(
    "silent",
    TO,
    "the server never answers the session handshake",
    lambda c: _connect(f"127.0.0.1:{c.net.silent}"),
)
FAM.add(
    "dropped",
    NET | TO,
    "the server closes every connection at once",
    lambda c: _connect(f"127.0.0.1:{c.net.close_now}"),
)
