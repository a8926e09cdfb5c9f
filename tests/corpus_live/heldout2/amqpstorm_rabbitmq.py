"""AMQPStorm against a real RabbitMQ 3.10 (Debian's rabbitmq-server): AMQP 0-9-1 reply codes
(403 ACCESS_REFUSED, 404 NOT_FOUND, 406 PRECONDITION_FAILED, 530 NOT_ALLOWED: a numeric
space of the protocol's own, overlapping HTTP's) and the transport's failures."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout2._daemons import Rabbit, rabbitmq

Ctx = Served[Rabbit]

FAM = family("amqpstorm", "RabbitMQ 3.10 (Debian), real", served(rabbitmq), half="heldout2")


def _do(
    op: Any = None,
    *,
    user: str = "app",
    vhost: str = "/",
    password: str | None = None,
    port: Any = None,
    host: str = LOOPBACK,
) -> Any:
    def run(ctx: Ctx) -> Any:
        import amqpstorm

        conn = amqpstorm.Connection(
            host,
            user,
            f"{user}-pw" if password is None else password,
            port=ctx.server.port if port is None else port(ctx),
            virtual_host=vhost,
            timeout=1,
        )
        try:
            if op is not None:
                channel = conn.channel()
                return op(channel)
            return None
        finally:
            conn.close()

    return run


def _publish(exchange: str, body: bytes) -> Any:
    def op(channel: Any) -> Any:
        import amqpstorm

        channel.confirm_deliveries()
        return amqpstorm.Message.create(channel, body).publish("jobs", exchange=exchange)

    return op


FAM.add("wrong_password", AUTH, "403 ACCESS_REFUSED: login refused", _do(password="nope"))
FAM.add(
    "unknown_user", AUTH, "403 ACCESS_REFUSED for a user that does not exist", _do(user="ghost")
)
FAM.add(
    "vhost_refused",
    AUTH,
    "the user has no permission on the vhost (a refusal, whatever number carries it)",
    _do(vhost="locked"),
)
FAM.add(
    "vhost_missing",
    NF,
    "the vhost does not exist (530 NOT_ALLOWED 'vhost ghost not found': 530 is AMQP's, not "
    "an HTTP 5xx)",
    _do(vhost="ghost"),
)
FAM.add(
    "queue_missing",
    NF,
    "404 NOT_FOUND: passive declare of a queue that does not exist",
    _do(lambda ch: ch.queue.declare("ghost-q", passive=True)),
)
FAM.add(
    "exchange_missing",
    NF,
    "404 NOT_FOUND: publish to an exchange that does not exist",
    _do(_publish("ghost-ex", b"job")),
)
FAM.add(
    "declare_refused",
    AUTH,
    "403 ACCESS_REFUSED: a read-only user declares a queue",
    _do(lambda ch: ch.queue.declare("new-q"), user="reader"),
)
FAM.add(
    "inequivalent",
    EXISTS | INT,
    "406 PRECONDITION_FAILED: the queue exists with other arguments",
    _do(lambda ch: ch.queue.declare("jobs", durable=True, arguments={"x-max-length": 5})),
)
FAM.add(
    "too_large",
    INT,
    "406 PRECONDITION_FAILED: the message is over max_message_size: never passes",
    _do(_publish("", b"x" * 8192)),
)
FAM.add("refused", NET, "nothing listens", _do(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _do(port=lambda c: 5672, host=UNRESOLVABLE))
# No silent/dropped cases: AMQPStorm waits a fixed 30 s for the handshake (its own
# "connection timed out"), longer than the corpus's 25 s call deadline.
