"""Kombu (Celery's messaging library: ``Connection``, ``Producer``, ``Queue``,
``SimpleQueue``, its py-amqp transport with publisher confirms) against a real RabbitMQ
(Debian's ``rabbitmq-server``): users ``app`` (all rights on ``/``) and ``reader`` (read only
on ``/``), a vhost nobody may use, a queue declared with ``x-max-length``, a 4 KiB message
size limit. The failures are the broker's own AMQP channel and connection closes as Kombu
raises them, Kombu's own ``OperationalError`` for a broker it cannot reach, its ``Empty``
for a queue with nothing in it. Nothing is faked."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
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
    import kombu  # noqa: F401 - skip cleanly when missing

    return rabbitmq(stack, work)


FAM = family(
    "kombu",
    "Kombu (py-amqp transport) against RabbitMQ (Debian), real",
    served(_start),
    half="heldout9",
)


def _kombu() -> Any:
    import kombu

    return kombu


def _conn(
    host: str, port: int, *, user: str = "app", password: str = "app-pw", vhost: str = ""
) -> Any:
    return _kombu().Connection(
        f"amqp://{user}:{password}@{host}:{port}/{vhost}",
        connect_timeout=1,
        transport_options={"confirm_publish": True, "read_timeout": 1, "write_timeout": 1},
    )


def _connect(host: str, port: int, **kw: Any) -> None:
    conn = _conn(host, port, **kw)
    try:
        conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=2)
    finally:
        conn.release()


def _on(body: Callable[[Any], Any], **kw: Any) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        conn = _conn(LOOPBACK, c.server.port, **kw)
        try:
            conn.connect()
            body(conn)
        finally:
            conn.release()

    return run


def _publish(exchange: str, routing_key: str, body: bytes = b"job") -> Callable[[Any], None]:
    def go(conn: Any) -> None:
        kombu = _kombu()

        with conn.channel() as ch:
            kombu.Producer(ch).publish(
                body, exchange=exchange, routing_key=routing_key, content_type="text/plain"
            )

    return go


def _passive(name: str) -> Callable[[Any], None]:
    def go(conn: Any) -> None:
        kombu = _kombu()

        with conn.channel() as ch:
            kombu.Queue(name, channel=ch).queue_declare(passive=True)

    return go


def _redeclare_jobs(conn: Any) -> None:
    kombu = _kombu()

    with conn.channel() as ch:
        kombu.Queue("jobs", durable=True, channel=ch, max_length=50).declare()


def _empty_get(conn: Any) -> None:
    q = conn.SimpleQueue("kombu-empty")
    try:
        q.get(timeout=0.5)
    finally:
        q.close()


def _exchange_type_clash(conn: Any) -> None:
    kombu = _kombu()

    with conn.channel() as ch:
        kombu.Exchange("kombu-orders", type="direct", channel=ch).declare()
        kombu.Exchange("kombu-orders", type="fanout", channel=ch).declare()


FAM.add(
    "wrong_password",
    AUTH,
    "ACCESS_REFUSED: the login was refused",
    _on(lambda conn: None, password="nope"),
)
FAM.add(
    "vhost_denied",
    AUTH,
    "app has no permission on vhost locked",
    _on(lambda conn: None, vhost="locked"),
)
FAM.add(
    "vhost_missing",
    NF | AUTH,
    "the vhost does not exist",
    _on(lambda conn: None, vhost="nowhere"),
)
FAM.add(
    "write_refused",
    AUTH,
    "reader may not write to the default exchange",
    _on(_publish("", "jobs"), user="reader", password="reader-pw"),
)
FAM.add(
    "no_exchange",
    NF,
    "publish to an exchange that does not exist: NOT_FOUND",
    _on(_publish("ghost-exchange", "x")),
)
FAM.add(
    "no_queue",
    NF,
    "passive declare of a queue that does not exist: NOT_FOUND",
    _on(_passive("ghost-queue")),
)
FAM.add(
    "inequivalent_arg",
    INT,
    "redeclare of jobs with another x-max-length: PRECONDITION_FAILED",
    _on(_redeclare_jobs),
)
FAM.add(
    "exchange_type_clash",
    INT,
    "redeclare of a direct exchange as fanout: PRECONDITION_FAILED",
    _on(_exchange_type_clash),
)
FAM.add(
    "message_too_large",
    INT | QUOTA,
    "a 10 KB body over the broker's 4 KiB max_message_size",
    _on(_publish("", "jobs", b"x" * 10_000)),
)
FAM.add(
    "queue_empty",
    TO | NF,
    "SimpleQueue.get waits 0.5 s on a queue with no message",
    _on(_empty_get),
)
FAM.add("refused", NET, "nothing listens", lambda c: _connect(LOOPBACK, c.net.closed))
FAM.add("dns", NET, "host does not resolve", lambda c: _connect(UNRESOLVABLE, 5672))
FAM.add(
    "silent",
    TO,
    "the broker never answers the protocol header",
    lambda c: _connect(LOOPBACK, c.net.silent),
)
FAM.add("dropped", NET, "closed at once", lambda c: _connect(LOOPBACK, c.net.close_now))
FAM.add(
    "garbage",
    NET | INT,
    "the peer answers bytes of no protocol",
    lambda c: _connect(LOOPBACK, c.net.garbage),
)
