"""nats-python (the synchronous ``pynats`` client, ``NATSClient``) against a real NATS server
(``nats-server``: users ``app`` and ``limited``, the latter allowed to publish on
``allowed.>`` only; a 2 KiB max payload). Nothing is faked but the transport failures. The
client raises ``NATSUnexpectedResponse`` (the server's ``-ERR`` line on ``.line``) when a
reply is not the one it waits for, ``NATSReadSocketError`` when the server hangs up, and the
socket's own errors; the pack pings after each command so the server's verdict is read."""

from __future__ import annotations

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
    served,
)
from corpus_live.servers import Nats, nats

Ctx = Served[Nats]

FAM = family(
    "nats-python",
    "nats-python (pynats) against nats-server, real",
    served(nats),
    half="heldout21",
)


def _client(url: str, **kw: Any) -> Any:
    from pynats import NATSClient  # type: ignore[import-untyped]

    return NATSClient(url, socket_timeout=1.0, **kw)


def _do(
    op: Callable[[Any], Any], url: Callable[[Ctx], str] | None = None, **kw: Any
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        client = _client(c.server.url() if url is None else url(c), **kw)
        client.connect()
        try:
            op(client)
            client.ping()
        finally:
            client._socket.close()

    return run


def _ping(client: Any) -> None:
    client.ping()


FAM.add(
    "wrong_password",
    AUTH,
    "-ERR 'Authorization Violation': the password of user app is wrong",
    _do(_ping, lambda c: c.server.url("app", "wrong-pw")),
)
FAM.add(
    "unknown_user",
    AUTH,
    "-ERR 'Authorization Violation': no such user",
    _do(_ping, lambda c: c.server.url("ghost", "ghost-pw")),
)
FAM.add(
    "no_credentials",
    AUTH,
    "-ERR 'Authorization Violation': the server requires a user and the pack sent none",
    _do(_ping, lambda c: f"nats://{LOOPBACK}:{c.server.port}"),
)
FAM.add(
    "publish_denied",
    AUTH,
    "-ERR 'Permissions Violation for Publish to \"orders.new\"': user limited may publish "
    "on allowed.> only",
    _do(
        lambda cl: cl.publish("orders.new", payload=b"x"),
        lambda c: c.server.url("limited", "limited-pw"),
    ),
)
FAM.add(
    "subscribe_denied",
    AUTH,
    "-ERR 'Permissions Violation for Subscription to \"orders.>\"': user limited may "
    "subscribe to _INBOX.> only",
    _do(
        lambda cl: cl.subscribe("orders.>", callback=lambda m: None),
        lambda c: c.server.url("limited", "limited-pw"),
    ),
)
FAM.add(
    "payload_too_big",
    INT,
    "-ERR 'Maximum Payload Violation': 4 KiB over the server's 2 KiB max_payload",
    _do(lambda cl: cl.publish("app.big", payload=b"x" * 4096)),
)
FAM.add(
    "invalid_subject",
    INT,
    "-ERR 'Invalid Subject': the pack subscribes to a subject with an empty token",
    _do(lambda cl: cl.subscribe("app..x", callback=lambda m: None)),
)
FAM.add(
    "tls_required_mismatch",
    INT,
    "the pack asks for tls:// but the server offers plain TCP (NATSTCPConnectionRequiredError)",
    _do(_ping, lambda c: f"tls://app:app-pw@{LOOPBACK}:{c.server.port}"),
)
FAM.add(
    "bad_scheme",
    INT,
    "the pack's URL has a scheme the client does not speak (http://)",
    _do(_ping, lambda c: f"http://app:app-pw@{LOOPBACK}:{c.server.port}"),
)
FAM.add(
    "refused",
    NET,
    "nothing listens",
    _do(_ping, lambda c: f"nats://app:app-pw@{LOOPBACK}:{c.net.closed}"),
)
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _do(_ping, lambda c: f"nats://app:app-pw@{UNRESOLVABLE}:4222"),
)
FAM.add(
    "silent",
    TO,
    "server never sends its INFO line: the 1 s socket timeout",
    _do(_ping, lambda c: f"nats://app:app-pw@{LOOPBACK}:{c.net.silent}"),
)
FAM.add(
    "dropped",
    NET,
    "closed at once, before the INFO line",
    _do(_ping, lambda c: f"nats://app:app-pw@{LOOPBACK}:{c.net.close_now}"),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol instead of INFO",
    _do(_ping, lambda c: f"nats://app:app-pw@{LOOPBACK}:{c.net.garbage}"),
)
