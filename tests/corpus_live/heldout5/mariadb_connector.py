"""MariaDB Connector/Python (the ``mariadb`` C extension over libmariadb) against a real
MariaDB 10.11 (Debian's ``mariadb-server``): the server's error numbers and SQLSTATEs as
``errno``/``sqlstate`` on the PEP 249 classes of the ``mariadb`` module, libmariadb's client
errors (2002, 2005, 2013...) for the transport."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
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
    "mariadb-connector",
    "MariaDB 10.11 (Debian mariadb-server), real",
    served(mariadb),
    half="heldout5",
)


def _connect(ctx: Ctx, **over: Any) -> Any:
    import mariadb as mdb

    kw = ctx.server.kw(**over)
    kw.setdefault("read_timeout", 5)
    return mdb.connect(**kw)


def _sql(*statements: str, **over: Any) -> Any:
    def run(ctx: Ctx) -> None:
        conn = _connect(ctx, **over)
        try:
            cur = conn.cursor()
            for s in statements:
                cur.execute(s)
                if cur.description:
                    cur.fetchall()
            conn.commit()
        finally:
            conn.close()

    return run


def _lock_wait(ctx: Ctx) -> None:
    holder, waiter = _connect(ctx), _connect(ctx)
    try:
        holder.autocommit = False
        hc = holder.cursor()
        hc.execute("SELECT * FROM locked WHERE id = 1 FOR UPDATE")
        hc.fetchall()
        wc = waiter.cursor()
        wc.execute("SET SESSION innodb_lock_wait_timeout = 1")
        wc.execute("DELETE FROM locked WHERE id = 1")
    finally:
        holder.close()
        waiter.close()


def _second_connection(ctx: Ctx) -> None:
    first = _connect(ctx, user="single", password="single-pw")
    try:
        _connect(ctx, user="single", password="single-pw").close()
    finally:
        first.close()


FAM.add("wrong_password", AUTH, "1045 access denied for user (bad password)", _sql(password="bad"))
FAM.add(
    "locked_account",
    AUTH,
    "4151 access denied, this account is locked",
    _sql(user="locked", password="locked-pw", database=None),
)
FAM.add(
    "select_denied",
    AUTH,
    "1142 SELECT command denied to user for table secret",
    _sql("SELECT * FROM app.secret", user="limited", password="limited-pw", database=None),
)
FAM.add(
    "unknown_database",
    NF,
    "1049 unknown database (a user with global grants)",
    _sql(user="wide", password="wide-pw", database="missing_db"),
)
FAM.add("no_table", NF, "1146 table app.gone doesn't exist", _sql("DELETE FROM gone"))
FAM.add(
    "duplicate_key",
    EXISTS,
    "1062 duplicate entry '1' for key PRIMARY",
    _sql("INSERT INTO t VALUES (1, 'a')"),
)
FAM.add(
    "db_exists", EXISTS, "1007 can't create database; database exists", _sql("CREATE DATABASE app")
)
FAM.add(
    "parent_row",
    INT,
    "1451 cannot delete or update a parent row: a foreign key constraint fails",
    _sql("INSERT INTO parent VALUES (7)", "INSERT INTO child VALUES (7)", "DELETE FROM parent"),
)
FAM.add("bad_sql", INT, "1064 error in your SQL syntax", _sql("SELECT FROM WHERE"))
FAM.add("lock_wait", TO, "1205 lock wait timeout exceeded (innodb_lock_wait_timeout 1)", _lock_wait)
FAM.add(
    "user_connections",
    RL | QUOTA,
    "1226 user 'single' has exceeded the max_user_connections resource (1)",
    _second_connection,
)
FAM.add(
    "statement_timeout",
    TO,
    "1969 query execution was interrupted (max_statement_time 0.3 s)",
    _sql("SET STATEMENT max_statement_time=0.3 FOR SELECT SLEEP(2)"),
)
FAM.add(
    "refused", NET, "2002 can't connect: nothing listens", lambda c: _connect(c, port=c.net.closed)
)
FAM.add("dns", NET, "2005 unknown server host (.invalid)", lambda c: _connect(c, host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "the server never sends its greeting (connect_timeout 1)",
    lambda c: _connect(c, port=c.net.silent, connect_timeout=1, read_timeout=1),
)
FAM.add(
    "dropped",
    NET,
    "2013 lost connection at handshake: closed at once",
    lambda c: _connect(c, port=c.net.close_now),
)
