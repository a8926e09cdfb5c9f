"""The ``mosquitto_sub`` CLI (Debian's ``mosquitto-clients`` 2) run as a pack runs it (a topic on
argv, ``-C 1`` to take one message, ``-W`` to give up waiting, a subprocess deadline) against a
real Mosquitto 2 broker (Debian's ``mosquitto``: a listener with a password file and an ACL, an
anonymous one with a small maximum packet size). The failure is the exit status and the lines
mosquitto_sub writes on stderr. Nothing is faked."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    require,
    served,
)
from corpus_live.core import cli as run_cli
from corpus_live.servers import Mosquitto, mosquitto

Ctx = Served[Mosquitto]


def _start(stack: contextlib.ExitStack, work: Path) -> Mosquitto:
    require("mosquitto_sub")
    return mosquitto(stack, work)


FAM = family(
    "mosquitto_sub",
    "the mosquitto_sub CLI against Mosquitto 2 (Debian), real",
    served(_start),
    half="heldout11",
)


def _sub(
    *args: str,
    user: tuple[str, str] | None = ("app", "app-pw"),
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    wait: str = "1",
    deadline: float = 5.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        who = ["-u", user[0], "-P", user[1]] if user else []
        argv = ["mosquitto_sub", "-h", host, "-p", str(p), "-C", "1", "-W", wait, *who, *args]
        run_cli(argv, timeout=deadline)

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "CONNACK not authorised: the password is wrong",
    _sub("-t", "app/events", user=("app", "not-it")),
)
FAM.add(
    "unknown_user",
    AUTH,
    "CONNACK not authorised: no such user in the password file",
    _sub("-t", "app/events", user=("mallory", "app-pw")),
)
FAM.add(
    "anonymous_refused",
    AUTH,
    "CONNACK not authorised: no credentials on a listener that wants them",
    _sub("-t", "app/events", user=None),
)
FAM.add(
    "v5_bad_credentials",
    AUTH,
    "MQTT 5 CONNACK reason 'Bad user name or password'",
    _sub("-V", "mqttv5", "-t", "app/events", user=("app", "not-it")),
)
FAM.add(
    "bad_will_topic",
    INT,
    "the pack's last-will topic holds a wildcard: refused before connecting",
    _sub("-t", "app/events", "--will-topic", "app/#", "--will-payload", "gone"),
)
FAM.add(
    "no_message",
    TO,
    "nothing is published on the topic before the -W wait runs out",
    _sub("-t", "app/quiet"),
)
FAM.add(
    "bad_topic_filter",
    INT,
    "the pack's topic filter puts '#' in the middle: refused before connecting",
    _sub("-t", "app/#/events"),
)
FAM.add(
    "bad_protocol_version",
    INT,
    "the pack asks for an MQTT protocol version that does not exist",
    _sub("-V", "mqttv4", "-t", "app/events"),
)
FAM.add(
    "tls_to_plain",
    NET,
    "TLS handshake against a listener that speaks plain MQTT",
    _sub("--cafile", "/etc/ssl/certs/ca-certificates.crt", "-t", "app/events"),
)
FAM.add(
    "refused",
    NET,
    "nothing listens",
    _sub("-t", "app/events", port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _sub("-t", "app/events", host=UNRESOLVABLE, port=lambda c: 1883),
)
FAM.add(
    "silent",
    TO,
    "the listener never sends CONNACK: the pack's own deadline expires",
    _sub("-t", "app/events", port=lambda c: c.net.silent, wait="30", deadline=2.0),
)
FAM.add(
    "dropped",
    NET,
    "the broker end closes the connection at once",
    _sub("-t", "app/events", port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not MQTT",
    _sub("-t", "app/events", port=lambda c: c.net.garbage),
)
