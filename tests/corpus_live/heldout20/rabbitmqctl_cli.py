"""RabbitMQ's ``rabbitmqctl`` CLI (Debian's rabbitmq-server, ``/usr/lib/rabbitmq/bin``) run as
a pack runs it, a command on argv with ``-n NODE`` and ``--timeout``, against a real RabbitMQ
node (``heldout2._daemons.rabbitmq``: users app and reader, vhosts ``/`` and ``locked``, a
queue ``jobs``) started by the setup, the Erlang cookie in the node's ``HOME``. Missing and
existing users, missing vhosts and queues, a failed password check, a cookie the node
rejects, and a node that is not running. (A node on a ``.invalid`` host is left out: the CLI
spends 50 s resolving it.) Nothing is faked. The failure is the exit status and the
``Error: ...`` text the tool writes."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from corpus_live.core import AUTH, EXISTS, INT, NET, NF, family
from corpus_live.heldout2._daemons import rabbitmq

#: the CLI itself: Debian's /usr/sbin/rabbitmqctl switches to the rabbitmq user and its HOME
CTL = "/usr/lib/rabbitmq/bin/rabbitmqctl"


@dataclass
class Node:
    node: str
    home: Path  # its .erlang.cookie
    stranger: Path  # a HOME whose cookie the node does not share


def _setup(stack: contextlib.ExitStack, work: Path) -> Node:
    if not Path(CTL).exists():
        raise RuntimeError("rabbitmqctl is not installed (rabbitmq-server, CP_APT_DEV)")
    rabbit = rabbitmq(stack, work)
    stranger = work / "stranger"
    stranger.mkdir()
    cookie = stranger / ".erlang.cookie"
    cookie.write_text("NOTTHENODESCOOKIE")
    cookie.chmod(0o400)
    return Node(f"corpus44-{rabbit.port}@localhost", work / "home", stranger)


FAM = family(
    "rabbitmqctl",
    "the rabbitmqctl CLI against RabbitMQ (Debian), real",
    _setup,
    half="heldout20",
)


def _ctl(
    *args: str,
    node: Callable[[Node], str] | None = None,
    home: Callable[[Node], Path] | None = None,
    timeout: int = 10,
) -> Callable[[Node], None]:
    def run(c: Node) -> None:
        env_home = str(home(c) if home is not None else c.home)
        argv = [
            CTL,
            "-n",
            node(c) if node is not None else c.node,
            "--timeout",
            str(timeout),
            *args,
        ]
        subprocess.run(
            argv,
            capture_output=True,
            check=True,
            timeout=60,
            env=dict(os.environ, HOME=env_home),
        )

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "authenticate_user with a wrong password: failed to authenticate user",
    _ctl("authenticate_user", "app", "not-the-password"),
)
FAM.add(
    "add_existing_user",
    EXISTS,
    "add_user of a user that already exists",
    _ctl("add_user", "app", "whatever-pw"),
)
FAM.add(
    "delete_missing_user",
    NF,
    "delete_user of a user that does not exist",
    _ctl("delete_user", "ghost"),
)
FAM.add(
    "change_password_missing_user",
    NF,
    "change_password of a user that does not exist",
    _ctl("change_password", "ghost", "new-pw"),
)
FAM.add(
    "tags_missing_user",
    NF,
    "set_user_tags on a user that does not exist",
    _ctl("set_user_tags", "ghost", "administrator"),
)
FAM.add(
    "delete_missing_queue",
    NF,
    "delete_queue of a queue that does not exist in vhost /",
    _ctl("delete_queue", "no-such-queue"),
)
FAM.add(
    "clear_permissions_missing_vhost",
    NF,
    "clear_permissions in a virtual host that does not exist",
    _ctl("clear_permissions", "-p", "ghost", "app"),
)
FAM.add(
    "delete_missing_vhost",
    NF,
    "delete_vhost of a virtual host that does not exist",
    _ctl("delete_vhost", "ghost"),
)
FAM.add(
    "permissions_missing_vhost",
    NF,
    "set_permissions on a virtual host that does not exist",
    _ctl("set_permissions", "-p", "ghost", "app", ".*", ".*", ".*"),
)
FAM.add(
    "purge_missing_queue",
    NF,
    "purge_queue of a queue that does not exist in vhost /",
    _ctl("purge_queue", "no-such-queue"),
)
FAM.add(
    "unknown_command", INT, "the pack runs a command rabbitmqctl does not have", _ctl("frobnicate")
)
FAM.add(
    "cookie_rejected",
    AUTH,
    "the pack's HOME holds an Erlang cookie the node does not share: authentication failed",
    _ctl("status", home=lambda c: c.stranger),
)
FAM.add(
    "node_down",
    NET,
    "no node of that name runs on this host: nodedown",
    _ctl("status", node=lambda c: "corpus44-absent@localhost"),
)
