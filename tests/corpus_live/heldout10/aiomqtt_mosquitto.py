"""aiomqtt (the asyncio MQTT client, ``aiomqtt.Client``) against a real Mosquitto 2 broker
(Debian's ``mosquitto``): a listener with a password file and an ACL (``app`` reads and writes
``app/#``, ``reader`` only reads it), and an anonymous listener capped at 2000-byte packets.
MQTT 5 and 3.1.1 sessions. The failures are aiomqtt's own ``MqttError`` /
``MqttCodeError`` carrying the broker's reason codes, or the errors its transport meets.
Nothing is faked."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
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
)
from corpus_live.core import net as make_net
from corpus_live.servers import Mosquitto, mosquitto

Ctx = Served[Mosquitto]


def _setup(stack: contextlib.ExitStack, work: Path) -> Ctx:
    import aiomqtt  # noqa: F401 - skip cleanly when missing

    return Served(mosquitto(stack, work), make_net(stack))


FAM = family(
    "aiomqtt",
    "aiomqtt against Mosquitto 2 (Debian), real",
    _setup,
    half="heldout10",
)

V5 = 5
V311 = 4


def _client(
    port: int,
    *,
    host: str = LOOPBACK,
    username: str | None = "app",
    password: str | None = "app-pw",
    version: int = V5,
    timeout: float = 1.0,
    tls: bool = False,
    **kw: Any,
) -> Any:
    import ssl

    import aiomqtt

    return aiomqtt.Client(
        host,
        port,
        username=username,
        password=password,
        protocol=aiomqtt.ProtocolVersion(version),
        timeout=timeout,
        tls_context=ssl.create_default_context() if tls else None,
        **kw,
    )


def _session(
    body: Callable[[Any], Awaitable[Any]] | None = None,
    *,
    port: Callable[[Ctx], int] = lambda c: c.server.port,
    **kw: Any,
) -> Callable[[Ctx], Any]:
    async def go(c: Ctx) -> None:
        async with _client(port(c), **kw) as client:
            if body is not None:
                await body(client)

    return lambda c: run_async(go(c))


async def _wildcard_publish(client: Any) -> None:
    await client.publish("app/#", b"x", qos=1)


async def _bad_qos(client: Any) -> None:
    await client.subscribe("app/x", qos=3)


async def _taken_over(c: Ctx) -> None:
    async with _client(c.server.port, identifier="worker-1") as first:
        await first.subscribe("app/jobs", qos=1)
        async with _client(c.server.port, identifier="worker-1"):
            async for _message in first.messages:
                break


def _not_connected(c: Ctx) -> Any:
    async def go() -> None:
        client = _client(c.server.port)
        await client.publish("app/x", b"x", qos=1)

    return run_async(go())


FAM.add("wrong_password", AUTH, "CONNACK: bad user name or password", _session(password="nope"))
FAM.add(
    "unknown_user",
    AUTH,
    "CONNACK: a user the password file does not have",
    _session(username="ghost", password="x"),
)
FAM.add(
    "anonymous_refused",
    AUTH,
    "CONNACK: no credentials on a listener that forbids anonymous clients",
    _session(username=None, password=None),
)
FAM.add(
    "wrong_password_v311",
    AUTH,
    "MQTT 3.1.1 CONNACK: not authorised",
    _session(password="nope", version=V311),
)
FAM.add(
    "session_taken_over",
    NET,
    "another client connects with the same client id: the broker disconnects this one",
    lambda c: run_async(_taken_over(c)),
)
FAM.add(
    "tls_to_plain",
    NET | INT,
    "the pack's misconfiguration: TLS to the broker's plain listener",
    _session(tls=True),
)
FAM.add(
    "websockets_to_tcp",
    NET | INT,
    "the pack's misconfiguration: the websockets transport to the broker's TCP listener",
    _session(transport="websockets"),
)
FAM.add(
    "no_client_id",
    INT,
    "the caller's own bug: MQTT 3.1.1, no client id and a persistent session",
    _session(version=V311, identifier="", clean_session=False),
)
FAM.add(
    "wildcard_publish",
    INT,
    "the caller's own bug: publishing to a topic with a wildcard",
    _session(_wildcard_publish),
)
FAM.add(
    "bad_qos",
    INT,
    "the caller's own bug: subscribing with QoS 3",
    _session(_bad_qos),
)
FAM.add(
    "not_connected",
    INT,
    "the pack's own bug: publishing outside the client's context manager",
    _not_connected,
)
FAM.add("refused", NET, "nothing listens", _session(port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _session(host=UNRESOLVABLE, port=lambda c: 1883),
)
FAM.add(
    "silent",
    TO,
    "the broker accepts and never sends CONNACK: the client's 1 s timeout",
    _session(port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET | TO,
    "closed at once: aiomqtt waits for a CONNACK that never comes",
    _session(port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET | TO,
    "the peer answers bytes of no protocol: aiomqtt waits for a CONNACK",
    _session(port=lambda c: c.net.garbage),
)
