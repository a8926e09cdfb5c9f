"""mysqlclient (``MySQLdb``, the C extension over libmariadb that Django uses) against a real
MariaDB 10.11 (Debian's ``mariadb-server``): the server's error numbers on DB-API classes
(``OperationalError(1045, ...)``, ``IntegrityError(1062, ...)``, ``ProgrammingError(1146,
...)``...), libmariadb's client errors (2002/2005/2013) for the transport."""

from __future__ import annotations

from collections.abc import Callable
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
    "mysqlclient",
    "MariaDB 10.11 (Debian mariadb-server), real",
    served(mariadb),
    half="heldout7",
)


def _connect(c: Ctx, **over: Any) -> Any:
    import MySQLdb

    kw = c.server.kw(**over)
    kw["passwd"] = kw.pop("password")
    if kw["database"] is None:
        del kw["database"]
    else:
        kw["db"] = kw.pop("database")
    return MySQLdb.connect(**kw)


def _sql(*statements: str, **over: Any) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        conn = _connect(c, **over)
        try:
            cur = conn.cursor()
            for s in statements:
                cur.execute(s)
                cur.fetchall()
            conn.commit()
        finally:
            conn.close()

    return run


def _login(**over: Any) -> Callable[[Ctx], None]:
    return lambda c: _connect(c, **over).close()


def _lock_wait(c: Ctx) -> None:
    holder = _connect(c)
    waiter = _connect(c)
    try:
        holder.begin()
        holder.cursor().execute("SELECT * FROM locked WHERE id = 1 FOR UPDATE")
        cur = waiter.cursor()
        cur.execute("SET SESSION innodb_lock_wait_timeout = 1")
        cur.execute("UPDATE locked SET id = 2 WHERE id = 1")
    finally:
        holder.close()
        waiter.close()


FAM.add("wrong_password", AUTH, "1045 Access denied for user 'app'", _login(password="bad"))
FAM.add(
    "locked_account",
    AUTH,
    "4151 Access denied, this account is locked",
    _login(user="locked", password="locked-pw", database=None),
)
FAM.add(
    "select_denied",
    AUTH,
    "1142 SELECT command denied to user 'limited' for table 'secret'",
    _sql("SELECT * FROM app.secret", user="limited", password="limited-pw", database=None),
)
FAM.add(
    "unknown_database",
    NF,
    "1049 Unknown database 'archive' (a user with global grants)",
    _login(user="wide", password="wide-pw", database="archive"),
)
FAM.add("no_table", NF, "1146 Table 'app.orders' doesn't exist", _sql("SELECT * FROM orders"))
FAM.add(
    "duplicate_key",
    EXISTS,
    "1062 Duplicate entry '1' for key 'PRIMARY'",
    _sql("INSERT INTO t VALUES (1, 'uno')"),
)
FAM.add(
    "fk_missing_parent",
    NF | INT,
    "1452 Cannot add or update a child row: a foreign key constraint fails (parent 99 absent)",
    _sql("INSERT INTO child VALUES (99)"),
)
FAM.add(
    "data_too_long",
    INT,
    "1406 Data too long for column 'name' (strict mode: the caller's value)",
    _sql("INSERT INTO t VALUES (7, 'far too long')"),
)
FAM.add("bad_sql", INT, "1064 You have an error in your SQL syntax", _sql("SELEC name FROM t"))
FAM.add(
    "lock_wait",
    TO,
    "1205 Lock wait timeout exceeded (innodb_lock_wait_timeout 1, a row held FOR UPDATE)",
    _lock_wait,
)
FAM.add(
    "statement_time",
    TO,
    "1969 Query execution was interrupted (max_statement_time=0.5 exceeded)",
    _sql("SET STATEMENT max_statement_time=0.5 FOR SELECT SLEEP(3)"),
)
FAM.add(
    "queries_per_hour",
    RL | QUOTA,
    "1226 User 'hourly' has exceeded the 'max_queries_per_hour' resource (current value: 1)",
    _sql("SELECT 1", "SELECT 2", "SELECT 3", user="hourly", password="hourly-pw"),
)
FAM.add(
    "refused",
    NET,
    "2002 Can't connect to server: nothing listens",
    lambda c: _login(port=c.net.closed)(c),
)
FAM.add("dns", NET, "2005 Unknown server host (.invalid)", _login(host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "2013 Lost connection at 'handshake': no greeting within connect_timeout 1",
    lambda c: _login(port=c.net.silent, connect_timeout=1)(c),
)
FAM.add(
    "dropped",
    NET,
    "2013 Lost connection at 'handshake': closed at once",
    lambda c: _login(port=c.net.close_now)(c),
)
