"""RabbitMQ's ``rabbitmqadmin`` CLI (Debian's ``rabbitmq-server``: the management HTTP API's
command-line client) run as a pack runs it, options on argv, against a real RabbitMQ 3.10
(Debian's ``rabbitmq-server``) started by the family with the management plugin on a port of
its own: an administrator, a user with no management tag, a management user that may only
read, a vhost nobody may use, a queue declared with a length limit. Nothing is faked but the
transport failures. The failure is the exit status and ``*** ...`` with the API's error
text on stderr."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
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
from corpus_live.servers import rabbitmq_management


@dataclass
class Rabbit:
    http: int  # the management API (users admin, app, watcher; password NAME-pw)


def _start(stack: contextlib.ExitStack, work: Path) -> Rabbit:
    require("rabbitmqadmin")
    return Rabbit(rabbitmq_management(stack, work, {"x-max-length": 10}))


Ctx = Served[Rabbit]

FAM = family(
    "rabbitmqadmin",
    "the rabbitmqadmin CLI against RabbitMQ's management API (Debian), real",
    served(_start),
    half="heldout18",
)


def _admin(
    *args: str,
    user: str = "app",
    password: str | None = None,
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    vhost: str = "/",
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.http if port is None else port(c)
        cli(
            [
                "rabbitmqadmin",
                f"--host={host}",
                f"--port={p}",
                f"--vhost={vhost}",
                f"--username={user}",
                f"--password={password if password is not None else user + '-pw'}",
                "--request-timeout=2",
                *args,
            ],
            timeout=10.0,
        )

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "HTTP 401 from the management API: login failed",
    _admin("list", "queues", user="admin", password="not-it"),
)
FAM.add(
    "unknown_user",
    AUTH,
    "HTTP 401: no such user",
    _admin("list", "queues", user="ghost"),
)
FAM.add(
    "no_management_tag",
    AUTH,
    "app has full AMQP permissions but no management tag: the API refuses it (401)",
    _admin("list", "queues", user="app"),
)
FAM.add(
    "read_only_user_declares",
    AUTH,
    "watcher may not configure on /: declaring a queue is refused (401 access_refused)",
    _admin("declare", "queue", "name=reports", "durable=true", user="watcher"),
)
FAM.add(
    "vhost_not_permitted",
    AUTH,
    "the administrator has no permissions on vhost 'locked': declaring there is refused",
    _admin("declare", "queue", "name=reports", user="admin", vhost="locked"),
)
FAM.add(
    "vhost_missing",
    NF,
    "the vhost does not exist: 404 Object Not Found",
    _admin("list", "queues", user="admin", vhost="staging"),
)
FAM.add(
    "queue_missing_delete",
    NF,
    "deleting a queue that does not exist: 404 Object Not Found",
    _admin("delete", "queue", "name=invoices", user="admin"),
)
FAM.add(
    "queue_missing_get",
    NF,
    "getting messages from a queue that does not exist: 404",
    _admin("get", "queue=invoices", "ackmode=ack_requeue_false", user="admin"),
)
FAM.add(
    "queue_inequivalent_args",
    EXISTS | INT,
    "'jobs' exists with x-max-length 10: re-declaring it with other arguments fails "
    "(PRECONDITION_FAILED, inequivalent arg)",
    _admin(
        "declare",
        "queue",
        "name=jobs",
        "durable=true",
        'arguments={"x-max-length": 99}',
        user="admin",
    ),
)
FAM.add(
    "missing_mandatory_argument",
    INT,
    "the pack declares a queue without its name: rabbitmqadmin's own check",
    _admin("declare", "queue", "durable=true", user="admin"),
)
FAM.add(
    "bad_json_argument",
    INT,
    "the pack passes arguments= that are not JSON",
    _admin("declare", "queue", "name=reports", "arguments={x-max-length: 9", user="admin"),
)
FAM.add(
    "unknown_command",
    INT,
    "the pack asks to purge an object type rabbitmqadmin does not know",
    _admin("purge", "everything", user="admin"),
)
FAM.add(
    "refused",
    NET,
    "nothing listens",
    _admin("list", "queues", user="admin", port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "host does not resolve (.invalid)",
    _admin("list", "queues", user="admin", host=UNRESOLVABLE, port=lambda c: 15672),
)
FAM.add(
    "silent",
    TO,
    "the API never answers (--request-timeout=2)",
    _admin("list", "queues", user="admin", port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "the peer closes the connection at once",
    _admin("list", "queues", user="admin", port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    _admin("list", "queues", user="admin", port=lambda c: c.net.garbage),
)
