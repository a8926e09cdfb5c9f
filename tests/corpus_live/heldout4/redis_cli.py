"""The ``redis-cli`` CLI (Debian's redis-tools 7) run as a pack runs it, a command on argv, with ``-e`` (a failed command exits non-zero), against real Redis 7 servers (Debian's ``redis-server``: an ACL'd primary, one
at ``maxmemory`` with ``noeviction``, a replica whose primary is down). The failure is the
exit status and the ``AUTH failed:``/``(error) ...`` lines redis-cli writes."""

from __future__ import annotations

import subprocess
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
    cli,
    family,
    require,
    served,
)
from corpus_live.heldout3._daemons import RedisStreams, redis_streams

Ctx = Served[RedisStreams]


def _start(stack: Any, work: Any) -> RedisStreams:
    require("redis-cli")
    return redis_streams(stack, work)


FAM = family(
    "redis-cli", "the redis-cli CLI against Redis 7 (Debian), real", served(_start), half="heldout4"
)


def _rc(
    port: Any,
    *args: str,
    user: str | None = "app",
    password: str | None = "app-pw",
    host: str = LOOPBACK,
    before: tuple[str, ...] = (),
    timeout: float = 10.0,
) -> Any:
    def run(c: Ctx) -> None:
        argv = ["redis-cli", "-h", host, "-p", str(port(c)), "--no-auth-warning", "-e"]
        if user:
            argv += ["--user", user]
        if password:
            argv += ["--pass", password]
        if before:  # the state the failing command meets (its own outcome is not the case)
            subprocess.run(argv + list(before), check=False, capture_output=True, timeout=timeout)
        cli(argv + list(args), timeout=timeout)

    return run


_GROUP = ("XGROUP", "CREATE", "jobs:cli", "workers", "$", "MKSTREAM")


def MAIN(c: Ctx) -> int:
    return c.server.port


FAM.add(
    "wrongpass",
    AUTH,
    "WRONGPASS invalid username-password pair",
    _rc(MAIN, "PING", password="not-it"),
)
FAM.add(
    "noauth",
    AUTH,
    "NOAUTH: the default user is off and none is given",
    _rc(MAIN, "PING", user=None, password=None),
)
FAM.add(
    "noperm",
    AUTH,
    "NOPERM: the reader user may not run SET",
    _rc(MAIN, "SET", "cfg:mode", "fast", user="reader", password="reader-pw"),
)
FAM.add(
    "no_such_key",
    NF,
    "ERR no such key (RENAME of a missing key)",
    _rc(MAIN, "RENAME", "missing:key", "other:key"),
)
FAM.add(
    "busygroup",
    EXISTS,
    "BUSYGROUP Consumer Group name already exists (created a second time)",
    _rc(MAIN, *_GROUP, before=_GROUP),
)
FAM.add(
    "nogroup",
    NF,
    "NOGROUP No such key or consumer group",
    _rc(MAIN, "XREADGROUP", "GROUP", "nogroup", "c1", "COUNT", "1", "STREAMS", "jobs:none", ">"),
)
FAM.add(
    "wrongtype",
    INT,
    "WRONGTYPE Operation against a key holding the wrong kind of value",
    _rc(MAIN, "LPUSH", "kind:string", "x", before=("SET", "kind:string", "v")),
)
FAM.add(
    "unknown_command", INT, "ERR unknown command (the pack's command)", _rc(MAIN, "FROBNICATE", "x")
)
FAM.add(
    "oom",
    QUOTA | INT,
    "OOM command not allowed when used memory > 'maxmemory'",
    _rc(lambda c: c.server.full_port, "SET", "k", "v", user=None, password=None),
)
FAM.add(
    "masterdown",
    NET,
    "MASTERDOWN Link with MASTER is down: the replica waits for its primary",
    _rc(lambda c: c.server.replica_port, "GET", "k", user=None, password=None),
)
FAM.add("refused", NET, "nothing listens", _rc(lambda c: c.net.closed, "PING"))
FAM.add("dns", NET, "host does not resolve", _rc(lambda c: 6379, "PING", host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "server never answers: the pack's own deadline expires",
    _rc(lambda c: c.net.silent, "PING", timeout=2),
)
FAM.add("dropped", NET, "closed at once", _rc(lambda c: c.net.close_now, "PING"))
