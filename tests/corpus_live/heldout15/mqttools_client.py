"""The ``mqttools`` asyncio MQTT v5 client (PyPI ``mqttools``) as a pack uses it, against a real
Mosquitto 2 broker (Debian's ``mosquitto``: a listener with a password file and ACLs, an
anonymous one with a small ``max_packet_size``) started by the setup. ``connect_delays=[]`` so
the client raises instead of retrying."""

from __future__ import annotations

from typing import Any

import mqttools  # type: ignore[import-untyped]

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
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
    "mqttools",
    "the mqttools MQTT v5 client against Mosquitto 2 (Debian), real",
    served(mosquitto),
    half="heldout15",
)


async def _session(
    host: str,
    port: int,
    user: str | None,
    password: str | None,
    subscribe: str | None,
    publish: bytes | None,
    resume: bool,
    will: str,
) -> None:
    client = mqttools.Client(
        host,
        port,
        client_id=f"pack-{port}",
        username=user,
        password=password.encode() if password is not None else None,
        connect_delays=[],
        response_timeout=1,
        will_topic=will,
        will_message=b"gone" if will else b"",
    )
    try:
        await client.start(resume_session=resume)
        if publish is not None:
            client.publish(mqttools.Message("app/bulk", publish))
        if subscribe is not None:
            await client.subscribe(subscribe)
    finally:
        await client.stop()


def _mq(
    *,
    user: str | None = "app",
    password: str | None = "app-pw",
    subscribe: str | None = "app/jobs/#",
    publish: bytes | None = None,
    resume: bool = False,
    will: str = "",
    host: str = LOOPBACK,
    port: Any = None,
) -> Any:
    def run(c: Ctx) -> None:
        p = port(c) if port is not None else c.server.port
        run_async(_session(host, p, user, password, subscribe, publish, resume, will))

    return run


FAM.add("wrong_password", AUTH, "CONNACK refuses the password", _mq(password="nope"))
FAM.add("unknown_user", AUTH, "CONNACK refuses a user it does not know", _mq(user="mallory"))
FAM.add(
    "no_credentials",
    AUTH,
    "the authenticated listener refuses an anonymous CONNECT",
    _mq(user=None, password=None),
)
FAM.add(
    "bad_filter",
    INT | TO,
    "a malformed topic filter: the broker drops the client, which waits out its SUBACK",
    _mq(subscribe="app/#/late"),
)
FAM.add(
    "no_session",
    NF | INT,
    "resume asked for but the broker holds no session for this client",
    _mq(resume=True),
)
FAM.add(
    "bad_will_topic",
    INT | TO,
    "a wildcard will topic: the broker drops the CONNECT, the client waits out its CONNACK",
    _mq(will="app/+/status"),
)
FAM.add(
    "packet_too_large",
    INT | NET | TO,
    "a publish beyond max_packet_size: the broker drops the client, the SUBACK never comes",
    _mq(
        user=None,
        password=None,
        publish=b"x" * 4000,
        port=lambda c: c.server.anon_port,
    ),
)
FAM.add("refused", NET, "nothing listens", _mq(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _mq(host=UNRESOLVABLE, port=lambda c: 1883))
FAM.add("silent", TO, "no CONNACK ever comes", _mq(port=lambda c: c.net.silent))
FAM.add(
    "dropped",
    NET | TO,
    "the peer closes at once; the client waits out its CONNACK",
    _mq(port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET | TO,
    "the peer answers non-MQTT bytes; no CONNACK",
    _mq(port=lambda c: c.net.garbage),
)
