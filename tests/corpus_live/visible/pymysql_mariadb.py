"""PyMySQL against a real MariaDB (Debian's mariadb-server) on loopback."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
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
    "pymysql", "MariaDB 10.11 (Debian mariadb-server), real", served(mariadb), half="visible"
)


def _connect(ctx: Ctx, **over: Any) -> Any:
    import pymysql

    return pymysql.connect(**ctx.server.kw(**over))


def _sql(*statements: str, **over: Any) -> Any:
    def run(ctx: Ctx) -> None:
        conn = _connect(ctx, **over)
        try:
            with conn.cursor() as cur:
                for s in statements:
                    cur.execute(s)
            conn.commit()
        finally:
            conn.close()

    return run


FAM.add("wrong_password", AUTH, "1045 access denied (bad password)", _sql(password="nope"))
FAM.add("unknown_user", AUTH, "1045 access denied (no such user)", _sql(user="ghost"))
FAM.add(
    "locked_account",
    AUTH,
    "4151 account is locked",
    _sql(user="locked", password="locked-pw", database=None),
)
FAM.add(
    "db_denied",
    AUTH,
    "1044 access denied to database",
    _sql(user="limited", password="limited-pw", database="other"),
)
FAM.add(
    "no_database",
    NF,
    "1049 unknown database (a user whose grants cover it: others are told 1044)",
    _sql(user="wide", password="wide-pw", database="ghostdb"),
)
FAM.add("no_table", NF, "1146 table doesn't exist", _sql("SELECT * FROM ghost_t"))
FAM.add("no_table_insert", NF, "1146 on INSERT", _sql("INSERT INTO ghost_t VALUES (1)"))
FAM.add(
    "no_column",
    NF | INT,
    "1054 unknown column (a schema object, or the query's bug)",
    _sql("SELECT ghost_col FROM t"),
)
FAM.add("syntax", INT, "1064 syntax error: the pack's bug", _sql("SELEC 1"))
FAM.add(
    "duplicate_key",
    EXISTS,
    "1062 duplicate entry for PRIMARY",
    _sql("INSERT INTO t VALUES (1, 'dup')"),
)
FAM.add("table_exists", EXISTS, "1050 table already exists", _sql("CREATE TABLE t (x INT)"))
FAM.add(
    "db_exists",
    EXISTS,
    "1007 database exists",
    _sql("CREATE DATABASE app", user="root", password="", unix_socket=None)
    if False
    else _sql("CREATE DATABASE app"),
)
FAM.add(
    "select_denied",
    AUTH,
    "1142 SELECT command denied",
    _sql("SELECT * FROM app.secret", user="limited", password="limited-pw"),
)
FAM.add(
    "insert_denied",
    AUTH,
    "1142 INSERT command denied",
    _sql("INSERT INTO app.t VALUES (5, 'x')", user="limited", password="limited-pw"),
)
FAM.add(
    "data_too_long",
    INT,
    "1406 data too long for column: the pack's input",
    _sql("INSERT INTO t VALUES (7, 'far too long')"),
)
FAM.add(
    "fk_violation", INT, "1452 foreign key constraint fails", _sql("INSERT INTO child VALUES (42)")
)
FAM.add(
    "statement_time",
    TO,
    "1969 max_statement_time exceeded",
    _sql("SET STATEMENT max_statement_time=0.2 FOR SELECT SLEEP(3)"),
)
FAM.add("refused", NET, "nothing listens", lambda ctx: _connect(ctx, port=ctx.net.closed))
FAM.add("dns", NET, "host name does not resolve", lambda ctx: _connect(ctx, host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "server never greets",
    lambda ctx: _connect(ctx, port=ctx.net.silent, connect_timeout=1, read_timeout=1),
)
FAM.add("dropped", NET, "closed at once", lambda ctx: _connect(ctx, port=ctx.net.close_now))
FAM.add("garbage", NET, "not the MySQL protocol", lambda ctx: _connect(ctx, port=ctx.net.garbage))
FAM.add(
    "read_timeout", TO, "query outlives read_timeout", _sql("SELECT SLEEP(3)", read_timeout=0.5)
)


@FAM.case("user_conn_limit", NET | RL, "1226 max_user_connections exceeded")
def _two(ctx: Ctx) -> None:
    first = _connect(ctx, user="single", password="single-pw")
    try:
        _connect(ctx, user="single", password="single-pw").close()
    finally:
        first.close()


@FAM.case("queries_per_hour", RL, "1226 max_queries_per_hour exceeded")
def _hourly(ctx: Ctx) -> None:
    conn = _connect(ctx, user="hourly", password="hourly-pw")
    try:
        with conn.cursor() as cur:
            for _ in range(4):
                cur.execute("SELECT 1")
    finally:
        conn.close()


@FAM.case("lock_wait", TO, "1205 lock wait timeout exceeded")
def _lock_wait(ctx: Ctx) -> None:
    holder = _connect(ctx)
    try:
        with holder.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute("SELECT * FROM locked WHERE id=1 FOR UPDATE")
            _sql("SET SESSION innodb_lock_wait_timeout=1", "UPDATE locked SET id=1 WHERE id=1")(ctx)
    finally:
        holder.rollback()
        holder.close()


@FAM.case("killed", NET, "the connection was killed by an administrator (2013 lost connection)")
def _killed(ctx: Ctx) -> None:
    conn = _connect(ctx)
    try:
        tid = conn.thread_id()
        killer = _connect(ctx)
        with killer.cursor() as cur:
            cur.execute(f"KILL {tid}")
        killer.close()
        time.sleep(0.2)
        with conn.cursor() as cur:
            cur.execute("SELECT 1")
    finally:
        with contextlib.suppress(Exception):
            conn.close()


@FAM.case("query_killed", NET | INT, "1317 query execution was interrupted (KILL QUERY)")
def _query_killed(ctx: Ctx) -> None:
    conn = _connect(ctx)
    tid = conn.thread_id()

    def kill() -> None:
        time.sleep(0.3)
        k = _connect(ctx)
        with k.cursor() as cur:
            cur.execute(f"KILL QUERY {tid}")
        k.close()

    t = threading.Thread(target=kill)
    t.start()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT SLEEP(5), 1 FROM t")
            row = cur.fetchone()
            if row and row[0] == 1:
                raise AssertionError("interrupted sleep returned")
            cur.execute("SELECT * FROM t WHERE id = (SELECT SLEEP(5))")
    finally:
        t.join()
        conn.close()
