"""huey (a little task queue) with its Redis storage (``RedisHuey``) against real Redis 7
servers (Debian's ``redis-server``): ACL users (``app`` may do everything, ``reader`` only
read; the default user is off), a server whose ``maxmemory`` refuses every write, a
read-only replica whose primary is down. Nothing is faked but the transport failures. The
worker side runs in the case's own process (``huey.dequeue()`` then ``huey.execute()``, what
a consumer does), so a task's failure reaches the caller the way huey delivers it: as a
``TaskException`` from ``Result.get``. huey's own exceptions (``ResultTimeout``,
``TaskLockedException``, ``RateLimitExceeded``) and redis-py's errors pass through."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout3._daemons import RedisStreams, redis_streams

Ctx = Served[RedisStreams]

FAM = family(
    "huey",
    "Redis 7 (Debian redis-server), real",
    served(redis_streams),
    half="heldout17",
)

logging.getLogger("huey").setLevel(logging.CRITICAL)  # the worker logs every task's failure


def _huey(port: int, *, user: str = "app", password: str = "app-pw", host: str = LOOPBACK) -> Any:
    from huey import RedisHuey  # type: ignore[import-untyped]
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return RedisHuey(
        f"reports-{os.urandom(4).hex()}",  # a queue of its own: runs twice leave no trace
        host=host,
        port=port,
        username=user,
        password=password,
        socket_timeout=1,
        socket_connect_timeout=1,
        retry=Retry(NoBackoff(), 0),  # the pack fails fast: its caller decides on retries
    )


def _render(path: str) -> str:
    return os.path.basename(path)


def _enqueue(
    port: Callable[[Ctx], int] = lambda c: c.server.port,
    *,
    host: str = LOOPBACK,
    user: str = "app",
    password: str = "app-pw",
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        huey = _huey(port(c), user=user, password=password, host=host)
        render = huey.task()(_render)
        render("/srv/reports/q3.csv")

    return run


def _worker_runs(fn: Callable[..., Any], **settings: Any) -> Callable[[Ctx], None]:
    """Enqueue ``fn`` as a task, let a worker (this process) run it, then wait for its result."""

    def run(c: Ctx) -> None:
        huey = _huey(c.server.port)
        task = huey.task(**settings)(fn)
        result = task("/srv/reports/q3.csv")
        huey.execute(huey.dequeue())
        result.get(blocking=True, timeout=2)

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
    "NOPERM: the reader ACL user may not push onto the queue",
    _enqueue(user="reader", password="reader-pw"),
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


def _no_worker(c: Ctx) -> None:
    huey = _huey(c.server.port)
    render = huey.task()(_render)
    render("/srv/reports/q3.csv").get(blocking=True, timeout=0.5)


FAM.add(
    "result_timeout",
    TO,
    "no worker picks the task up: ResultTimeout waiting for its result",
    _no_worker,
)


def _missing_input(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


FAM.add(
    "task_failed_missing_file",
    NF | INT,
    "the worker ran the task, it raised FileNotFoundError: Result.get raises TaskException",
    _worker_runs(_missing_input),
)


def _slow(path: str, task: Any = None) -> str:
    import time

    time.sleep(0.3)
    task.check_timeout()
    return path


FAM.add(
    "task_timed_out",
    TO,
    "the task ran past its timeout=0.1 on the worker: TaskException (TaskTimeout)",
    _worker_runs(_slow, timeout=0.1, context=True),
)


def _locked(c: Ctx) -> None:
    huey = _huey(c.server.port)
    with huey.lock_task("nightly-export"), huey.lock_task("nightly-export"):
        pass


FAM.add(
    "lock_held",
    INT,
    "another run holds the task lock: TaskLockedException, unable to acquire lock",
    _locked,
)


def _rate_limited(c: Ctx) -> None:
    huey = _huey(c.server.port)
    limit = huey.rate_limit("smtp-sends", limit=2, per=3600)
    for _ in range(3):
        with limit:
            pass


FAM.add(
    "rate_limit_exceeded",
    RL,
    "a third send inside the window of huey's Redis-backed rate limit (2 per hour)",
    _rate_limited,
)


def _schedule_without_eta(c: Ctx) -> None:
    huey = _huey(c.server.port)
    render = huey.task()(_render)
    render.schedule(("/srv/reports/q3.csv",))


FAM.add(
    "schedule_without_eta",
    INT,
    "the pack calls schedule() with neither eta= nor delay=: ValueError",
    _schedule_without_eta,
)


def _unpicklable(c: Ctx) -> None:
    huey = _huey(c.server.port)
    render = huey.task()(_render)
    render(lambda: "/srv/reports/q3.csv")


FAM.add(
    "unpicklable_argument",
    INT,
    "the pack passes a lambda as the task's argument: pickle cannot serialize it",
    _unpicklable,
)
FAM.add("refused", NET, "nothing listens", _enqueue(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve (.invalid)", _enqueue(lambda c: 6379, host=UNRESOLVABLE))
FAM.add(
    "silent", TO, "the server never answers (socket_timeout=1)", _enqueue(lambda c: c.net.silent)
)
FAM.add(
    "dropped", NET, "the peer closes the connection at once", _enqueue(lambda c: c.net.close_now)
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not RESP",
    _enqueue(lambda c: c.net.garbage),
)
