"""pystalk (Uber's small beanstalkd client) against a real beanstalkd (Debian's ``beanstalkd``,
one server with a 1 KiB max job size, one put in drain mode with SIGUSR1). beanstalkd answers
one-word replies (``NOT_FOUND``, ``JOB_TOO_BIG``, ``DRAINING``, ``BAD_FORMAT``...); pystalk
raises ``BeanstalkError`` with that word as its message, and ``BeanstalkConnectionError``
(a subclass) for socket failures, the socket error chained."""

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
    "pystalk",
    "beanstalkd (Debian), real",
    served(beanstalkd),
    half="heldout7",
)


def _do(
    op: Callable[[Any], Any],
    port: Callable[[Ctx], int] | None = None,
    host: str = LOOPBACK,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        from pystalk import BeanstalkClient

        client = BeanstalkClient(
            host, c.server.port if port is None else port(c), socket_timeout=1.0
        )
        try:
            op(client)
        finally:
            client.close()

    return run


def _reserve_empty(client: Any) -> None:
    client.watch("empty-tube")  # the first watch leaves "default"
    client.reserve_job(timeout=0)


def _peek_empty(client: Any) -> None:
    client.use("nothing-ready")
    client.peek_ready()


FAM.add(
    "delete_missing",
    NF,
    "NOT_FOUND: delete of a job id that does not exist",
    _do(lambda c: c.delete_job(987654)),
)
FAM.add(
    "stats_job_missing",
    NF,
    "NOT_FOUND: stats-job of a job id that does not exist",
    _do(lambda c: c.stats_job(424242)),
)
FAM.add(
    "kick_missing",
    NF,
    "NOT_FOUND: kick-job of a job id that does not exist",
    _do(lambda c: c.kick_job(31337)),
)
FAM.add(
    "pause_missing_tube",
    NF,
    "NOT_FOUND: pause-tube of a tube that does not exist",
    _do(lambda c: c.pause_tube("ghost-tube", 10)),
)
FAM.add(
    "peek_empty",
    NF,
    "NOT_FOUND: peek-ready on a tube with no ready job",
    _do(_peek_empty),
)
FAM.add(
    "reserve_timeout",
    TO,
    "TIMED_OUT: no job within reserve-with-timeout 0",
    _do(_reserve_empty),
)
FAM.add(
    "bury_missing",
    NF,
    "NOT_FOUND: bury of a job id that does not exist",
    _do(lambda c: c.bury_job(777777)),
)
FAM.add(
    "job_too_big",
    INT,
    "JOB_TOO_BIG: a 4 KiB body over the server's max job size (-z 1024): never passes",
    _do(lambda c: c.put_job("x" * 4096)),
)
FAM.add(
    "draining",
    NET,
    "DRAINING: the server is shutting down and takes no new job: retry elsewhere or later",
    _do(lambda c: c.put_job("job"), port=lambda c: c.server.draining_port),
)
FAM.add(
    "bad_tube_name",
    INT,
    "BAD_FORMAT: a tube name starting with '-' (the pack's input)",
    _do(lambda c: c.use("-bad-name")),
)
FAM.add(
    "refused",
    NET,
    "BeanstalkConnectionError: nothing listens",
    _do(lambda c: c.stats(), port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "BeanstalkConnectionError: host does not resolve (.invalid)",
    _do(lambda c: c.stats(), port=lambda c: 11300, host=UNRESOLVABLE),
)
FAM.add(
    "silent",
    TO,
    "the server never answers (socket_timeout 1 s)",
    _do(lambda c: c.stats(), port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "Connection closed by beanstalkd: closed at once",
    _do(lambda c: c.stats(), port=lambda c: c.net.close_now),
)
