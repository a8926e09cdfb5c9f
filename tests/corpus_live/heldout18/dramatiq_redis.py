"""Dramatiq (a background task library) with its Redis broker, Redis results backend and
Redis rate limiters, against real Redis 7 servers (Debian's ``redis-server``): ACL users
(``app`` may do everything, ``reader`` only read; the default user is off), a server whose
``maxmemory`` refuses every write, a read-only replica whose primary is down. Nothing is
faked but the transport failures. A worker, when a case needs one, runs in the case's own
process (``dramatiq.Worker``) and is stopped by the case. Dramatiq's own exceptions
(``RateLimitExceeded``, ``ResultTimeout``, ``ResultMissing``, ``ResultFailure``,
``QueueJoinTimeout``, ``ActorNotFound``, ``ConnectionClosed``) and redis-py's errors pass
through."""

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
    "dramatiq",
    "Redis 7 (Debian redis-server), real",
    served(redis_streams),
    half="heldout18",
)

logging.getLogger("dramatiq").setLevel(logging.CRITICAL)  # the worker logs every failure


def _client(
    port: int,
    *,
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    socket_timeout: float = 1,
) -> Any:
    from redis import Redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return Redis(
        host=host,
        port=port,
        username=user,
        password=password,
        socket_timeout=socket_timeout,
        socket_connect_timeout=1,
        retry=Retry(NoBackoff(), 0),  # the pack fails fast: its caller decides on retries
    )


def _broker(client: Any) -> tuple[Any, Any]:
    from dramatiq.brokers.redis import RedisBroker
    from dramatiq.results import Results
    from dramatiq.results.backends.redis import RedisBackend

    ns = f"billing-{os.urandom(4).hex()}"  # keys of its own: runs twice leave no trace
    broker = RedisBroker(client=client, namespace=ns)  # type: ignore[no-untyped-call]
    backend = RedisBackend(client=client, namespace=f"{ns}-results")  # type: ignore[no-untyped-call]
    broker.add_middleware(Results(backend=backend))  # type: ignore[no-untyped-call]
    return broker, backend


def _render(path: str) -> str:
    return os.path.basename(path)


def _actor(broker: Any, fn: Callable[..., Any] = _render, **options: Any) -> Any:
    import dramatiq

    return dramatiq.actor(
        broker=broker,
        actor_name=f"{fn.__name__.strip('_')}_{os.urandom(3).hex()}",
        store_results=True,
        max_retries=0,
        **options,
    )(fn)


def _send(
    port: Callable[[Ctx], int] = lambda c: c.server.port,
    *,
    host: str = LOOPBACK,
    user: str = "app",
    password: str = "app-pw",
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        broker, _ = _broker(_client(port(c), user=user, password=password, host=host))
        _actor(broker).send("/srv/invoices/2024-q3.pdf")

    return run


FAM.add("wrong_password", AUTH, "WRONGPASS invalid username-password pair", _send(password="x"))
FAM.add(
    "read_only_user",
    AUTH,
    "NOPERM: the reader ACL user may not run the broker's enqueue script",
    _send(user="reader", password="reader-pw"),
)
FAM.add(
    "out_of_memory",
    QUOTA,
    "OOM command not allowed when used memory > 'maxmemory' (noeviction)",
    _send(lambda c: c.server.full_port, user="default", password=""),
)
FAM.add(
    "read_only_replica",
    NET | INT,
    "the address is a replica whose primary is down: it refuses the enqueue",
    _send(lambda c: c.server.replica_port, user="default", password=""),
)


def _no_worker(c: Ctx) -> None:
    broker, backend = _broker(_client(c.server.port, socket_timeout=3))
    message = _actor(broker).send("/srv/invoices/2024-q3.pdf")
    message.get_result(backend=backend, block=True, timeout=1000)


FAM.add(
    "result_timeout",
    TO,
    "no worker runs the message: ResultTimeout after a 1 s wait for its result",
    _no_worker,
)


def _not_ready(c: Ctx) -> None:
    broker, backend = _broker(_client(c.server.port))
    message = _actor(broker).send("/srv/invoices/2024-q3.pdf")
    message.get_result(backend=backend)


FAM.add(
    "result_missing",
    NF | INT,
    "the result is asked for without blocking before any worker ran it: ResultMissing",
    _not_ready,
)


def _missing_input(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _worker_fails(c: Ctx) -> None:
    import dramatiq

    broker, backend = _broker(_client(c.server.port))
    actor = _actor(broker, _missing_input)
    worker = dramatiq.Worker(broker, worker_threads=1, worker_timeout=100)
    worker.start()
    try:
        message = actor.send("/srv/invoices/2024-q3.pdf")
        message.get_result(backend=backend, block=True, timeout=2500)
    finally:
        worker.stop(timeout=1000)


FAM.add(
    "task_failed_missing_file",
    NF | INT,
    "the worker ran the actor, it raised FileNotFoundError: get_result raises ResultFailure",
    _worker_fails,
)


def _join_timeout(c: Ctx) -> None:
    broker, _ = _broker(_client(c.server.port))
    actor = _actor(broker)
    actor.send("/srv/invoices/2024-q3.pdf")
    broker.join(actor.queue_name, timeout=300)


FAM.add(
    "join_timeout",
    TO,
    "the pack waits for the queue to drain but no worker consumes it: QueueJoinTimeout",
    _join_timeout,
)


def _window_limit(c: Ctx) -> None:
    from dramatiq.rate_limits import WindowRateLimiter
    from dramatiq.rate_limits.backends import RedisBackend

    backend = RedisBackend(client=_client(c.server.port))
    limiter = WindowRateLimiter(backend, f"smtp-{os.urandom(4).hex()}", limit=2, window=60)  # type: ignore[no-untyped-call]
    for _ in range(3):
        with limiter.acquire():
            pass


FAM.add(
    "window_rate_limit",
    RL,
    "a third send inside a 60 s window allowing 2: RateLimitExceeded",
    _window_limit,
)


def _concurrent_limit(c: Ctx) -> None:
    from dramatiq.rate_limits import ConcurrentRateLimiter
    from dramatiq.rate_limits.backends import RedisBackend

    backend = RedisBackend(client=_client(c.server.port))
    key = f"export-{os.urandom(4).hex()}"
    held = ConcurrentRateLimiter(backend, key, limit=1)  # type: ignore[no-untyped-call]
    other = ConcurrentRateLimiter(backend, key, limit=1)  # type: ignore[no-untyped-call]
    with held.acquire(), other.acquire():
        pass


FAM.add(
    "concurrency_limit",
    RL | INT,
    "another export holds the only slot of a concurrent limiter (limit=1): RateLimitExceeded",
    _concurrent_limit,
)


def _unknown_actor(c: Ctx) -> None:
    broker, _ = _broker(_client(c.server.port))
    broker.get_actor("send_invoice_reminders")


FAM.add(
    "actor_not_found",
    NF | INT,
    "the pack looks up an actor no module declared: ActorNotFound",
    _unknown_actor,
)


def _unencodable(c: Ctx) -> None:
    broker, _ = _broker(_client(c.server.port))
    _actor(broker).send(open)


FAM.add(
    "unencodable_argument",
    INT,
    "the pack passes a function as the message's argument: the JSON encoder refuses it",
    _unencodable,
)
FAM.add("refused", NET, "nothing listens", _send(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve (.invalid)", _send(lambda c: 6379, host=UNRESOLVABLE))
FAM.add("silent", TO, "the server never answers (socket_timeout=1)", _send(lambda c: c.net.silent))
FAM.add("dropped", NET, "the peer closes the connection at once", _send(lambda c: c.net.close_now))
FAM.add("garbage", NET, "the peer answers bytes that are not RESP", _send(lambda c: c.net.garbage))
