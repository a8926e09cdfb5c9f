"""greenstalk against a real beanstalkd work queue (Debian's ``beanstalkd``): the protocol's
one-word replies (``NOT_FOUND``, ``JOB_TOO_BIG``, ``DRAINING``...) and the transport's
failures. greenstalk takes no timeout: a pack bounds it by passing a socket of its own."""

from __future__ import annotations

import socket
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

FAM = family("greenstalk", "beanstalkd 1.12 (Debian), real", served(beanstalkd), half="heldout2")


def _client(host: str, port: int, **kw: Any) -> Any:
    import greenstalk

    sock = socket.create_connection((host, port), timeout=1)
    return greenstalk.Client(sock, **kw)


def _do(op: Any, *, port: Any = None, host: str = LOOPBACK, **kw: Any) -> Any:
    def run(ctx: Ctx) -> Any:
        client = _client(host, ctx.server.port if port is None else port(ctx), **kw)
        try:
            return op(client)
        finally:
            client.close()

    return run


def _reserve_empty(c: Any) -> Any:
    c.watch("empty-tube")
    c.ignore("default")
    return c.reserve(timeout=0)


FAM.add(
    "peek_missing",
    NF,
    "NOT_FOUND: peek of a job id that does not exist",
    _do(lambda c: c.peek(987654)),
)
FAM.add(
    "delete_missing",
    NF,
    "NOT_FOUND: delete of a job id that does not exist",
    _do(lambda c: c.delete(987654)),
)
FAM.add(
    "tube_missing",
    NF,
    "NOT_FOUND: stats of a tube that does not exist",
    _do(lambda c: c.stats_tube("ghost-tube")),
)
FAM.add("reserve_timeout", TO, "TIMED_OUT: no job within reserve's timeout", _do(_reserve_empty))
FAM.add(
    "job_too_big",
    INT,
    "JOB_TOO_BIG: the body is over the server's max job size (-z): never passes",
    _do(lambda c: c.put("x" * 4096)),
)
FAM.add(
    "draining",
    NET,
    "DRAINING: the server is shutting down and takes no new job: retry, elsewhere or later",
    _do(lambda c: c.put("job"), port=lambda c: c.server.draining_port),
)
FAM.add(
    "bad_tube_name",
    INT,
    "BAD_FORMAT: a tube name over 200 bytes (the pack's input)",
    _do(lambda c: c.use("t" * 250)),
)
FAM.add(
    "ignore_last",
    INT,
    "NOT_IGNORED: ignoring the only watched tube (the pack's bug)",
    _do(lambda c: c.ignore("default")),
)
FAM.add("refused", NET, "nothing listens", _do(lambda c: c.stats(), port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _do(lambda c: c.stats(), port=lambda c: 11300, host=UNRESOLVABLE),
)
FAM.add(
    "silent",
    TO,
    "server never answers (the socket's timeout)",
    _do(lambda c: c.stats(), port=lambda c: c.net.silent),
)
FAM.add("dropped", NET, "closed at once", _do(lambda c: c.stats(), port=lambda c: c.net.close_now))
