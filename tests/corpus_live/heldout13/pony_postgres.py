"""Pony ORM (its PostgreSQL provider over psycopg2) against a real PostgreSQL 15 (Debian's
``postgresql``): a role with no connection slot, a table only its owner reads. Nothing is
faked but the transport failures. Pony raises its own classes: ``ObjectNotFound`` and
``MultipleObjectsFoundError`` for its queries, ``TransactionIntegrityError`` at commit, its
own argument and session checks, and the server's errors re-raised as
``pony.orm.dbapiprovider`` ``OperationalError``/``ProgrammingError``/``DataError`` with the
psycopg2 error (SQLSTATE on it) as the original."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout2._daemons import Postgres, postgres

Ctx = Served[Postgres]

FAM = family("pony", "PostgreSQL 15 (Debian), real", served(postgres), half="heldout13")


def _db(
    c: Ctx,
    *,
    user: str = "app",
    password: str = "app-pw",
    database: str = "app",
    host: str = LOOPBACK,
    port: int | None = None,
    table: str = "t",
) -> tuple[Any, Any, Any]:
    """A fresh Pony ``Database`` with the ``t`` and ``secret`` tables mapped, bound."""
    from pony import orm

    db = orm.Database()

    class Item(db.Entity):  # type: ignore[name-defined,misc]
        _table_ = table
        id = orm.PrimaryKey(int)
        name = orm.Required(str)

    class Secret(db.Entity):  # type: ignore[name-defined,misc]
        _table_ = "secret"
        x = orm.PrimaryKey(int)

    db.bind(
        provider="postgres",
        host=host,
        port=c.server.port if port is None else port,
        user=user,
        password=password,
        database=database,
        connect_timeout=1,
        sslmode="disable",
    )
    db.generate_mapping(create_tables=False, check_tables=False)
    return db, Item, Secret


def _session(op: Callable[[Any, Any, Any], Any], **kw: Any) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        from pony import orm

        db, item, secret = _db(c, **kw)
        try:
            with orm.db_session:
                op(db, item, secret)
        finally:
            db.disconnect()

    return run


def _count(db: Any, item: Any, secret: Any) -> None:
    from pony import orm

    orm.count(i for i in item)


FAM.add(
    "wrong_password", AUTH, "28P01 password authentication failed", _session(_count, password="x")
)
FAM.add(
    "no_database", NF, '3D000 database "nodb" does not exist', _session(_count, database="nodb")
)
FAM.add(
    "connection_limit",
    RL | NET,
    '53300 too many connections for role "single" (CONNECTION LIMIT 0)',
    _session(_count, user="single", password="single-pw"),
)


def _missing_row(db: Any, item: Any, secret: Any) -> None:
    item[99]


FAM.add("object_not_found", NF, "ObjectNotFound: Item[99]", _session(_missing_row))


def _duplicate(db: Any, item: Any, secret: Any) -> None:
    from pony import orm

    item(id=1, name="dup")
    orm.commit()


FAM.add(
    "duplicate_key",
    EXISTS,
    "TransactionIntegrityError at commit: 23505 duplicate key value violates unique constraint",
    _session(_duplicate),
)


def _too_long(db: Any, item: Any, secret: Any) -> None:
    from pony import orm

    item(id=7, name="much too long")
    orm.commit()


FAM.add(
    "value_too_long",
    INT,
    "22001 value too long for type character varying(4) (the pack's input)",
    _session(_too_long),
)


def _required_none(db: Any, item: Any, secret: Any) -> None:
    item(id=8, name=None)


FAM.add(
    "required_missing",
    INT,
    "Pony's own check: Attribute Item.name is required (the pack passed None)",
    _session(_required_none),
)


def _read_secret(db: Any, item: Any, secret: Any) -> None:
    from pony import orm

    orm.select(s for s in secret)[:]


FAM.add(
    "permission",
    AUTH,
    "42501 permission denied for table secret",
    _session(_read_secret),
)
FAM.add(
    "missing_table",
    NF,
    '42P01 relation "items" does not exist (the entity\'s table is not there)',
    _session(_count, table="items"),
)


def _get_many(db: Any, item: Any, secret: Any) -> None:
    item.get(lambda i: i.id > 0)


FAM.add(
    "multiple_found",
    INT,
    "MultipleObjectsFoundError: Item.get() found two rows (the pack's query is not unique)",
    _session(_get_many),
)


def _slow(db: Any, item: Any, secret: Any) -> None:
    db.execute("SET statement_timeout = '200ms'")
    db.execute("SELECT pg_sleep(3)")


FAM.add(
    "statement_timeout",
    TO,
    "57014 canceling statement due to statement timeout",
    _session(_slow),
)


def _no_session(c: Ctx) -> None:
    from pony import orm

    db, item, _secret = _db(c)
    try:
        orm.count(i for i in item)
    finally:
        db.disconnect()


FAM.add(
    "no_db_session",
    INT,
    "Pony's own check: db_session is required when working with the database",
    _no_session,
)


def _transport(port: Callable[[Ctx], int], host: str = LOOPBACK) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        _session(_count, host=host, port=port(c))(c)

    return run


FAM.add("refused", NET, "nothing listens", _transport(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _transport(lambda c: 5432, UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "the server never answers: connect_timeout=1 expires",
    _transport(lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "server closed the connection unexpectedly",
    _transport(lambda c: c.net.close_now),
)
