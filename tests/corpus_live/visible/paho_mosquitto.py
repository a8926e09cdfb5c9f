"""paho-mqtt against a real Mosquitto broker (Debian's mosquitto) on loopback."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, LOOPBACK, Served, family, served, transport_cases
from corpus_live.servers import Mosquitto, mosquitto

Ctx = Served[Mosquitto]


FAM = family(
    "paho-mqtt", "Mosquitto 2.0 (Debian mosquitto), real", served(mosquitto), half="visible"
)


def _publish(
    port: int,
    *,
    user: str | None = "app",
    password: str | None = "app-pw",
    host: str = LOOPBACK,
    topic: str = "app/x",
    payload: bytes = b"hi",
    v5: bool = False,
) -> None:
    """What a pack does: connect, publish QoS 1, wait; a refused CONNACK or PUBACK is
    raised with paho's own words for the reason code (``connack_string`` of MQTT 3.1.1's
    return code, ``ReasonCode`` of MQTT 5's). MQTT 3.1.1 uses paho's 3.1.1 callbacks
    (``VERSION1``: the CONNACK return code as an int, 5 for "not authorised"), so
    ``connack_string`` gets the number it documents."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    api = CallbackAPIVersion.VERSION2 if v5 else CallbackAPIVersion.VERSION1
    client = mqtt.Client(api, protocol=mqtt.MQTTv5 if v5 else mqtt.MQTTv311)
    seen: dict[str, Any] = {}
    if v5:
        client.on_connect = lambda c, u, flags, rc, props: seen.setdefault("connack", rc)
        client.on_publish = lambda c, u, mid, rc, props: seen.setdefault("puback", rc)
    else:
        client.on_connect = lambda c, u, flags, rc: seen.setdefault("connack", rc)
        client.on_publish = lambda c, u, mid: seen.setdefault("puback", None)
    if user is not None:
        client.username_pw_set(user, password)
    client.connect(host, port, keepalive=5)
    try:
        for _ in range(40):
            lrc = client.loop(timeout=0.05)
            if "connack" in seen:
                break
            if lrc != mqtt.MQTT_ERR_SUCCESS:
                raise ConnectionError(f"MQTT connection lost: {mqtt.error_string(lrc)}")
        rc = seen.get("connack")
        if rc is None:
            raise TimeoutError("MQTT CONNACK not received")
        if rc.is_failure if v5 else rc != mqtt.CONNACK_ACCEPTED:
            raise ConnectionRefusedError(mqtt.connack_string(rc))
        client.publish(topic, payload, qos=1)
        for _ in range(40):
            client.loop(timeout=0.05)
            if "puback" in seen:
                break
        if "puback" not in seen:
            raise TimeoutError("MQTT PUBACK not received")
        ack = seen["puback"]
        if ack is not None and ack.is_failure:
            raise PermissionError(f"MQTT publish refused: {ack}")
    finally:
        client.disconnect()


transport_cases(
    FAM,
    lambda host, port: _publish(port, host=host),
    dns_port=1883,
    silent="broker never answers CONNECT",
)
FAM.add(
    "bad_password",
    AUTH,
    "CONNACK 5 not authorised (bad password)",
    lambda c: _publish(c.server.port, password="nope"),
)
FAM.add(
    "no_credentials",
    AUTH,
    "CONNACK 5 not authorised (anonymous refused)",
    lambda c: _publish(c.server.port, user=None),
)
FAM.add(
    "bad_password_v5",
    AUTH,
    "MQTT 5 reason 134 bad user name or password",
    lambda c: _publish(c.server.port, password="nope", v5=True),
)
FAM.add(
    "anon_v5",
    AUTH,
    "MQTT 5 reason 135 not authorized",
    lambda c: _publish(c.server.port, user=None, v5=True),
)
FAM.add(
    "acl_denied_v5",
    AUTH,
    "MQTT 5 PUBACK 135 not authorized (ACL)",
    lambda c: _publish(c.server.port, user="reader", password="reader-pw", v5=True),
)
# FAM.add("too_large_v5", INT, "packet over max_packet_size: the broker disconnects", lambda c: _publish(c.server.anon_port, user=None, payload=b"x" * 5000, v5=True))
