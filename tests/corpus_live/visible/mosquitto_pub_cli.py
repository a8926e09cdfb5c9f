"""The ``mosquitto_pub`` CLI (Debian's mosquitto-clients) against a real Mosquitto broker."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, LOOPBACK, NET, TO, UNRESOLVABLE, Served, cli, family, served
from corpus_live.servers import Mosquitto, mosquitto

Ctx = Served[Mosquitto]


FAM = family(
    "mosquitto_pub",
    "mosquitto_pub against Mosquitto 2.0 (Debian), real",
    served(mosquitto),
    half="visible",
)


def _pub(
    port: Any,
    *,
    user: str | None = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    v: str = "mqttv311",
) -> Any:
    def run(ctx: Ctx) -> None:
        argv = [
            "mosquitto_pub",
            "-h",
            host,
            "-p",
            str(port(ctx)),
            "-t",
            "app/x",
            "-m",
            "hi",
            "-q",
            "1",
            "-V",
            v,
        ]
        if user is not None:
            argv += ["-u", user, "-P", password]
        cli(argv, timeout=5)

    return run


AUTHP = lambda c: c.server.port  # noqa: E731
FAM.add(
    "bad_password",
    AUTH,
    "Connection error: Connection Refused: not authorised.",
    _pub(AUTHP, password="nope"),
)
FAM.add("anonymous", AUTH, "not authorised (anonymous)", _pub(AUTHP, user=None))
FAM.add(
    "bad_password_v5",
    AUTH,
    "Connection error: Bad user name or password",
    _pub(AUTHP, password="nope", v="mqttv5"),
)
FAM.add(
    "anonymous_v5", AUTH, "Connection error: Not authorized", _pub(AUTHP, user=None, v="mqttv5")
)
FAM.add("refused", NET, "Error: Connection refused", _pub(lambda c: c.net.closed))
FAM.add("dns", NET, "Error: Name or service not known", _pub(lambda c: 1883, host=UNRESOLVABLE))
FAM.add("dropped", NET, "the broker closes at once", _pub(lambda c: c.net.close_now))
FAM.add(
    "silent",
    TO,
    "the broker never answers (the CLI is killed at its deadline)",
    _pub(lambda c: c.net.silent),
)
