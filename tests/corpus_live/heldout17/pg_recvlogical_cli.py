"""PostgreSQL's ``pg_recvlogical`` CLI (Debian's postgresql-client 15: logical decoding) run as
a pack runs it, a command on argv with a libpq connection string (``connect_timeout=1``, the
password in it, ``-w``) and a deadline of its own, against a real PostgreSQL 15 (Debian's
``postgres``, SCRAM, ``wal_level=logical``, roles with and without the REPLICATION attribute,
one logical replication slot with ``test_decoding``) started by the setup. Nothing is faked
but the transport failures. The failure is the exit status and the ``pg_recvlogical: error:
...`` lines the tool writes, the server's text quoted in them."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon_support import as_nobody, pg_initdb, pg_wait_ready

from corpus_live.core import (
    AUTH,
    DEP,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Served,
    cli,
    daemon,
    family,
    free_port,
    require,
    served,
)

ADMIN_PW = "pg-admin-pw"

_SETUP = """
CREATE ROLE app LOGIN PASSWORD 'app-pw';
CREATE ROLE replicator LOGIN REPLICATION PASSWORD 'replicator-pw';
CREATE ROLE sleeper NOLOGIN REPLICATION PASSWORD 'sleeper-pw';
CREATE DATABASE shop OWNER app;
SELECT pg_create_logical_replication_slot('orders_feed', 'test_decoding');
SELECT pg_create_physical_replication_slot('standby_1');
"""


@dataclass
class Logical:
    port: int


def _start(stack: contextlib.ExitStack, work: Path) -> Logical:
    require("pg_recvlogical", "psql")
    pg = pg_initdb(work / "pg", ADMIN_PW, open_dirs=(work.parent,))
    port = free_port()
    daemon(
        stack,
        as_nobody(
            [
                str(pg.bindir / "postgres"),
                *("-D", str(pg.data), "-p", str(port), "-k", str(pg.socket_dir)),
                *("-c", f"listen_addresses={LOOPBACK}", "-c", "max_connections=20"),
                *("-c", "wal_level=logical", "-c", "max_replication_slots=8"),
                *("-c", "max_wal_senders=8"),
            ]
        ),
        port,
        log=work / "postgres.log",
        timeout=60,
    )
    pg_wait_ready(pg, LOOPBACK, port)
    subprocess.run(
        [
            *("psql", "-h", LOOPBACK, "-p", str(port), "-U", "postgres", "-d", "postgres"),
            *("-v", "ON_ERROR_STOP=1", "-q", "-f", "-"),
        ],
        input=_SETUP.encode(),
        check=True,
        capture_output=True,
        env=dict(os.environ, PGPASSWORD=ADMIN_PW),
        timeout=60,
    )
    return Logical(port)


Ctx = Served[Logical]

FAM = family(
    "pg_recvlogical",
    "the pg_recvlogical CLI against PostgreSQL 15 (Debian, wal_level=logical), real",
    served(_start),
    half="heldout17",
)


def _recv(
    *action: str,
    slot: str = "orders_feed",
    db: str = "postgres",
    user: str = "replicator",
    password: str = "replicator-pw",
    host: str = LOOPBACK,
    port: Any = None,
    timeout: float = 10.0,
) -> Any:
    def run(c: Ctx) -> None:
        p = port(c) if port is not None else c.server.port
        dsn = (
            f"host={host} port={p} user={user} password={password} dbname={db} "
            "connect_timeout=1 sslmode=disable gssencmode=disable"
        )
        with tempfile.TemporaryDirectory(prefix="corpus44-recvlogical-") as tmp:
            argv = ["pg_recvlogical", "-d", dsn, "-w", "-n", "-S", slot]
            argv += [a.replace("{tmp}", tmp) for a in action]
            cli(argv, timeout=timeout)

    return run


_STREAM = ("--start", "-f", "{tmp}/changes.txt", "-E", "0/1")  # stop at once: a bounded read

FAM.add("wrong_password", AUTH, "SCRAM authentication fails", _recv(*_STREAM, password="nope"))
FAM.add(
    "no_replication_right",
    AUTH,
    "the app role has no REPLICATION attribute: must be superuser or replication role",
    _recv(*_STREAM, user="app", password="app-pw"),
)
FAM.add(
    "nologin_role",
    AUTH,
    "the role is not permitted to log in",
    _recv(*_STREAM, user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "missing_database",
    NF,
    "the database the slot is created in does not exist",
    _recv("--create-slot", slot="shop_feed", db="ghost"),
)
FAM.add(
    "missing_slot",
    NF,
    "streaming from a replication slot that does not exist",
    _recv(*_STREAM, slot="ghost_feed"),
)
FAM.add(
    "create_slot_exists",
    EXISTS,
    "--create-slot of a slot that is already there",
    _recv("--create-slot"),
)
FAM.add(
    "drop_slot_missing",
    NF,
    "--drop-slot of a slot that does not exist",
    _recv("--drop-slot", slot="ghost_feed"),
)
FAM.add(
    "missing_output_plugin",
    DEP | INT,
    "--create-slot with an output plugin the server does not have (wal2json)",
    _recv("--create-slot", "-P", "wal2json", slot="json_feed"),
)
FAM.add(
    "physical_slot",
    INT,
    "the pack streams logical changes from a physical slot (one that never reserved WAL): "
    "cannot read from logical replication slot",
    _recv(*_STREAM, slot="standby_1"),
)
FAM.add(
    "no_output_file",
    INT,
    "the pack forgot -f: no target file specified",
    _recv("--start"),
)
FAM.add("refused", NET, "nothing listens", _recv(*_STREAM, port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve (.invalid)",
    _recv(*_STREAM, host=UNRESOLVABLE, port=lambda c: 5432),
)
FAM.add(
    "silent",
    TO,
    "server never answers the startup packet: connect_timeout expires",
    _recv(*_STREAM, port=lambda c: c.net.silent),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not PostgreSQL",
    _recv(*_STREAM, port=lambda c: c.net.garbage),
)
FAM.add(
    "dropped",
    NET,
    "the server closed the connection unexpectedly",
    _recv(*_STREAM, port=lambda c: c.net.close_now),
)
