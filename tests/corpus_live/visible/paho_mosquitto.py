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
    raised with paho's own words for the reason code (``connack_string`` / ``ReasonCode``)."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5 if v5 else mqtt.MQTTv311)
    seen: dict[str, Any] = {}
    client.on_connect = lambda c, u, flags, rc, props: seen.setdefault("connack", rc)
    client.on_publish = lambda c, u, mid, rc, props: seen.setdefault("puback", rc)
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
        if rc.is_failure:
            text = str(rc) if v5 else mqtt.connack_string(rc.value)
            raise ConnectionRefusedError(text)
        client.publish(topic, payload, qos=1)
        for _ in range(40):
            client.loop(timeout=0.05)
            if "puback" in seen:
                break
        ack = seen.get("puback")
        if ack is None:
            raise TimeoutError("MQTT PUBACK not received")
        if ack.is_failure:
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
