"""py-amqp (the ``amqp`` package, Celery's and Kombu's AMQP 0-9-1 client) against a real
RabbitMQ (Debian's ``rabbitmq-server``): users ``app`` (all rights on ``/``) and ``reader``
(read only on ``/``), a vhost nobody may use, a 4 KiB message size limit. Channel and
connection closes are the broker's own AMQP replies; publisher confirms and returned messages
are the broker's too; the transport failures are real sockets. Nothing is faked."""

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
    import amqp  # type: ignore[import-untyped]  # noqa: F401 - skip cleanly when missing

    return rabbitmq(stack, work)


FAM = family(
    "py-amqp",
    "py-amqp against RabbitMQ (Debian), real",
    served(_start),
    half="heldout8",
)


def _connect(
    host: str, port: int, *, user: str = "app", password: str = "app-pw", vhost: str = "/"
) -> Any:
    import amqp

    conn = amqp.Connection(
        host=f"{host}:{port}",
        userid=user,
        password=password,
        virtual_host=vhost,
        connect_timeout=1,
        read_timeout=1,
        write_timeout=1,
    )
    try:
        conn.connect()
    except BaseException:
        conn.collect()
        raise
    return conn


def _on(
    body: Callable[[Any], Any], *, user: str = "app", password: str = "app-pw", vhost: str = "/"
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        conn = _connect(LOOPBACK, c.server.port, user=user, password=password, vhost=vhost)
        try:
            body(conn.channel())
        finally:
            conn.collect()

    return run


def _login(**kw: str) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        _connect(LOOPBACK, c.server.port, **kw).close()

    return run


def _msg(body: bytes) -> Any:
    import amqp

    return amqp.Message(body)


def _confirmed(exchange: str, key: str, body: bytes = b"x", **kw: Any) -> Callable[[Any], None]:
    def go(ch: Any) -> None:
        ch.basic_publish_confirm(
            _msg(body), exchange=exchange, routing_key=key, confirm_timeout=2, **kw
        )

    return go


def _full_queue(ch: Any) -> None:
    ch.queue_declare(
        "fresh8a-bounded",
        auto_delete=True,
        arguments={"x-max-length": 1, "x-overflow": "reject-publish"},
    )
    ch.queue_purge("fresh8a-bounded")
    for body in (b"first", b"second"):
        ch.basic_publish_confirm(
            _msg(body), exchange="", routing_key="fresh8a-bounded", confirm_timeout=2
        )


def _exclusive_elsewhere(c: Ctx) -> None:
    owner = _connect(LOOPBACK, c.server.port)
    try:
        owner.channel().queue_declare("fresh8a-private", exclusive=True)
        _on(lambda ch: ch.queue_declare("fresh8a-private", passive=True))(c)
    finally:
        owner.collect()


FAM.add("wrong_password", AUTH, "login refused (ACCESS_REFUSED)", _login(password="nope"))
FAM.add("vhost_denied", AUTH, "app has no permission on the vhost", _login(vhost="locked"))
FAM.add("unknown_vhost", NF | AUTH, "the vhost does not exist", _login(vhost="nowhere"))
FAM.add(
    "reader_publishes",
    AUTH,
    "reader may not write to the exchange",
    _on(_confirmed("amq.direct", "jobs"), user="reader", password="reader-pw"),
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
    _on(_confirmed("billing", "k")),
)
FAM.add(
    "inequivalent_queue",
    EXISTS | INT,
    "the queue exists with other arguments",
    _on(
        lambda ch: ch.queue_declare(
            "jobs", durable=True, auto_delete=False, arguments={"x-max-length": 99}
        )
    ),
)
FAM.add(
    "exclusive_queue_locked",
    INT,
    "another connection owns the exclusive queue",
    _exclusive_elsewhere,
)
FAM.add(
    "message_too_large",
    INT,
    "message larger than the broker's max_message_size (4 KiB)",
    _on(_confirmed("", "jobs", b"x" * 8192)),
)
FAM.add(
    "queue_full",
    QUOTA,
    "bounded queue (max length 1, reject-publish) rejects the second message",
    _on(_full_queue),
)
FAM.add(
    "unroutable",
    NF | INT,
    "a mandatory message no queue is bound for comes back",
    _on(_confirmed("amq.direct", "nobody-binds-this", mandatory=True)),
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
