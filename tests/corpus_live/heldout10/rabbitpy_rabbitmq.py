"""rabbitpy (a thread-safe, pure-Python AMQP 0-9-1 client) against a real RabbitMQ (Debian's
``rabbitmq-server``): users ``app`` (everything on ``/``) and ``reader`` (read only on ``/``), a
vhost ``locked`` nobody may use, a durable queue ``jobs``, a 4096-byte message size limit.
The failures are rabbitpy's own exceptions (``AMQPNotFound``, ``AMQPAccessRefused``...)
carrying the broker's Connection.Close / Channel.Close replies, or the errors its transport
meets. Nothing is faked."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
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
from corpus_live.heldout2._daemons import Rabbit, rabbitmq

Ctx = Served[Rabbit]


def _start(stack: contextlib.ExitStack, work: Path) -> Rabbit:
    import rabbitpy  # noqa: F401 - skip cleanly when missing

    return rabbitmq(stack, work)


FAM = family(
    "rabbitpy",
    "rabbitpy against RabbitMQ (Debian), real",
    served(_start),
    half="heldout10",
)


def _url(port: int, *, user: str, password: str, vhost: str, host: str) -> str:
    from urllib.parse import quote

    return f"amqp://{user}:{password}@{host}:{port}/{quote(vhost, safe='')}?timeout=1&heartbeat=0"


def _amqp(
    body: Callable[[Any, Any], Any] | None = None,
    *,
    user: str = "app",
    password: str = "app-pw",
    vhost: str = "/",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] = lambda c: c.server.port,
) -> Callable[[Ctx], Any]:
    def run(c: Ctx) -> Any:
        import rabbitpy

        url = _url(port(c), user=user, password=password, vhost=vhost, host=host)
        with rabbitpy.Connection(url) as conn, conn.channel() as ch:
            return body(conn, ch) if body is not None else None

    return run


def _passive_missing(conn: Any, ch: Any) -> Any:
    import rabbitpy

    return rabbitpy.Queue(ch, "ghost-queue").declare(passive=True)


def _declare_reader(conn: Any, ch: Any) -> Any:
    import rabbitpy

    return rabbitpy.Queue(ch, "reader-queue").declare()


def _inequivalent(conn: Any, ch: Any) -> Any:
    import rabbitpy

    return rabbitpy.Queue(ch, "jobs", durable=False).declare()


def _bind_missing_exchange(conn: Any, ch: Any) -> Any:
    import rabbitpy

    q = rabbitpy.Queue(ch, "bind-test", auto_delete=True)
    q.declare()
    return q.bind("ghost-exchange", routing_key="x")


def _bad_exchange_type(conn: Any, ch: Any) -> Any:
    import rabbitpy

    return rabbitpy.Exchange(ch, "weird", exchange_type="nonsense").declare()


def _too_big(conn: Any, ch: Any) -> Any:
    import rabbitpy

    ch.enable_publisher_confirms()
    return rabbitpy.Message(ch, b"z" * 8000).publish("", "jobs")


def _no_route(conn: Any, ch: Any) -> Any:
    import rabbitpy

    ch.enable_publisher_confirms()
    return rabbitpy.Message(ch, b"order").publish("", "no-such-queue", mandatory=True)


def _exclusive_elsewhere(c: Ctx) -> Any:
    import rabbitpy

    url = _url(c.server.port, user="app", password="app-pw", vhost="/", host=LOOPBACK)
    with rabbitpy.Connection(url) as owner, owner.channel() as och:
        rabbitpy.Queue(och, "owned-exclusive", exclusive=True).declare()
        with rabbitpy.Connection(url) as other, other.channel() as ch:
            return rabbitpy.Queue(ch, "owned-exclusive").declare(passive=True)


def _get_closed_channel(conn: Any, ch: Any) -> Any:
    import rabbitpy

    ch.close()
    return rabbitpy.Queue(ch, "jobs").get()


FAM.add("wrong_password", AUTH, "ACCESS_REFUSED: login refused", _amqp(password="nope"))
FAM.add(
    "unknown_user",
    AUTH,
    "ACCESS_REFUSED: a user the broker does not have",
    _amqp(user="ghost", password="x"),
)
FAM.add(
    "vhost_denied",
    AUTH,
    "NOT_ALLOWED: app has no permissions on vhost locked",
    _amqp(vhost="locked"),
)
FAM.add(
    "vhost_missing",
    NF | AUTH,
    "NOT_ALLOWED: the vhost does not exist",
    _amqp(vhost="no-such-vhost"),
)
FAM.add(
    "configure_denied",
    AUTH,
    "ACCESS_REFUSED: reader may not configure (declare) a queue",
    _amqp(_declare_reader, user="reader", password="reader-pw"),
)
FAM.add("queue_missing", NF, "NOT_FOUND: passive declare of a queue", _amqp(_passive_missing))
FAM.add(
    "inequivalent_queue",
    EXISTS | INT,
    "PRECONDITION_FAILED: jobs exists durable, redeclared non-durable",
    _amqp(_inequivalent),
)
FAM.add(
    "bind_missing_exchange",
    NF,
    "NOT_FOUND: binding a queue to an exchange that does not exist",
    _amqp(_bind_missing_exchange),
)
FAM.add(
    "bad_exchange_type",
    INT,
    "COMMAND_INVALID: an exchange type the broker does not know",
    _amqp(_bad_exchange_type),
)
FAM.add(
    "message_too_big",
    QUOTA | INT,
    "an 8000-byte message over the broker's 4096-byte max_message_size",
    _amqp(_too_big),
)
FAM.add(
    "unroutable",
    NF,
    "a mandatory publish no queue is bound for: Basic.Return NO_ROUTE",
    _amqp(_no_route),
)
FAM.add(
    "exclusive_elsewhere",
    INT,
    "RESOURCE_LOCKED: a queue declared exclusive by another connection",
    _exclusive_elsewhere,
)
FAM.add(
    "closed_channel",
    INT,
    "the pack's own bug: a get on a channel it already closed",
    _amqp(_get_closed_channel),
)
FAM.add(
    "refused",
    NET | TO,
    "nothing listens: refused, or a 1 s socket-open timeout when rabbitpy's IO thread "
    "reports the refusal after its caller stopped looking",
    _amqp(port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET | TO,
    "host does not resolve: rabbitpy's IO thread never opens the socket (1 s)",
    _amqp(host=UNRESOLVABLE, port=lambda c: 5672),
)
FAM.add(
    "silent",
    TO,
    "the broker accepts and never answers: timeout 1 s",
    _amqp(port=lambda c: c.net.silent),
)
