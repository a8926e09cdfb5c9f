"""gmqtt (an asyncio MQTT 5.0 / 3.1.1 client) against a real Mosquitto broker (Debian's
``mosquitto``: a password-file listener with ACLs, an anonymous listener with a 2000-byte
``max_packet_size``). Nothing is faked but the transport failures. gmqtt raises
``MQTTConnectError`` with the CONNACK reason code the broker refused the connection with;
its own argument checks raise ``ValueError``/``TypeError``; it has no connect timeout, so a
silent peer meets the pack's own ``asyncio.wait_for`` deadline."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    run_async,
    served,
)
from corpus_live.servers import Mosquitto, mosquitto

Ctx = Served[Mosquitto]

FAM = family(
    "gmqtt",
    "gmqtt against Mosquitto (Debian), real",
    served(mosquitto),
    half="heldout12",
)


def _connect(
    *,
    user: str | None = "app",
    password: str | None = "app-pw",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    version: int = 5,
    client_id: str = "corpus-gmqtt",
    deadline: float = 2.0,
    **client_kw: Any,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        from gmqtt import Client  # type: ignore[import-untyped]
        from gmqtt.mqtt.constants import MQTTv50, MQTTv311  # type: ignore[import-untyped]

        async def go() -> None:
            client = Client(client_id, **client_kw)
            if user is not None:
                client.set_auth_credentials(user, password)
            p = c.server.port if port is None else port(c)
            try:
                await asyncio.wait_for(
                    client.connect(
                        host, p, version=MQTTv50 if version == 5 else MQTTv311, keepalive=10
                    ),
                    deadline,
                )
            finally:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.disconnect(), 1)

        run_async(go())

    return run


def _subscribe_bad(c: Ctx) -> None:
    from gmqtt import Client

    Client("corpus-gmqtt").subscribe(42)


def _will_too_big(c: Ctx) -> None:
    from gmqtt import Message

    will = Message("app/will", b"x" * 4000, will_delay_interval=0)
    _connect(user=None, port=lambda c: c.server.anon_port, will_message=will)(c)


FAM.add(
    "bad_password_v5",
    AUTH,
    "CONNACK 135: Not authorized (a wrong password, MQTT 5)",
    _connect(password="not-the-pw"),
)
FAM.add(
    "unknown_user_v5",
    AUTH,
    "CONNACK 135: Not authorized (a user the password file does not have, MQTT 5)",
    _connect(user="mallory", password="x"),
)
FAM.add(
    "no_credentials_v5",
    AUTH,
    "CONNACK refused: no user name on a listener that forbids anonymous clients (MQTT 5)",
    _connect(user=None),
)
FAM.add(
    "bad_password_v311",
    AUTH,
    "CONNACK 5: not authorised (a wrong password, MQTT 3.1.1)",
    _connect(password="not-the-pw", version=3),
)
FAM.add(
    "unknown_user_v311",
    AUTH,
    "CONNACK 5: not authorised (a user the password file does not have, MQTT 3.1.1)",
    _connect(user="mallory", password="x", version=3),
)
FAM.add(
    "will_too_big",
    TO | INT,
    "the broker drops the CONNECT (a 4000-byte will over max_packet_size 2000), gmqtt "
    "reconnects until the pack's 2 s deadline",
    _will_too_big,
)
FAM.add(
    "bad_session_expiry",
    INT,
    "session_expiry_interval must be an int (the pack's own argument)",
    _connect(session_expiry_interval="1h"),
)
FAM.add(
    "bad_subscription",
    INT,
    "Bad subscription: must be string or Subscription (the pack's own argument)",
    _subscribe_bad,
)
FAM.add("refused", NET, "nothing listens", _connect(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _connect(host=UNRESOLVABLE, port=lambda c: 1883))
FAM.add(
    "silent",
    TO,
    "no CONNACK ever comes (gmqtt has no timeout): the pack's 2 s deadline",
    _connect(port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET | TO,
    "closed at once, again on each of gmqtt's reconnects, until the pack's 2 s deadline",
    _connect(port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET | TO,
    "the peer answers bytes that are no CONNACK; gmqtt reconnects until the pack's 2 s deadline",
    _connect(port=lambda c: c.net.garbage),
)
