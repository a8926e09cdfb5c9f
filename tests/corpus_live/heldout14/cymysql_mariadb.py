"""CyMySQL (``cymysql``, the Cython-accelerated fork of PyMySQL) against a real MariaDB 10.11
(Debian's ``mariadb-server``) started by the family's setup in its own scratch directory, with
the users of :func:`corpus_live.servers.mariadb` (a locked account, per-user connection and
hourly query limits, grants limited to one table). Every failure is the server's own answer
or a real socket on 127.0.0.1. Nothing is faked."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import cymysql

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.servers import MariaDB, mariadb

Ctx = Served[MariaDB]

FAM = family(
    "cymysql",
    "CyMySQL against MariaDB 10.11 (Debian mariadb-server), real",
    served(mariadb),
    half="heldout14",
)


def _connect(
    c: Ctx,
    *,
    user: str = "app",
    password: str = "app-pw",
    db: str = "app",
    host: str = LOOPBACK,
    port: int | None = None,
    timeout: float = 1,
) -> Any:
    return cymysql.connect(
        host=host,
        port=c.server.port if port is None else port,
        user=user,
        passwd=password,
        db=db,
        connect_timeout=timeout,
    )


def _sql(*statements: str, **kw: Any) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        con = _connect(c, **kw)
        try:
            cur = con.cursor()
            for s in statements:
                cur.execute(s)
            con.commit()
        finally:
            con.close()

    return run


def _login(**kw: Any) -> Callable[[Ctx], None]:
    return lambda c: _connect(c, **kw).close()


# cymysql does not read the server's error packet after its handshake answer: a refused login
# surfaces as the lost connection the server closes next (the reasons say what the server did).
FAM.add(
    "wrong_password",
    AUTH | NET,
    "access denied: wrong password (seen as a lost connection)",
    _login(password="nope"),
)
FAM.add(
    "locked_account",
    AUTH | NET,
    "the account is locked (seen as a lost connection)",
    _login(user="locked", password="locked-pw", db=""),
)
FAM.add(
    "unknown_database",
    NF | NET,
    "a user with global SELECT names a database that does not exist (seen as a lost connection)",
    _login(user="wide", password="wide-pw", db="ghost"),
)
FAM.add(
    "table_denied",
    AUTH,
    "SELECT denied on a table outside the user's grant",
    _sql("SELECT * FROM secret", user="limited", password="limited-pw"),
)
FAM.add("missing_table", NF | INT, "table app.ghost doesn't exist", _sql("SELECT * FROM ghost"))
FAM.add(
    "duplicate_key",
    EXISTS | INT,
    "duplicate entry for the primary key",
    _sql("INSERT INTO t VALUES (1, 'uno')"),
)
FAM.add(
    "data_too_long",
    INT,
    "strict mode: a value longer than VARCHAR(4)",
    _sql("INSERT INTO t VALUES (7, 'far too long')"),
)
FAM.add(
    "foreign_key",
    INT,
    "a child row whose parent does not exist",
    _sql("INSERT INTO child VALUES (99)"),
)
FAM.add("syntax", INT, "an SQL syntax error", _sql("SELEC 1"))
FAM.add(
    "hourly_queries",
    QUOTA | RL,
    "the user's MAX_QUERIES_PER_HOUR 1 is used up by the first statement",
    _sql("SELECT 1", "SELECT 2", user="hourly", password="hourly-pw"),
)


def _second_connection(c: Ctx) -> None:
    first = _connect(c, user="single", password="single-pw")
    try:
        _connect(c, user="single", password="single-pw").close()
    finally:
        first.close()


FAM.add(
    "user_connections",
    RL | QUOTA | NET,
    "MAX_USER_CONNECTIONS 1: a second connection while the first is open (a lost connection)",
    _second_connection,
)
FAM.add(
    "statement_time",
    TO,
    "max_statement_time 0.3 s interrupts SLEEP(5)",
    _sql("SET SESSION max_statement_time = 0.3", "SELECT SLEEP(5) FROM t"),
)


def _lock_wait(c: Ctx) -> None:
    holder = _connect(c, timeout=5)
    try:
        hc = holder.cursor()
        hc.execute("START TRANSACTION")
        hc.execute("SELECT * FROM locked WHERE id = 1 FOR UPDATE")
        _sql(
            "SET SESSION innodb_lock_wait_timeout = 1",
            "UPDATE locked SET id = 2 WHERE id = 1",
            timeout=5,
        )(c)
    finally:
        with contextlib.suppress(cymysql.MySQLError):
            holder.rollback()
        holder.close()


FAM.add("lock_wait", TO, "another session holds the row: innodb_lock_wait_timeout 1 s", _lock_wait)
FAM.add("refused", NET, "nothing listens", lambda c: _login(port=c.net.closed)(c))
FAM.add("dns", NET, "host does not resolve", _login(host=UNRESOLVABLE, port=3306))
FAM.add(
    "silent",
    TO,
    "the server accepts and never sends its greeting: connect_timeout 1 s",
    lambda c: _login(port=c.net.silent)(c),
)
FAM.add(
    "dropped",
    NET,
    "the server closes the connection before its greeting",
    lambda c: _login(port=c.net.close_now)(c),
)
