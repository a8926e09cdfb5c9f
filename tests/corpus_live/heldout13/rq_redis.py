"""RQ (Redis Queue, background jobs) against a real Redis 7 (Debian's ``redis-server``): ACL
users (``app`` may do everything, ``reader`` only read; the default user is off), a server
whose ``maxmemory`` refuses every write, a read-only replica whose primary is down. Nothing is faked but
the transport failures. RQ raises its own exceptions (``NoSuchJobError``,
``DuplicateJobError``, ``InvalidJobOperation``, ``ValueError`` for its argument checks);
redis-py's errors (``AuthenticationError``, ``NoPermissionError``, ``ResponseError``,
``ConnectionError``, ``TimeoutError``) pass through it."""

from __future__ import annotations

from collections.abc import Callable
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

FAM = family(
    "rq",
    "Redis 7 (Debian redis-server), real",
    served(redis_streams),
    half="heldout13",
)

_TASK = "os.path.basename"  # a worker imports the job's function by name


def _redis(port: int, *, user: str = "app", password: str = "app-pw", host: str = LOOPBACK) -> Any:
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return redis.Redis(
        host=host,
        port=port,
        username=user,
        password=password,
        socket_timeout=1,
        socket_connect_timeout=1,
        retry=Retry(NoBackoff(), 0),  # the pack fails fast: its caller decides on retries
    )


def _queue(conn: Any, name: str = "reports") -> Any:
    from rq import Queue

    return Queue(name, connection=conn)


def _enqueue(
    port: Callable[[Ctx], int] = lambda c: c.server.port,
    *,
    host: str = LOOPBACK,
    user: str = "app",
    password: str = "app-pw",
    **kw: Any,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        conn = _redis(port(c), user=user, password=password, host=host)
        try:
            _queue(conn).enqueue(_TASK, "/tmp/report.csv", **kw)
        finally:
            conn.close()

    return run


def _with_app(op: Callable[[Any], Any]) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        conn = _redis(c.server.port)
        try:
            op(conn)
        finally:
            conn.close()

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "WRONGPASS invalid username-password pair",
    _enqueue(password="not-it"),
)
FAM.add(
    "read_only_user",
    AUTH,
    "NOPERM: the reader ACL user may not run the enqueue's write commands",
    _enqueue(user="reader", password="reader-pw"),
)


def _fetch_missing(conn: Any) -> None:
    from rq.job import Job

    Job.fetch("7f3c9a1e-missing", connection=conn)


FAM.add(
    "no_such_job", NF, "Job.fetch: NoSuchJobError, no job under that id", _with_app(_fetch_missing)
)


def _duplicate(conn: Any) -> None:
    q = _queue(conn)
    q.enqueue(_TASK, "a", job_id="nightly-report", unique=True)
    q.enqueue(_TASK, "b", job_id="nightly-report", unique=True)


FAM.add(
    "duplicate_job",
    EXISTS,
    "unique=True: DuplicateJobError, a job with that id already exists",
    _with_app(_duplicate),
)
FAM.add(
    "out_of_memory",
    QUOTA,
    "OOM command not allowed when used memory > 'maxmemory' (noeviction)",
    _enqueue(lambda c: c.server.full_port, user="default", password=""),
)
FAM.add(
    "read_only_replica",
    NET | INT,
    "READONLY: the address is a replica (its primary down), it refuses writes",
    _enqueue(lambda c: c.server.replica_port, user="default", password=""),
)


def _wrong_type(conn: Any) -> None:
    conn.set("rq:queue:clashing", "not a list")
    _queue(conn, "clashing").enqueue(_TASK, "x")


FAM.add(
    "wrong_type",
    INT,
    "WRONGTYPE: the queue's key already holds a string (another program's key)",
    _with_app(_wrong_type),
)
FAM.add(
    "bad_job_id",
    INT,
    "RQ's own check: a job id may only hold letters, digits, '_' and '-'",
    _enqueue(job_id="report 2024/01"),
)
FAM.add(
    "zero_timeout",
    INT,
    "RQ's own check: a job_timeout of 0 is not allowed",
    _enqueue(job_timeout=0),
)


def _cancel_twice(conn: Any) -> None:
    job = _queue(conn).enqueue(_TASK, "x", job_id="cancel-me")
    job.cancel()
    job.cancel()


FAM.add(
    "cancel_twice",
    INT,
    "InvalidJobOperation: cannot cancel an already canceled job",
    _with_app(_cancel_twice),
)


def _requeue_queued(conn: Any) -> None:
    q = _queue(conn)
    job = q.enqueue(_TASK, "x", job_id="still-queued")
    q.failed_job_registry.requeue(job.id)


FAM.add(
    "requeue_not_failed",
    NF | INT,
    "InvalidJobOperation: the job to requeue is not in the failed job registry",
    _with_app(_requeue_queued),
)
FAM.add("refused", NET, "nothing listens", _enqueue(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _enqueue(lambda c: 6379, host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "the server never answers (socket_timeout=1)",
    _enqueue(lambda c: c.net.silent),
)
FAM.add("dropped", NET, "closed at once", _enqueue(lambda c: c.net.close_now))
FAM.add("garbage", NET, "the peer answers bytes of no protocol", _enqueue(lambda c: c.net.garbage))
