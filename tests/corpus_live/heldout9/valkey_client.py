"""valkey-py (the Valkey project's fork of redis-py, ``valkey.Valkey``) against a real Redis
7 (Debian's ``redis-server``): one server with ACL users and the default user off, one capped
at 1 byte of memory with ``noeviction``, and a read-only replica whose primary is down. The
failures are valkey-py's own exceptions carrying the server's error replies. Nothing is
faked."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

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
    served,
)
from corpus_live.heldout3._daemons import RedisStreams, redis_streams

Ctx = Served[RedisStreams]


def _start(stack: contextlib.ExitStack, work: Path) -> RedisStreams:
    import valkey  # noqa: F401 - skip cleanly when missing

    return redis_streams(stack, work)


FAM = family(
    "valkey",
    "valkey-py against Redis 7 (Debian), real",
    served(_start),
    half="heldout9",
)


def _client(
    port: int,
    *,
    host: str = LOOPBACK,
    username: str | None = "app",
    password: str | None = "app-pw",
) -> Any:
    import valkey

    return valkey.Valkey(
        host=host,
        port=port,
        username=username,
        password=password,
        socket_timeout=1.0,
        socket_connect_timeout=1.0,
        retry_on_timeout=False,
    )


@FAM.case("wrong-password", AUTH, "AUTH with a wrong password: WRONGPASS")
def _wrong_password(c: Ctx) -> Any:
    return _client(c.server.port, password="nope").ping()


@FAM.case("unknown-user", AUTH, "AUTH as a user the ACL does not have")
def _unknown_user(c: Ctx) -> Any:
    return _client(c.server.port, username="ghost", password="x").ping()


@FAM.case("no-auth", AUTH, "no credentials and the default user is off: NOAUTH")
def _no_auth(c: Ctx) -> Any:
    return _client(c.server.port, username=None, password=None).get("k")


@FAM.case("noperm-write", AUTH, "a read-only ACL user writes a key: NOPERM")
def _noperm(c: Ctx) -> Any:
    return _client(c.server.port, username="reader", password="reader-pw").set("k", "v")


@FAM.case("oom", QUOTA, "maxmemory reached with noeviction: OOM command not allowed")
def _oom(c: Ctx) -> Any:
    return _client(c.server.full_port, username=None, password=None).set("k", "v" * 1000)


@FAM.case("masterdown", NET, "a replica whose primary is down refuses reads: MASTERDOWN")
def _masterdown(c: Ctx) -> Any:
    return _client(c.server.replica_port, username=None, password=None).get("k")


@FAM.case("wrongtype", INT, "LPUSH onto a key holding a string: WRONGTYPE")
def _wrongtype(c: Ctx) -> Any:
    r = _client(c.server.port)
    r.set("wt:str", "x")
    return r.lpush("wt:str", "y")


@FAM.case("busygroup", EXISTS, "XGROUP CREATE of a consumer group that exists: BUSYGROUP")
def _busygroup(c: Ctx) -> Any:
    r = _client(c.server.port)
    with contextlib.suppress(Exception):
        r.xgroup_create("bg:stream", "workers", id="0", mkstream=True)
    return r.xgroup_create("bg:stream", "workers", id="0", mkstream=True)


@FAM.case("nogroup", NF, "XREADGROUP from a consumer group that does not exist: NOGROUP")
def _nogroup(c: Ctx) -> Any:
    r = _client(c.server.port)
    r.xadd("ng:stream", {"a": "1"})
    return r.xreadgroup("ghost-group", "c1", {"ng:stream": ">"}, count=1)


@FAM.case("script-error", INT, "EVAL of a Lua script that calls error()")
def _script_error(c: Ctx) -> Any:
    return _client(c.server.port).eval("return redis.error_reply('bad input')", 0)


@FAM.case("noscript", NF | INT, "EVALSHA of a script SHA the server never loaded: NOSCRIPT")
def _noscript(c: Ctx) -> Any:
    return _client(c.server.port).evalsha("0" * 40, 0)


@FAM.case("not-integer", INT, "INCR of a key holding text: value is not an integer")
def _not_integer(c: Ctx) -> Any:
    r = _client(c.server.port)
    r.set("ni:key", "abc")
    return r.incr("ni:key")


@FAM.case("refused", NET, "nothing listens on the port")
def _refused(c: Ctx) -> Any:
    return _client(c.net.closed).ping()


@FAM.case("dns", NET, "the host name does not resolve")
def _dns(c: Ctx) -> Any:
    return _client(6379, host=UNRESOLVABLE).ping()


@FAM.case("silent", TO, "the server accepts and never answers: socket_timeout")
def _silent(c: Ctx) -> Any:
    return _client(c.net.silent).ping()


@FAM.case("dropped", NET, "the server closes the connection at once")
def _dropped(c: Ctx) -> Any:
    return _client(c.net.close_now).ping()
