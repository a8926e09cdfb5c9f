"""py-postgresql (the pure-Python PQv3 driver, ``import postgresql``) against a real
PostgreSQL server (Debian's ``postgresql``, ``heldout2._daemons.postgres``: role ``app``
owning database ``app`` and table ``t(id int primary key, name varchar(4))``, a table
``secret`` only the superuser may read, role ``single`` with a connection limit of 0, role
``sleeper`` that may not log in). No silent-peer case: ``connect_timeout`` bounds the TCP
connect only, a silent server hangs the startup exchange. Only connection failures: py-postgresql 1.3 cannot parse
Debian's ``server_version`` (``15.x (Debian ...)``) once connected. The pack opens ``pq://`` IRIs with ``connect_timeout=1``.
py-postgresql raises its own hierarchy (``postgresql.exceptions``: one class per SQLSTATE,
``ClientCannotConnectError`` wrapping each connection attempt's failure). py-postgresql speaks
MD5 password authentication, not SCRAM: the setup turns the cluster's ``pg_hba.conf`` to ``md5``
and stores the roles' passwords as MD5. Nothing is faked but the transport failures."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout2._daemons import PG_ADMIN_PW, Postgres, postgres

Ctx = Served[Postgres]

_MD5 = """
SET password_encryption = 'md5';
ALTER ROLE app PASSWORD 'app-pw';
ALTER ROLE single PASSWORD 'single-pw';
ALTER ROLE sleeper PASSWORD 'sleeper-pw';
SELECT pg_reload_conf();
"""


def _start(stack: contextlib.ExitStack, work: Path) -> Postgres:
    srv = postgres(stack, work)
    hba = work / "pg" / "data" / "pg_hba.conf"
    hba.write_text(hba.read_text().replace("scram-sha-256", "md5"))
    subprocess.run(
        [
            *("psql", "-h", LOOPBACK, "-p", str(srv.port), "-U", "postgres", "-d", "postgres"),
            *("-v", "ON_ERROR_STOP=1", "-q", "-f", "-"),
        ],
        input=_MD5.encode(),
        check=True,
        capture_output=True,
        env=dict(os.environ, PGPASSWORD=PG_ADMIN_PW),
        timeout=60,
    )
    return srv


FAM = family(
    "py-postgresql",
    "py-postgresql against PostgreSQL (Debian), real",
    served(_start),
    half="heldout21",
)


def _iri(
    port: int, user: str = "app", password: str = "app-pw", db: str = "app", host: str = LOOPBACK
) -> str:
    return f"pq://{user}:{password}@{host}:{port}/{db}"


def _do(
    sql: str | Callable[[Any], Any] = "SELECT 1",
    iri: Callable[[Ctx], str] | None = None,
) -> Callable[[Ctx], Any]:
    def run(c: Ctx) -> Any:
        import postgresql  # type: ignore[import-untyped]

        db = postgresql.open(_iri(c.server.port) if iri is None else iri(c), connect_timeout=1)
        try:
            return db.execute(sql) if isinstance(sql, str) else sql(db)
        finally:
            db.close()

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "28P01 password authentication failed for user app",
    _do(iri=lambda c: _iri(c.server.port, password="wrong-pw")),
)
FAM.add(
    "unknown_role",
    AUTH,
    "a role that does not exist: the server answers with a mock SCRAM exchange, which "
    "py-postgresql does not speak (unsupported authentication request 10)",
    _do(iri=lambda c: _iri(c.server.port, user="ghost", password="ghost-pw")),
)
FAM.add(
    "login_not_allowed",
    AUTH,
    '28000 role "sleeper" is not permitted to log in',
    _do(iri=lambda c: _iri(c.server.port, user="sleeper", password="sleeper-pw")),
)
FAM.add(
    "role_connection_limit",
    QUOTA | RL,
    '53300 too many connections for role "single" (its connection limit is 0)',
    _do(iri=lambda c: _iri(c.server.port, user="single", password="single-pw")),
)
FAM.add(
    "unknown_database",
    NF,
    '3D000 database "warehouse" does not exist',
    _do(iri=lambda c: _iri(c.server.port, db="warehouse")),
)
FAM.add(
    "database_closed",
    INT | AUTH,
    '55000 database "template0" is not currently accepting connections',
    _do(iri=lambda c: _iri(c.server.port, db="template0")),
)
FAM.add(
    "ssl_required",
    INT | NET,
    "the pack requires SSL (sslmode=require) and the server answers it has none",
    _do(iri=lambda c: _iri(c.server.port) + "?[sslmode]=require"),
)
FAM.add(
    "refused",
    NET,
    "nothing listens",
    _do(iri=lambda c: _iri(c.net.closed)),
)
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _do(iri=lambda c: _iri(5432, host=UNRESOLVABLE)),
)
FAM.add(
    "dropped",
    NET,
    "closed at once, before any authentication request",
    _do(iri=lambda c: _iri(c.net.close_now)),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol instead of PostgreSQL messages",
    _do(iri=lambda c: _iri(c.net.garbage)),
)
