"""pika (RabbitMQ's own Python client, its ``BlockingConnection``) against a real RabbitMQ
(Debian's ``rabbitmq-server``): users ``app`` (all rights on ``/``) and ``reader`` (read only
on ``/``), a vhost nobody may use, a 4 KiB message size limit. Channel and connection closes
are the broker's own AMQP replies; the transport failures are real sockets. Nothing is
faked."""

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
    import pika  # type: ignore[import-untyped]  # noqa: F401 - skip cleanly when missing

    return rabbitmq(stack, work)


FAM = family(
    "pika",
    "pika (BlockingConnection) against RabbitMQ (Debian), real",
    served(_start),
    half="heldout8",
)


def _connect(
    host: str,
    port: int,
    *,
    user: str = "app",
    password: str = "app-pw",
    vhost: str = "/",
) -> Any:
    import pika

    params = pika.ConnectionParameters(
        host=host,
        port=port,
        virtual_host=vhost,
        credentials=pika.PlainCredentials(user, password),
        connection_attempts=1,
        socket_timeout=1,
        stack_timeout=2,
        blocked_connection_timeout=2,
    )
    return pika.BlockingConnection(params)


def _on(
    body: Callable[[Any], Any], *, user: str = "app", password: str = "app-pw", vhost: str = "/"
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        conn = _connect(LOOPBACK, c.server.port, user=user, password=password, vhost=vhost)
        try:
            body(conn.channel())
        finally:
            if conn.is_open:
                conn.close()

    return run


def _conn_only(**kw: str) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        _connect(LOOPBACK, c.server.port, **kw).close()

    return run


def _full_queue(ch: Any) -> None:
    ch.queue_declare(
        "fresh8a-bounded",
        auto_delete=True,
        arguments={"x-max-length": 1, "x-overflow": "reject-publish"},
    )
    ch.queue_purge("fresh8a-bounded")
    ch.confirm_delivery()
    ch.basic_publish("", "fresh8a-bounded", b"first")
    ch.basic_publish("", "fresh8a-bounded", b"second")


def _unroutable(ch: Any) -> None:
    ch.confirm_delivery()
    ch.basic_publish("amq.direct", "nobody-binds-this", b"x", mandatory=True)


def _redeclare(ch: Any) -> None:
    # "jobs" exists, durable with x-max-length 10: declared again with other arguments
    ch.queue_declare("jobs", durable=True, arguments={"x-max-length": 99})


def _exclusive_elsewhere(c: Ctx) -> None:
    owner = _connect(LOOPBACK, c.server.port)
    try:
        owner.channel().queue_declare("fresh8a-private", exclusive=True)
        _on(lambda ch: ch.queue_declare("fresh8a-private", passive=True))(c)
    finally:
        owner.close()


FAM.add("wrong_password", AUTH, "ACCESS_REFUSED at login", _conn_only(password="bad"))
FAM.add(
    "vhost_denied",
    AUTH,
    "app has no permission on vhost locked",
    _conn_only(vhost="locked"),
)
FAM.add("unknown_vhost", NF | AUTH, "vhost does not exist", _conn_only(vhost="nowhere"))
FAM.add(
    "reader_publishes",
    AUTH,
    "reader may not write to amq.direct",
    _on(
        lambda ch: (ch.confirm_delivery(), ch.basic_publish("amq.direct", "jobs", b"x")),
        user="reader",
        password="reader-pw",
    ),
)
FAM.add(
    "reader_declares",
    AUTH,
    "reader may not configure a new queue",
    _on(lambda ch: ch.queue_declare("fresh8a-new"), user="reader", password="reader-pw"),
)
FAM.add(
    "missing_queue",
    NF,
    "passive declare of a queue that does not exist",
    _on(lambda ch: ch.queue_declare("orders", passive=True)),
)
FAM.add(
    "missing_exchange",
    NF,
    "publish to an exchange that does not exist",
    _on(lambda ch: (ch.confirm_delivery(), ch.basic_publish("billing", "k", b"x"))),
)
FAM.add(
    "inequivalent_queue",
    EXISTS | INT,
    "the queue exists with other arguments (PRECONDITION_FAILED)",
    _on(_redeclare),
)
FAM.add(
    "exclusive_queue_locked",
    INT,
    "another connection owns the exclusive queue (RESOURCE_LOCKED)",
    _exclusive_elsewhere,
)
FAM.add(
    "message_too_large",
    INT,
    "message larger than the broker's max_message_size (4 KiB)",
    _on(lambda ch: (ch.confirm_delivery(), ch.basic_publish("", "jobs", b"x" * 8192))),
)
FAM.add(
    "queue_full",
    QUOTA,
    "bounded queue (x-max-length 1, reject-publish) nacks the second message",
    _on(_full_queue),
)
FAM.add(
    "unroutable",
    NF | INT,
    "mandatory message no queue is bound for is returned",
    _on(_unroutable),
)
FAM.add("refused", NET, "nothing listens", lambda c: _connect(LOOPBACK, c.net.closed))
FAM.add("dns", NET, "host does not resolve", lambda c: _connect(UNRESOLVABLE, 5672))
FAM.add(
    "silent",
    TO,
    "server never answers the protocol header",
    lambda c: _connect(LOOPBACK, c.net.silent),
)
FAM.add("dropped", NET, "closed at once", lambda c: _connect(LOOPBACK, c.net.close_now))
