"""pyrabbit2 (a client of RabbitMQ's management HTTP API) against a real RabbitMQ (Debian's
``rabbitmq-server``) started by the family with the management plugin on a port of its own:
an administrator, a user with no management tag, a ``management`` user with read-only
rights on ``/`` and none on the vhost ``locked``, a durable queue ``jobs``. pyrabbit2 raises
``HTTPError`` (status, the API's ``reason`` as ``detail``) for any status outside 200-206 and
``NetworkError`` for every transport failure (requests' message in its text)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

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
    family,
    served,
)
from corpus_live.servers import rabbitmq_management


def _start(stack: contextlib.ExitStack, work: Path) -> int:
    return rabbitmq_management(stack, work)


FAM = family(
    "pyrabbit2",
    "pyrabbit2 against RabbitMQ's management API (Debian), real",
    served(_start),
    half="heldout19",
)

Ctx = Served[int]


def _client(port: int, user: str = "admin", host: str = LOOPBACK) -> Any:
    from pyrabbit2.api import Client  # type: ignore[import-untyped]

    return Client(f"{host}:{port}", user, f"{user}-pw", timeout=1)


@FAM.case("wrong_password", AUTH, "401: the password is wrong")
def _wrong_password(c: Ctx) -> Any:
    from pyrabbit2.api import Client

    return Client(f"{LOOPBACK}:{c.server}", "admin", "not-the-password", timeout=1).get_overview()


@FAM.case("no_management_tag", AUTH, "401: the user has no management tag (AMQP only)")
def _no_tag(c: Ctx) -> Any:
    return _client(c.server, "app").get_overview()


@FAM.case("not_administrator", AUTH, "the management user may not list users (administrator only)")
def _not_admin(c: Ctx) -> Any:
    return _client(c.server, "watcher").get_users()


@FAM.case(
    "vhost_not_permitted",
    AUTH,
    "the management user has no permissions on the vhost it reads",
)
def _vhost_denied(c: Ctx) -> Any:
    return _client(c.server, "watcher").get_queue("locked", "jobs")


@FAM.case("write_not_permitted", AUTH, "the read-only user declares a queue: access refused")
def _write_denied(c: Ctx) -> Any:
    return _client(c.server, "watcher").create_queue("/", "reports", durable=True)


@FAM.case("queue_not_found", NF, "404: no such queue")
def _queue_missing(c: Ctx) -> Any:
    return _client(c.server).get_queue("/", "invoices")


@FAM.case("vhost_not_found", NF, "404: no such vhost")
def _vhost_missing(c: Ctx) -> Any:
    return _client(c.server).get_vhost("staging")


@FAM.case("delete_missing_queue", NF, "404: deleting a queue that does not exist")
def _delete_missing(c: Ctx) -> Any:
    return _client(c.server).delete_queue("/", "invoices")


@FAM.case(
    "exchange_not_found",
    NF,
    "publish to an exchange that does not exist: 400 carrying the AMQP 404 NOT_FOUND",
)
def _exchange_missing(c: Ctx) -> Any:
    return _client(c.server).publish("/", "events", "k", "hello")


@FAM.case(
    "queue_exists_differently",
    EXISTS | INT,
    "the queue exists as durable; the pack declares it transient: inequivalent arg 'durable'",
)
def _inequivalent(c: Ctx) -> Any:
    return _client(c.server).create_queue("/", "jobs", durable=False)


@FAM.case("bad_policy", INT, "the pack's policy definition does not validate")
def _bad_policy(c: Ctx) -> Any:
    return _client(c.server).create_policy(
        "/", "ttl", pattern="^jobs$", definition={"message-ttl": "one hour"}
    )


@FAM.case("refused", NET, "nothing listens")
def _refused(c: Ctx) -> Any:
    return _client(c.net.closed).get_overview()


@FAM.case("dns", NET, "host does not resolve")
def _dns(c: Ctx) -> Any:
    return _client(15672, host=UNRESOLVABLE).get_overview()


@FAM.case("silent", TO, "server never answers: requests' read timeout (1 s)")
def _silent(c: Ctx) -> Any:
    return _client(c.net.silent).get_overview()


@FAM.case("dropped", NET, "closed at once")
def _dropped(c: Ctx) -> Any:
    return _client(c.net.close_now).get_overview()


@FAM.case("garbage", NET, "the peer answers bytes of no protocol instead of HTTP")
def _garbage(c: Ctx) -> Any:
    return _client(c.net.garbage).get_overview()
