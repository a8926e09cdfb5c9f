"""aioamqp (an asyncio AMQP 0-9-1 client) against a real RabbitMQ (Debian's
``rabbitmq-server``: users with per-vhost permissions, a vhost nobody may use, a
``max_message_size`` of 4096 bytes, a queue declared with ``x-max-length``). Nothing is
faked but the transport failures. A refused login or a closed channel reaches the caller as
``AmqpClosedConnection`` / ``ChannelClosed`` with the broker's reply code and text; aioamqp
has no connect timeout of its own, so a silent peer meets the pack's ``asyncio.wait_for``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
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
    run_async,
    served,
)
from corpus_live.heldout2._daemons import Rabbit, rabbitmq

Ctx = Served[Rabbit]


def _start(stack: contextlib.ExitStack, work: Path) -> Rabbit:
    return rabbitmq(stack, work)


FAM = family(
    "aioamqp",
    "aioamqp against RabbitMQ (Debian), real",
    served(_start),
    half="heldout12",
)

Body = Callable[[Any], Awaitable[None]]


def _amqp(
    body: Body | None = None,
    *,
    login: str = "app",
    password: str = "app-pw",
    vhost: str = "/",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    deadline: float = 2.5,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        import aioamqp  # type: ignore[import-untyped]

        async def go() -> None:
            p = c.server.port if port is None else port(c)
            transport, protocol = await aioamqp.connect(
                host, p, login=login, password=password, virtualhost=vhost
            )
            try:
                channel = await protocol.channel()
                if body is not None:
                    await body(channel)
            finally:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(protocol.close(), 1)
                transport.close()

        async def bounded() -> None:
            await asyncio.wait_for(go(), deadline)

        run_async(bounded())

    return run


async def _declare_reader(channel: Any) -> None:
    await channel.queue_declare("reports", durable=True)


async def _passive_missing(channel: Any) -> None:
    await channel.queue_declare("invoices", passive=True)


async def _inequivalent(channel: Any) -> None:
    await channel.queue_declare("jobs", durable=True)  # declared with x-max-length 10


async def _bind_missing_exchange(channel: Any) -> None:
    await channel.queue_declare("bind-me", exclusive=True)
    await channel.queue_bind("bind-me", "events.missing", routing_key="k")


async def _publish_missing_exchange(channel: Any) -> None:
    await channel.confirm_select()
    await channel.basic_publish(b"hello", exchange_name="billing.events", routing_key="k")
    await channel.queue_declare("jobs", passive=True)  # the pack's next call meets the close


async def _publish_too_big(channel: Any) -> None:
    await channel.confirm_select()
    await channel.basic_publish(b"x" * 8192, exchange_name="", routing_key="jobs")
    await channel.queue_declare("jobs", passive=True)  # the pack's next call meets the close


async def _delete_foreign(channel: Any) -> None:
    await channel.queue_delete("jobs")


async def _exchange_type_clash(channel: Any) -> None:
    await channel.exchange_declare("amq.direct", "fanout", durable=True)


async def _unknown_exchange_type(channel: Any) -> None:
    await channel.exchange_declare("metrics", "round-robin")


FAM.add(
    "wrong_password",
    AUTH | NET,
    "login refused (wrong password): the broker closes the socket after ~3 s, aioamqp "
    "raises AmqpClosedConnection with no text",
    _amqp(password="not-it", deadline=4),
)
FAM.add(
    "unknown_user",
    AUTH | NET,
    "login refused (a user the broker does not know): the socket closed, AmqpClosedConnection",
    _amqp(login="mallory", password="x", deadline=4),
)
FAM.add(
    "vhost_denied",
    AUTH | NET,
    "NOT_ALLOWED (530) access to vhost 'locked' refused; aioamqp raises AmqpClosedConnection",
    _amqp(vhost="locked"),
)
FAM.add(
    "vhost_missing",
    NF | AUTH | NET,
    "NOT_ALLOWED (530) vhost 'staging' not found; aioamqp raises AmqpClosedConnection",
    _amqp(vhost="staging"),
)
FAM.add(
    "configure_denied",
    AUTH,
    "ACCESS_REFUSED (403): the reader user may not declare a queue (configure permission)",
    _amqp(_declare_reader, login="reader", password="reader-pw"),
)
FAM.add(
    "delete_denied",
    AUTH,
    "ACCESS_REFUSED (403): the reader user may not delete the jobs queue",
    _amqp(_delete_foreign, login="reader", password="reader-pw"),
)
FAM.add(
    "queue_not_found",
    NF,
    "NOT_FOUND (404): no queue 'invoices' in vhost '/' (a passive declare)",
    _amqp(_passive_missing),
)
FAM.add(
    "inequivalent_queue",
    EXISTS | INT,
    "PRECONDITION_FAILED (406): inequivalent arg 'x-max-length' for the existing queue 'jobs'",
    _amqp(_inequivalent),
)
FAM.add(
    "bind_missing_exchange",
    NF,
    "NOT_FOUND (404): no exchange 'events.missing' to bind to",
    _amqp(_bind_missing_exchange),
)
FAM.add(
    "publish_missing_exchange",
    NF,
    "NOT_FOUND (404): no exchange 'billing.events' (the channel is closed on publish)",
    _amqp(_publish_missing_exchange),
)
FAM.add(
    "message_too_big",
    INT | QUOTA,
    "PRECONDITION_FAILED (406): message size 8192 is larger than max size 4096",
    _amqp(_publish_too_big),
)
FAM.add(
    "exchange_type_clash",
    EXISTS | INT,
    "the built-in amq.direct redeclared as fanout (ACCESS_REFUSED / PRECONDITION_FAILED)",
    _amqp(_exchange_type_clash),
)
FAM.add(
    "unknown_exchange_type",
    INT,
    "COMMAND_INVALID (503): unknown exchange type 'round-robin' (the pack's argument)",
    _amqp(_unknown_exchange_type),
)
FAM.add("refused", NET, "nothing listens", _amqp(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _amqp(host=UNRESOLVABLE, port=lambda c: 5672))
FAM.add(
    "silent",
    TO,
    "no Connection.Start ever comes (aioamqp has no timeout): the pack's 2.5 s deadline",
    _amqp(port=lambda c: c.net.silent),
)
FAM.add("dropped", NET, "closed at once", _amqp(port=lambda c: c.net.close_now))
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are no AMQP frame",
    _amqp(port=lambda c: c.net.garbage),
)
