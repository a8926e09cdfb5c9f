"""The ``mosquitto_rr`` CLI (Debian's mosquitto-clients 2, MQTT v5 request/response) run as a
pack runs it, a command on argv, against a real Mosquitto 2 broker (Debian's ``mosquitto``: a
listener with a password file and ACLs, an anonymous one with a small ``max_packet_size``)
started by the setup. The failure is the exit status and the lines the tool writes."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    QUOTA,
    TO,
    UNRESOLVABLE,
    Served,
    cli,
    family,
    require,
    served,
)
from corpus_live.servers import Mosquitto, mosquitto

Ctx = Served[Mosquitto]


def _start(stack: Any, work: Any) -> Mosquitto:
    require("mosquitto_rr")
    return mosquitto(stack, work)


FAM = family(
    "mosquitto_rr",
    "the mosquitto_rr CLI against Mosquitto 2 (Debian), real",
    served(_start),
    half="heldout15",
)


def _rr(
    *extra: str,
    user: str | None = "app",
    password: str | None = "app-pw",
    topic: str = "app/rpc/req",
    response: str = "app/rpc/resp",
    message: str = '{"op":"ping"}',
    host: str = LOOPBACK,
    port: Any = None,
    wait: str = "1",
    timeout: float = 10.0,
) -> Any:
    def run(c: Ctx) -> None:
        p = port(c) if port is not None else c.server.port
        argv = ["mosquitto_rr", "-h", host, "-p", str(p), "-t", topic, "-e", response]
        argv += ["-m", message, "-W", wait, "-i", f"pack-{p}"]
        if user is not None:
            argv += ["-u", user]
        if password is not None:
            argv += ["-P", password]
        cli(argv + list(extra), timeout=timeout)

    return run


FAM.add("wrong_password", AUTH, "CONNACK: not authorized (bad password)", _rr(password="nope"))
FAM.add(
    "unknown_user",
    AUTH,
    "CONNACK refused: a user the password file does not hold",
    _rr(user="mallory", password="x"),
)
FAM.add(
    "no_credentials",
    AUTH,
    "the authenticated listener refuses an anonymous client",
    _rr(user=None, password=None),
)
FAM.add(
    "no_responder",
    TO,
    "nobody answers the request: the tool's own wait (-W 1) runs out",
    _rr(),
)
FAM.add(
    "publish_denied",
    AUTH | TO,
    "the reader user may not publish the request (ACL); no answer comes",
    _rr("-q", "1", user="reader", password="reader-pw"),
)
FAM.add(
    "subscribe_denied",
    AUTH | TO,
    "the response topic is outside the user's ACL",
    _rr(response="other/resp"),
)
FAM.add(
    "wildcard_topic",
    INT,
    "the pack passes a wildcard as the request topic",
    _rr(topic="app/rpc/#"),
)
FAM.add(
    "packet_too_large",
    INT | QUOTA,
    "request bigger than the broker's max_packet_size",
    _rr("-q", "1", user=None, password=None, message="x" * 4000, port=lambda c: c.server.anon_port),
)
FAM.add("refused", NET, "nothing listens", _rr(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _rr(host=UNRESOLVABLE, port=lambda c: 1883))
FAM.add(
    "silent",
    TO,
    "broker never answers CONNECT: the tool gives up waiting",
    _rr(port=lambda c: c.net.silent, timeout=2),
)
FAM.add("dropped", NET, "the peer closes at once", _rr(port=lambda c: c.net.close_now))
FAM.add(
    "garbage", NET, "the peer answers bytes that are not MQTT", _rr(port=lambda c: c.net.garbage)
)
