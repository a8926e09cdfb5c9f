"""amqtt's MQTT 3.1.1 client (``amqtt.client.MQTTClient``, asyncio) against a real Mosquitto 2
(Debian's ``mosquitto``) started by the setup: a listener with a password file and ACLs, an
anonymous one. Nothing is faked but the transport failures. The client runs with
``auto_reconnect`` off (the pack fails fast) and ``connection_timeout=1`` for the TCP connect;
it has no deadline of its own on the CONNACK, so a silent broker meets the pack's own
``asyncio.wait_for``. amqtt raises ``ConnectError`` (a refused CONNACK carries only
``return_code``), ``ClientError``, ``MQTTError``, ``AMQTTError`` and asyncio's ``TimeoutError``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
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
    "amqtt",
    "Mosquitto 2 (Debian), real",
    served(mosquitto),
    half="heldout17",
)

logging.getLogger("amqtt").setLevel(logging.CRITICAL)  # it logs every refused connection


def _mqtt(
    uri: Callable[[Ctx], str],
    op: Callable[[Any], Awaitable[Any]] | None = None,
    *,
    client_id: str | None = None,
    clean: bool | None = None,
    deadline: float = 3.0,
) -> Callable[[Ctx], None]:
    async def go(c: Ctx) -> None:
        from amqtt.client import MQTTClient  # type: ignore[import-untyped]

        client = MQTTClient(
            client_id=client_id, config={"auto_reconnect": False, "connection_timeout": 1}
        )
        try:
            await asyncio.wait_for(client.connect(uri(c), cleansession=clean), deadline)
            if op is not None:
                await op(client)
        finally:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(client.disconnect(), 1)

    return lambda c: run_async(go(c))


def _auth(user: str = "app", password: str = "app-pw") -> Callable[[Ctx], str]:
    return lambda c: f"mqtt://{user}:{password}@{LOOPBACK}:{c.server.port}"


FAM.add(
    "wrong_password",
    AUTH,
    "CONNACK refused, return code 5 (not authorized): wrong password",
    _mqtt(_auth(password="not-it")),
)
FAM.add(
    "unknown_user",
    AUTH,
    "CONNACK refused, return code 5: a user the password file does not have",
    _mqtt(_auth(user="ghost", password="x")),
)
FAM.add(
    "no_credentials",
    AUTH,
    "CONNACK refused, return code 5: no username on a listener that forbids anonymous clients",
    _mqtt(lambda c: f"mqtt://{LOOPBACK}:{c.server.port}"),
)
FAM.add(
    "identifier_rejected",
    INT,
    "CONNACK refused, return code 2: an empty client id with a persistent session",
    _mqtt(_auth(), client_id="", clean=False),
)


async def _wait_message(client: Any) -> None:
    await client.subscribe([("app/jobs/#", 1)])
    await client.deliver_message(timeout_duration=0.5)


FAM.add(
    "no_message_in_time",
    TO,
    "deliver_message(timeout_duration=0.5): nothing was published on the subscribed topic",
    _mqtt(_auth(), _wait_message),
)


async def _publish_wildcard(client: Any) -> None:
    await client.publish("app/jobs/#", b"run", qos=1)


FAM.add(
    "wildcard_in_publish_topic",
    INT,
    "the pack publishes to a topic with a wildcard: MQTTError [MQTT-3.3.2-2]",
    _mqtt(_auth(), _publish_wildcard),
)


async def _publish_qos3(client: Any) -> None:
    await client.publish("app/jobs/1", b"run", qos=3)


FAM.add(
    "bad_qos",
    INT,
    "the pack asks for QoS 3: ClientError, not one of QOS_0, QOS_1, QOS_2",
    _mqtt(_auth(), _publish_qos3),
)
FAM.add(
    "bad_scheme",
    INT,
    "the pack passes an http:// URI: ClientError, incorrect scheme",
    _mqtt(lambda c: f"http://{LOOPBACK}:{c.server.port}"),
)
FAM.add(
    "refused",
    NET,
    "nothing listens",
    _mqtt(lambda c: f"mqtt://{LOOPBACK}:{c.net.closed}"),
)
FAM.add(
    "dns", NET, "host does not resolve (.invalid)", _mqtt(lambda c: f"mqtt://{UNRESOLVABLE}:1883")
)
FAM.add(
    "silent",
    TO,
    "the broker never sends CONNACK: the pack's wait_for cancels connect (ConnectError)",
    _mqtt(lambda c: f"mqtt://{LOOPBACK}:{c.net.silent}", deadline=1.5),
)
FAM.add(
    "dropped",
    NET,
    "the peer closes the connection before CONNACK",
    _mqtt(lambda c: f"mqtt://{LOOPBACK}:{c.net.close_now}"),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not MQTT: invalid fixed packet type for CONNACK",
    _mqtt(lambda c: f"mqtt://{LOOPBACK}:{c.net.garbage}"),
)
