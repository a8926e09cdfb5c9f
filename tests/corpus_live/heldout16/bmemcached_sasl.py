"""python-binary-memcached (``bmemcached``: memcached's binary protocol with SASL PLAIN)
against real memcached 1.6 servers (Debian's ``memcached``) started by the setup: one with
SASL (``-S``, a sasldb made with Debian's ``saslpasswd2``, user ``app``), one with ``-M -m 2``
(out of memory instead of evicting) whose memory is filled; and a listener answering HTTP
where memcached was expected. Nothing else is faked. The library
raises ``MemcachedException(message, code)`` with the server's status for a failed command
or bind, ``ValueError``/``TypeError``/``NotImplementedError`` from its own checks; it turns
socket errors into a "server disconnected" status and answers ``None``/``False`` instead of
raising, so a refused, silent or dropped server is no failure it reports (no case here)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    QUOTA,
    Served,
    daemon,
    family,
    free_port,
    garbage,
    require,
    served,
)


@dataclass
class Memcacheds:
    sasl_port: int  # -S: SASL PLAIN, user app / app-pw
    full_port: int  # -M -m 2, memory filled
    http_port: int  # a peer answering HTTP, not memcached


def _start(stack: contextlib.ExitStack, work: Path) -> Memcacheds:
    require("memcached", "saslpasswd2")
    sasl = work / "sasl"
    sasl.mkdir()
    db = sasl / "sasldb2"
    subprocess.run(
        ["saslpasswd2", "-p", "-a", "memcached", "-c", "-f", str(db), "app"],
        input=b"app-pw",
        check=True,
        capture_output=True,
        timeout=10,
    )
    (sasl / "memcached.conf").write_text(f"mech_list: plain\nsasldb_path: {db}\n")
    sasl_port, full_port = free_port(), free_port()
    base = ["memcached", "-u", "root", "-l", LOOPBACK, "-U", "0"]
    daemon(
        stack,
        [*base, "-p", str(sasl_port), "-S", "-m", "8"],
        sasl_port,
        log=work / "memcached-sasl.log",
        env={"SASL_CONF_PATH": str(sasl)},
    )
    daemon(
        stack,
        [*base, "-p", str(full_port), "-M", "-m", "2"],
        full_port,
        log=work / "memcached-full.log",
    )
    import bmemcached  # type: ignore[import-untyped]

    filler = bmemcached.Client([f"{LOOPBACK}:{full_port}"], socket_timeout=2)
    for i in range(64):  # incompressible, so the library's zlib does not shrink them
        with contextlib.suppress(bmemcached.exceptions.MemcachedException):
            filler.set(f"fill{i}", os.urandom(100_000))
    filler.disconnect_all()
    http = garbage(
        stack, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    return Memcacheds(sasl_port, full_port, http)


FAM = family(
    "bmemcached",
    "python-binary-memcached against memcached 1.6 with SASL (Debian), real",
    served(_start),
    half="heldout16",
)

Ctx = Served[Memcacheds]


def _do(
    op: Callable[[Any], Any],
    user: str | None = "app",
    password: str | None = "app-pw",
    port: Callable[[Ctx], int] | None = None,
    servers: int = 1,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        import bmemcached

        p = c.server.sasl_port if port is None else port(c)
        client = bmemcached.Client([f"{LOOPBACK}:{p}"] * servers, user, password, socket_timeout=1)
        try:
            op(client)
        finally:
            client.disconnect_all()

    return run


def _incr_text(client: Any) -> None:
    client.set("greeting", "hello")
    client.incr("greeting", 1)


def _decr_text(client: Any) -> None:
    client.set("label", "abc")
    client.decr("label", 1)


FAM.add(
    "wrong_password",
    AUTH,
    "SASL PLAIN bind with a wrong password: Auth failure (0x20)",
    _do(lambda c: c.get("k"), password="not-it"),
)
FAM.add(
    "unknown_user",
    AUTH,
    "SASL PLAIN bind as a user the sasldb does not know: Auth failure",
    _do(lambda c: c.get("k"), user="mallory", password="x"),
)
FAM.add(
    "no_credentials",
    AUTH,
    "no SASL bind on a server started with -S: the command is refused (auth error)",
    _do(lambda c: c.get("k"), user=None, password=None),
)
FAM.add(
    "value_too_large",
    QUOTA | INT,
    "a 2 MiB value over memcached's 1 MiB item size: Too large (0x03)",
    _do(lambda c: c.set("big", os.urandom(2 * 1024 * 1024))),
)
FAM.add(
    "incr_non_numeric",
    INT,
    "incr of a text value: Non-numeric server-side value (0x06)",
    _do(_incr_text),
)
FAM.add(
    "decr_non_numeric",
    INT,
    "decr of a text value: Non-numeric server-side value (0x06)",
    _do(_decr_text),
)
FAM.add(
    "out_of_memory",
    QUOTA,
    "-M with 2 MiB, memory filled: Out of memory (0x82) instead of evicting",
    _do(
        lambda c: c.set("more", os.urandom(100_000)),
        user=None,
        password=None,
        port=lambda c: c.server.full_port,
    ),
)
FAM.add(
    "key_too_long",
    INT,
    "a 300-byte key, over memcached's 250-byte limit: Invalid arguments (0x04)",
    _do(lambda c: c.set("k" * 300, "v")),
)
FAM.add(
    "cas_zero",
    INT,
    "ValueError: 0 is an invalid CAS value (the pack's argument)",
    _do(lambda c: c.cas("k", "v", 0)),
)
FAM.add(
    "multi_cas_on_replicas",
    INT,
    "NotImplementedError: set_multi_cas with more than one server configured (the pack's setup)",
    _do(lambda c: c.set_multi_cas({"a": "1", "b": "2"}), servers=2),
)
FAM.add(
    "garbage",
    NET | INT,
    "an HTTP server where memcached was expected: invalid response header magic",
    _do(lambda c: c.get("k"), user=None, password=None, port=lambda c: c.server.http_port),
)
