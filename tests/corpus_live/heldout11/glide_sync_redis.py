"""Valkey GLIDE's synchronous Python client (``valkey-glide-sync``: a Python API over GLIDE's
Rust core) used as a pack uses it (``GlideClient.create`` with ACL credentials, a 1 s connection
timeout, a 1 s request timeout and one reconnect try, then one command) against real Redis 7
servers (Debian's ``redis-server``: an ACL'd primary, one at ``maxmemory`` with
``noeviction``, a replica whose primary is down). The failure is GLIDE's own exception with
the server's error line in it. Nothing is faked."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from glide_sync import (
    AdvancedGlideClientConfiguration,
    BackoffStrategy,
    GlideClient,
    GlideClientConfiguration,
    NodeAddress,
    RequestError,
    ServerCredentials,
)

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
    require,
    served,
)
from corpus_live.heldout3._daemons import RedisStreams, redis_streams

Ctx = Served[RedisStreams]


def _start(stack: contextlib.ExitStack, work: Path) -> RedisStreams:
    require("redis-server", "redis-cli")
    redis = redis_streams(stack, work)
    # a user that may read and connect (INFO included, which GLIDE's handshake needs), not write
    subprocess.run(
        ["redis-cli", "-h", LOOPBACK, "-p", str(redis.port), "--user", "app", "--pass", "app-pw",
         "--no-auth-warning", "ACL", "SETUSER", "viewer", "on", ">viewer-pw", "~*",
         "+@read", "+@connection", "+info"],
        check=True, capture_output=True, timeout=10,
    )  # fmt: skip
    return redis


FAM = family(
    "valkey-glide-sync",
    "valkey-glide-sync against Redis 7 (Debian), real",
    served(_start),
    half="heldout11",
)

Op = Callable[[GlideClient], Any]


def _glide(
    op: Op,
    *,
    user: str | None = "app",
    password: str | None = "app-pw",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    database_id: int | None = None,
    before: Op | None = None,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        creds = ServerCredentials(password=password, username=user) if password else None
        config = GlideClientConfiguration(
            [NodeAddress(host, p)],
            credentials=creds,
            request_timeout=1000,
            reconnect_strategy=BackoffStrategy(num_of_retries=1, factor=10, exponent_base=2),
            database_id=database_id,
            advanced_config=AdvancedGlideClientConfiguration(connection_timeout=1000),
        )
        client = GlideClient.create(config)
        try:
            if before is not None:  # the state the failing command meets
                with contextlib.suppress(RequestError):  # not the case's outcome
                    before(client)
            op(client)
        finally:
            client.close()

    return run


_GROUP = ["XGROUP", "CREATE", "jobs:glide", "workers", "$", "MKSTREAM"]


def MAIN(c: Ctx) -> int:
    return c.server.port


FAM.add(
    "wrongpass",
    AUTH,
    "WRONGPASS invalid username-password pair (while connecting)",
    _glide(lambda g: g.ping(), password="not-it"),
)
FAM.add(
    "noauth",
    AUTH,
    "NOAUTH: the default user is off and no credentials are given",
    _glide(lambda g: g.get("cfg:mode"), user=None, password=None),
)
FAM.add(
    "noperm",
    AUTH,
    "NOPERM while connecting: the reader user may not run the INFO GLIDE's handshake sends",
    _glide(lambda g: g.set("cfg:mode", "fast"), user="reader", password="reader-pw"),
)
FAM.add(
    "noperm_write",
    AUTH,
    "NOPERM: the viewer user may read but not run SET",
    _glide(lambda g: g.set("cfg:mode", "fast"), user="viewer", password="viewer-pw"),
)
FAM.add(
    "no_such_key",
    NF,
    "ERR no such key (RENAME of a missing key)",
    _glide(lambda g: g.rename("missing:key", "other:key")),
)
FAM.add(
    "busygroup",
    EXISTS,
    "BUSYGROUP Consumer Group name already exists (created a second time)",
    _glide(lambda g: g.custom_command([*_GROUP]), before=lambda g: g.custom_command([*_GROUP])),
)
FAM.add(
    "wrongtype",
    INT,
    "WRONGTYPE Operation against a key holding the wrong kind of value",
    _glide(lambda g: g.lpush("kind:glide", ["x"]), before=lambda g: g.set("kind:glide", "v")),
)
FAM.add(
    "unknown_command",
    INT,
    "ERR unknown command (the pack's command)",
    _glide(lambda g: g.custom_command(["FROBNICATE", "x"])),
)
FAM.add(
    "script_error",
    INT,
    "the pack's Lua script calls a command that does not exist",
    _glide(lambda g: g.custom_command(["EVAL", "return redis.call('nosuch')", "0"])),
)
FAM.add(
    "db_out_of_range",
    INT,
    "the pack's configuration selects database 99: the server refuses to switch to it",
    _glide(lambda g: g.ping(), database_id=99),
)
FAM.add(
    "oom",
    QUOTA | INT,
    "OOM command not allowed when used memory > 'maxmemory'",
    _glide(lambda g: g.set("k", "v"), user=None, password=None, port=lambda c: c.server.full_port),
)
FAM.add(
    "masterdown",
    NET | INT,
    "the only node is a replica whose primary is down: GLIDE finds no primary to talk to",
    _glide(lambda g: g.get("k"), user=None, password=None, port=lambda c: c.server.replica_port),
)
FAM.add("refused", NET, "nothing listens", _glide(lambda g: g.ping(), port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _glide(lambda g: g.ping(), host=UNRESOLVABLE, port=lambda c: 6379),
)
FAM.add(
    "silent",
    TO,
    "the server never answers the handshake: the 1 s connection timeout fires",
    _glide(lambda g: g.ping(), port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "the server end closes the connection at once",
    _glide(lambda g: g.ping(), port=lambda c: c.net.close_now),
)
