"""aio-pika (asyncio AMQP 0-9-1 over aiormq) against a real RabbitMQ 3 (Debian's
``rabbitmq-server``): the broker's connection and channel closes (``ACCESS_REFUSED``,
``NOT_FOUND``, ``PRECONDITION_FAILED``, ``NOT_ALLOWED``...) as aiormq's exceptions, publisher
confirms answered ``basic.nack`` (a queue full with ``reject-publish``) or ``basic.return``
(an unroutable mandatory message)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
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
from corpus_live.heldout2._daemons import Rabbit, rabbitmq

Ctx = Served[Rabbit]

FAM = family(
    "aio-pika", "RabbitMQ 3 (Debian rabbitmq-server), real", served(rabbitmq), half="heldout5"
)


async def _connect(
    c: Ctx,
    *,
    user: str = "app",
    password: str = "app-pw",
    vhost: str = "",
    host: str = LOOPBACK,
    port: int | None = None,
) -> Any:
    import aio_pika

    p = c.server.port if port is None else port
    return await aio_pika.connect(f"amqp://{user}:{password}@{host}:{p}/{vhost}", timeout=2)


def _on_channel(
    body: Callable[[Any], Awaitable[Any]], **kw: Any
) -> Callable[[Ctx], Awaitable[None]]:
    async def run(c: Ctx) -> None:
        conn = await _connect(c, **kw)
        try:
            ch = await conn.channel(publisher_confirms=True, on_return_raises=True)
            await body(ch)
        finally:
            await conn.close()

    return run


def _publish(routing_key: str, data: bytes = b"job", *, mandatory: bool = False) -> Any:
    async def body(ch: Any) -> None:
        import aio_pika

        await ch.default_exchange.publish(
            aio_pika.Message(data), routing_key=routing_key, mandatory=mandatory, timeout=2
        )

    return body


async def _queue_full(ch: Any) -> None:
    import aio_pika

    q = await ch.declare_queue(
        "capped", arguments={"x-max-length": 1, "x-overflow": "reject-publish"}
    )
    await q.purge()
    for i in range(2):
        await ch.default_exchange.publish(aio_pika.Message(b"job %d" % i), routing_key="capped")


async def _configure_denied(ch: Any) -> None:
    await ch.declare_queue("reader-own")


FAM.add(
    "wrong_password",
    AUTH,
    "ACCESS_REFUSED: login refused using authentication mechanism PLAIN",
    lambda c: _connect(c, password="wrong"),
)
FAM.add(
    "vhost_refused",
    AUTH,
    "connection.close 530 NOT_ALLOWED: access to vhost 'locked' refused for user 'app' (aiormq: InvalidFrameError carrying the Close frame)",
    lambda c: _connect(c, vhost="locked"),
)
FAM.add(
    "vhost_missing",
    NF | AUTH,
    "connection.close 530 NOT_ALLOWED: vhost 'staging' not found (aiormq: InvalidFrameError carrying the Close frame)",
    lambda c: _connect(c, vhost="staging"),
)
FAM.add(
    "no_queue",
    NF,
    "channel closed 404 NOT_FOUND: no queue 'ghost' in vhost '/' (passive declare)",
    _on_channel(lambda ch: ch.declare_queue("ghost", passive=True)),
)
FAM.add(
    "no_exchange",
    NF,
    "channel closed 404 NOT_FOUND: no exchange 'events' in vhost '/' (passive declare)",
    _on_channel(lambda ch: ch.declare_exchange("events", passive=True)),
)
FAM.add(
    "configure_denied",
    AUTH,
    "channel closed 403 ACCESS_REFUSED: configure access to queue refused for user 'reader'",
    _on_channel(_configure_denied, user="reader", password="reader-pw"),
)
FAM.add(
    "write_denied",
    AUTH,
    "channel closed 403 ACCESS_REFUSED: write access to exchange 'amq.default' refused for user 'reader'",
    _on_channel(_publish("jobs"), user="reader", password="reader-pw"),
)
FAM.add(
    "inequivalent_arg",
    EXISTS | INT,
    "channel closed 406 PRECONDITION_FAILED: queue 'jobs' exists with other arguments (durable)",
    _on_channel(lambda ch: ch.declare_queue("jobs", durable=False)),
)
FAM.add(
    "message_too_large",
    INT,
    "channel closed 406 PRECONDITION_FAILED: message size 8192 larger than max size 4096",
    _on_channel(_publish("jobs", b"x" * 8192)),
)
FAM.add(
    "queue_full",
    RL | QUOTA,
    "basic.nack from the broker: queue 'capped' is at x-max-length with reject-publish",
    _on_channel(_queue_full),
)
FAM.add(
    "unroutable",
    NF,
    "basic.return 312 NO_ROUTE: no queue bound for a mandatory message",
    _on_channel(_publish("no-such-queue", mandatory=True)),
)
FAM.add("refused", NET, "nothing listens", lambda c: _connect(c, port=c.net.closed))
FAM.add("dns", NET, "host does not resolve", lambda c: _connect(c, host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "the broker never answers the protocol header (timeout 2)",
    lambda c: _connect(c, port=c.net.silent),
)
FAM.add("dropped", NET, "closed at once", lambda c: _connect(c, port=c.net.close_now))
FAM.add(
    "not_amqp",
    NET | INT,
    "the peer answers bytes that are no AMQP frame, then closes",
    lambda c: _connect(c, port=c.net.garbage),
)
