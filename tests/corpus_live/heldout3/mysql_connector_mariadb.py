"""mysql-connector-python (Oracle's MySQL driver) against a real MariaDB 10.11 (Debian's
``mariadb-server``): the server's error numbers and SQLSTATEs as ``errno``/``sqlstate`` on
mysql.connector's ``Error`` classes."""

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
    "mysql-connector",
    "MariaDB 10.11 (Debian mariadb-server), real",
    served(mariadb),
    half="heldout3",
)


def _connect(ctx: Ctx, **over: Any) -> Any:
    import mysql.connector

    kw = ctx.server.kw(**over)
    kw["connection_timeout"] = kw.pop("connect_timeout")
    return mysql.connector.connect(**kw)


def _sql(*statements: str, **over: Any) -> Any:
    def run(ctx: Ctx) -> None:
        conn = _connect(ctx, **over)
        try:
            cur = conn.cursor()
            for s in statements:
                cur.execute(s)
                if cur.with_rows:
                    cur.fetchall()
            conn.commit()
        finally:
            conn.close()

    return run


def _lock_wait(ctx: Ctx) -> None:
    holder, waiter = _connect(ctx), _connect(ctx)
    try:
        holder.start_transaction()
        hc = holder.cursor()
        hc.execute("SELECT * FROM locked WHERE id = 1 FOR UPDATE")
        hc.fetchall()
        wc = waiter.cursor()
        wc.execute("SET SESSION innodb_lock_wait_timeout = 1")
        wc.execute("UPDATE locked SET id = 2 WHERE id = 1")
    finally:
        holder.close()
        waiter.close()


FAM.add("wrong_password", AUTH, "1045 access denied (bad password)", _sql(password="nope"))
FAM.add(
    "locked_account",
    AUTH,
    "4151 access denied, this account is locked",
    _sql(user="locked", password="locked-pw", database=None),
)
FAM.add(
    "db_denied",
    AUTH,
    "1044 access denied for user to database",
    _sql(user="limited", password="limited-pw", database="other"),
)
FAM.add(
    "unknown_database",
    NF,
    "1049 unknown database (for a user whose grants would cover it)",
    _sql(user="wide", password="wide-pw", database="nosuchdb"),
)
FAM.add("no_table", NF, "1146 table doesn't exist", _sql("SELECT * FROM missing_t"))
FAM.add(
    "duplicate",
    EXISTS,
    "1062 duplicate entry for key PRIMARY",
    _sql("INSERT INTO t VALUES (1, 'x')"),
)
FAM.add("table_exists", EXISTS, "1050 table already exists", _sql("CREATE TABLE parent (id INT)"))
FAM.add(
    "too_long",
    INT,
    "1406 data too long for column (strict mode): the pack's input",
    _sql("INSERT INTO t VALUES (8, 'much too long')"),
)
FAM.add(
    "fk_violation",
    INT,
    "1452 cannot add or update a child row: a foreign key constraint fails",
    _sql("INSERT INTO child VALUES (99)"),
)
FAM.add("syntax", INT, "1064 SQL syntax error", _sql("SELEC * FROM t"))
FAM.add(
    "update_denied",
    AUTH,
    "1142 UPDATE command denied to user",
    _sql("UPDATE app.t SET name = 'z'", user="limited", password="limited-pw"),
)
FAM.add("lock_wait", TO, "1205 lock wait timeout exceeded; try restarting transaction", _lock_wait)
FAM.add(
    "queries_per_hour",
    RL | QUOTA,
    "1226 the user has exceeded its max_queries_per_hour resource",
    _sql("SELECT 1", "SELECT 2", user="hourly", password="hourly-pw"),
)
FAM.add(
    "statement_time",
    TO,
    "1969 query execution was interrupted (max_statement_time exceeded)",
    _sql("SET STATEMENT max_statement_time=0.2 FOR SELECT SLEEP(3)"),
)
FAM.add("refused", NET, "nothing listens", lambda c: _connect(c, port=c.net.closed))
FAM.add("dns", NET, "host does not resolve", lambda c: _connect(c, host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "the server never greets (connection_timeout 1)",
    lambda c: _connect(c, port=c.net.silent, connect_timeout=1),
)
FAM.add("dropped", NET, "closed at once", lambda c: _connect(c, port=c.net.close_now))
