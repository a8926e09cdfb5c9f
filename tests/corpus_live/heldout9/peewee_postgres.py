"""peewee (the small ORM) over psycopg2 against a real PostgreSQL (Debian's ``postgresql``,
SCRAM authentication): the failures are peewee's own exceptions (``OperationalError``,
``IntegrityError``, ``DoesNotExist``...) wrapping psycopg2's, which carry the server's
SQLSTATE and message. Nothing is faked."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout2._daemons import Postgres, postgres

Ctx = Served[Postgres]


def _start(stack: contextlib.ExitStack, work: Path) -> Postgres:
    import peewee  # noqa: F401 - skip cleanly when missing

    return postgres(stack, work)


FAM = family(
    "peewee",
    "peewee (psycopg2) against PostgreSQL (Debian), real",
    served(_start),
    half="heldout9",
)


def _db(
    port: int,
    *,
    host: str = LOOPBACK,
    user: str = "app",
    password: str = "app-pw",
    name: str = "app",
    options: str = "",
) -> Any:
    import peewee

    kw: dict[str, Any] = {"options": options} if options else {}
    return peewee.PostgresqlDatabase(
        name,
        host=host,
        port=port,
        user=user,
        password=password,
        connect_timeout=1,
        sslmode="disable",
        **kw,
    )


def _models(db: Any) -> tuple[Any, Any, Any]:
    import peewee

    class Base(peewee.Model):
        class Meta:
            database = db

    class T(Base):
        id = peewee.IntegerField(primary_key=True)
        name = peewee.CharField(max_length=4)

        class Meta:
            table_name = "t"

    class Account(Base):
        email = peewee.CharField(unique=True)
        balance = peewee.IntegerField(constraints=[peewee.Check("balance >= 0")])

        class Meta:
            table_name = "pw_account"

    class Entry(Base):
        account = peewee.ForeignKeyField(Account)

        class Meta:
            table_name = "pw_entry"

    db.create_tables([Account, Entry], safe=True)
    return T, Account, Entry


def _orm(body: Callable[[Any, Any, Any, Any], Any], **kw: Any) -> Callable[[Ctx], Any]:
    def run(c: Ctx) -> Any:
        db = _db(c.server.port, **kw)
        db.connect()
        try:
            T, Account, Entry = _models(db)
            return body(db, T, Account, Entry)
        finally:
            db.close()

    return run


def _connect(host: str, port: int, **kw: Any) -> Any:
    db = _db(port, host=host, **kw)
    db.connect()
    db.close()


FAM.add(
    "wrong_password",
    AUTH,
    "password authentication failed",
    lambda c: _connect(LOOPBACK, c.server.port, password="nope"),
)
FAM.add(
    "nologin_role",
    AUTH,
    "the role may not log in",
    lambda c: _connect(LOOPBACK, c.server.port, user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "unknown_database",
    NF,
    "the database does not exist",
    lambda c: _connect(LOOPBACK, c.server.port, name="ledger"),
)


def _missing_row(db: Any, T: Any, Account: Any, Entry: Any) -> Any:
    return T.get_by_id(404)


FAM.add("row_does_not_exist", NF, "Model.get_by_id of an id no row has", _orm(_missing_row))


def _missing_table(db: Any, T: Any, Account: Any, Entry: Any) -> Any:
    return db.execute_sql("SELECT * FROM invoices").fetchall()


FAM.add("unknown_table", NF, "no such relation", _orm(_missing_table))


def _dup_pk(db: Any, T: Any, Account: Any, Entry: Any) -> Any:
    return T.insert(id=1, name="dup").execute()


FAM.add("duplicate_key", EXISTS, "insert of a primary key a row has", _orm(_dup_pk))


def _dup_unique(db: Any, T: Any, Account: Any, Entry: Any) -> Any:
    Account.get_or_create(email="a@example.com", defaults={"balance": 1})
    return Account.create(email="a@example.com", balance=2)


FAM.add("duplicate_unique", EXISTS, "unique email already taken", _orm(_dup_unique))


def _check(db: Any, T: Any, Account: Any, Entry: Any) -> Any:
    return Account.create(email="neg@example.com", balance=-5)


FAM.add("check_violation", INT, "the pack's row breaks a CHECK constraint", _orm(_check))


def _fk(db: Any, T: Any, Account: Any, Entry: Any) -> Any:
    return Entry.insert(account=987654).execute()


FAM.add(
    "foreign_key_violation",
    INT | NF,
    "the referenced account does not exist",
    _orm(_fk),
)


def _too_long(db: Any, T: Any, Account: Any, Entry: Any) -> Any:
    return T.insert(id=9, name="far too long").execute()


FAM.add("value_too_long", INT, "the value does not fit varchar(4)", _orm(_too_long))


def _secret(db: Any, T: Any, Account: Any, Entry: Any) -> Any:
    return db.execute_sql("SELECT * FROM secret").fetchall()


FAM.add("permission_denied", AUTH, "app has no privilege on the table", _orm(_secret))


def _slow(db: Any, T: Any, Account: Any, Entry: Any) -> Any:
    return db.execute_sql("SELECT pg_sleep(5)").fetchall()


FAM.add(
    "statement_timeout",
    TO,
    "the server cancels a query past statement_timeout",
    _orm(_slow, options="-c statement_timeout=300"),
)
FAM.add("refused", NET, "nothing listens", lambda c: _connect(LOOPBACK, c.net.closed))
FAM.add("dns", NET, "host does not resolve", lambda c: _connect(UNRESOLVABLE, 5432))
FAM.add(
    "silent",
    TO,
    "server never answers the startup packet",
    lambda c: _connect(LOOPBACK, c.net.silent),
)
FAM.add("dropped", NET, "closed at once", lambda c: _connect(LOOPBACK, c.net.close_now))
