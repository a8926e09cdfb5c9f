"""The ``amqp-tools`` CLIs (Debian's ``amqp-tools``, on librabbitmq-c: ``amqp-publish``,
``amqp-get``, ``amqp-declare-queue``, ``amqp-delete-queue``) run as a pack runs them, against
a real RabbitMQ (Debian's ``rabbitmq-server``: users ``app`` and read-only ``reader``, a vhost
nobody may use, a 4 KiB message size limit). The failure is the exit status and the tool's
stderr line quoting the broker's AMQP reply; the tools have no timeout of their own, so a
server that never answers meets the pack's subprocess deadline. Nothing is faked."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Served,
    cli,
    family,
    require,
    served,
)
from corpus_live.heldout2._daemons import Rabbit, rabbitmq

Ctx = Served[Rabbit]


def _start(stack: contextlib.ExitStack, work: Path) -> Rabbit:
    require("amqp-publish", "amqp-get", "amqp-declare-queue", "amqp-delete-queue")
    return rabbitmq(stack, work)


FAM = family(
    "amqp-tools",
    "the amqp-tools CLIs (librabbitmq) against RabbitMQ (Debian), real",
    served(_start),
    half="heldout8",
)


def _tool(
    tool: str,
    *args: str,
    user: str = "app",
    password: str = "app-pw",
    vhost: str = "/",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    before: Callable[[Ctx], None] | None = None,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        if before is not None:
            before(c)
        p = c.server.port if port is None else port(c)
        cli(
            [
                tool,
                f"--server={host}",
                f"--port={p}",
                f"--vhost={vhost}",
                f"--username={user}",
                f"--password={password}",
                *args,
            ],
            timeout=2,
        )

    return run


def _one_message(queue: str) -> Callable[[Ctx], None]:
    def put(c: Ctx) -> None:
        _tool("amqp-declare-queue", "-q", queue)(c)
        _tool("amqp-publish", "-r", queue, "-b", "waiting")(c)

    return put


FAM.add("wrong_password", AUTH, "login refused", _tool("amqp-get", "-q", "jobs", password="nope"))
FAM.add(
    "vhost_denied",
    AUTH,
    "app has no permission on the vhost",
    _tool("amqp-get", "-q", "jobs", vhost="locked"),
)
FAM.add(
    "reader_declares",
    AUTH,
    "reader may not configure a new queue",
    _tool("amqp-declare-queue", "-q", "fresh8a-new", user="reader", password="reader-pw"),
)
FAM.add(
    "reader_publishes",
    AUTH,
    "reader may not write to the exchange",
    _tool(
        "amqp-publish",
        "-e",
        "amq.direct",
        "-r",
        "jobs",
        "-b",
        "x",
        user="reader",
        password="reader-pw",
    ),
)
FAM.add(
    "missing_queue", NF, "get from a queue that does not exist", _tool("amqp-get", "-q", "orders")
)
FAM.add(
    "missing_exchange",
    NF,
    "publish to an exchange that does not exist",
    _tool("amqp-publish", "-e", "billing", "-r", "k", "-b", "x"),
)
FAM.add(
    "inequivalent_queue",
    EXISTS | INT,
    "the queue exists durable; declared again not durable",
    _tool("amqp-declare-queue", "-q", "jobs"),
)
FAM.add(
    "delete_not_empty",
    INT,
    "the pack deletes a queue with --if-empty while a message waits",
    _tool(
        "amqp-delete-queue",
        "-q",
        "fresh8a-waiting",
        "--if-empty",
        before=_one_message("fresh8a-waiting"),
    ),
)
FAM.add(
    "message_too_large",
    INT,
    "message larger than the broker's max_message_size (4 KiB)",
    _tool("amqp-publish", "-r", "jobs", "-b", "x" * 8192),
)
FAM.add("missing_argument", INT, "the pack's argv lacks the queue", _tool("amqp-get"))
FAM.add(
    "refused", NET, "nothing listens", _tool("amqp-get", "-q", "jobs", port=lambda c: c.net.closed)
)
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _tool("amqp-get", "-q", "jobs", host=UNRESOLVABLE, port=lambda c: 5672),
)
FAM.add(
    "silent",
    TO,
    "server never answers; the pack's 2 s subprocess deadline",
    _tool("amqp-get", "-q", "jobs", port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "closed at once",
    _tool("amqp-get", "-q", "jobs", port=lambda c: c.net.close_now),
)
