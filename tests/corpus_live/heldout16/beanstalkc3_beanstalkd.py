"""beanstalkc3 (the Python 3 port of beanstalkc, module ``beanstalkc``) against a real
beanstalkd (Debian's ``beanstalkd``: one server with a 1 KiB max job size, one put in drain
mode with SIGUSR1). Nothing is faked: beanstalkd answers one-word replies; the library raises
``CommandFailed(command, status, results)`` for the replies a command expects to fail,
``UnexpectedResponse`` for any other, ``DeadlineSoon`` while a reserved job's TTR runs out,
and ``SocketError`` wrapping the socket error. The pack gives the socket a 1 s timeout once
connected (the library clears its connect timeout after connecting)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout2._daemons import Beanstalkd, beanstalkd

Ctx = Served[Beanstalkd]

FAM = family(
    "beanstalkc3",
    "beanstalkd (Debian), real",
    served(beanstalkd),
    half="heldout16",
)


def _do(
    op: Callable[[Any], Any],
    port: Callable[[Ctx], int] | None = None,
    host: str = LOOPBACK,
    encoding: str | None = "utf-8",
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        import beanstalkc  # type: ignore[import-untyped]

        conn = beanstalkc.Connection(
            host=host,
            port=c.server.port if port is None else port(c),
            connect_timeout=1.0,
            encoding=encoding,
            parse_yaml=False,
        )
        try:
            conn._socket.settimeout(1.0)
            op(conn)
        finally:
            conn.close()

    return run


def _deadline_soon(conn: Any) -> None:
    conn.use("ttr-tube")
    conn.watch("ttr-tube")
    conn.ignore("default")
    conn.put("short job", ttr=1)
    job = conn.reserve(timeout=0)
    try:
        conn.reserve(timeout=0)  # within a second of the job's TTR: DEADLINE_SOON
    finally:
        if job is not None:
            job.delete()


def _release_unreserved(conn: Any) -> None:
    conn.use("release-tube")
    jid = conn.put("not reserved")
    try:
        conn.release(jid)  # never reserved by this connection
    finally:
        conn.delete(jid)


def _touch_others(conn: Any) -> None:
    import beanstalkc

    conn.use("touch-tube")
    conn.watch("touch-tube")
    conn.ignore("default")
    jid = conn.put("held by a worker")
    worker = beanstalkc.Connection(host=conn.host, port=conn.port, parse_yaml=False)
    try:
        worker.watch("touch-tube")
        worker.ignore("default")
        job = worker.reserve(timeout=0)
        assert job is not None and job.jid == jid
        conn.touch(jid)  # the job is reserved, but by the worker's connection
    finally:
        worker.close()
        conn.delete(jid)


FAM.add(
    "delete_missing",
    NF,
    "NOT_FOUND: delete of a job id that does not exist",
    _do(lambda c: c.delete(987654)),
)
FAM.add(
    "kick_job_missing",
    NF,
    "NOT_FOUND: kick-job of a job id that does not exist",
    _do(lambda c: c.kick_job(31337)),
)
FAM.add(
    "stats_tube_missing",
    NF,
    "NOT_FOUND: stats-tube of a tube nobody uses",
    _do(lambda c: c.stats_tube("ghost-tube")),
)
FAM.add(
    "pause_tube_missing",
    NF,
    "NOT_FOUND: pause-tube of a tube that does not exist",
    _do(lambda c: c.pause_tube("ghost-tube", 10)),
)
FAM.add(
    "release_unreserved",
    NF,
    "NOT_FOUND: release of a job this connection never reserved",
    _do(_release_unreserved),
)
FAM.add(
    "touch_not_mine",
    NF,
    "NOT_FOUND: touch of a job another connection has reserved",
    _do(_touch_others),
)
FAM.add(
    "deadline_soon",
    TO,
    "DEADLINE_SOON: reserve again while the reserved job's 1 s TTR is about to run out",
    _do(_deadline_soon),
)
FAM.add(
    "job_too_big",
    INT,
    "JOB_TOO_BIG: a 4 KiB body over the server's max job size (-z 1024): never passes",
    _do(lambda c: c.put("x" * 4096)),
)
FAM.add(
    "draining",
    NET,
    "DRAINING: the server is shutting down and takes no new job",
    _do(lambda c: c.put("job"), port=lambda c: c.server.draining_port),
)
FAM.add(
    "bad_tube_name",
    INT,
    "BAD_FORMAT (UnexpectedResponse): a tube name starting with '-' (the pack's input)",
    _do(lambda c: c.use("-bad-name")),
)
FAM.add(
    "str_body_no_encoding",
    INT,
    "ValueError: a str body on a connection opened without an encoding (the pack's bug)",
    _do(lambda c: c.put("text body"), encoding=None),
)
FAM.add(
    "refused",
    NET,
    "SocketError: nothing listens",
    _do(lambda c: c.stats(), port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "SocketError: host does not resolve (.invalid)",
    _do(lambda c: c.stats(), port=lambda c: 11300, host=UNRESOLVABLE),
)
FAM.add(
    "silent",
    TO,
    "SocketError: the server never answers (socket timeout 1 s)",
    _do(lambda c: c.stats(), port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "SocketError: the server closed at once (empty reply)",
    _do(lambda c: c.stats(), port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET | INT,
    "a peer that speaks no beanstalkd protocol: its reply does not even decode",
    _do(lambda c: c.stats(), port=lambda c: c.net.garbage),
)
