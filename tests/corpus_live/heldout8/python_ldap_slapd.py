"""python-ldap (the ``ldap`` module, OpenLDAP's libldap under a C extension) against a real
OpenLDAP slapd (Debian's ``slapd``, an mdb database with a size limit of 3 and ACLs: a
``ou=secret`` subtree only the admin may touch, users read, anonymous read). The failures are
python-ldap's ``LDAPError`` subclasses with the server's result code and diagnostic message, or
libldap's own ``SERVER_DOWN`` / ``TIMEOUT``. Nothing is faked."""

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
    QUOTA,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.servers import ADMIN_DN, ADMIN_PW, BASE_DN, USER_DN, USER_PW, Slapd, slapd

Ctx = Served[Slapd]


def _start(stack: contextlib.ExitStack, work: Path) -> Slapd:
    import ldap  # type: ignore[import-untyped]  # noqa: F401 - skip cleanly when missing

    return slapd(stack, work)


FAM = family(
    "python-ldap",
    "python-ldap against OpenLDAP slapd (Debian), real",
    served(_start),
    half="heldout8",
)


def _open(url: str) -> Any:
    import ldap

    conn = ldap.initialize(url)
    conn.set_option(ldap.OPT_PROTOCOL_VERSION, 3)
    conn.set_option(ldap.OPT_NETWORK_TIMEOUT, 1.0)
    conn.set_option(ldap.OPT_TIMEOUT, 1.0)
    return conn


def _as(
    dn: str | None, password: str, body: Callable[[Any], Any] | None = None
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        conn = _open(c.server.url)
        try:
            if dn is not None:
                conn.simple_bind_s(dn, password)
            if body is not None:
                body(conn)
        finally:
            conn.unbind_s()

    return run


def _person(uid: str, *, sn: bool = True) -> list[tuple[str, list[bytes]]]:
    attrs = [
        ("objectClass", [b"inetOrgPerson"]),
        ("cn", [uid.encode()]),
        ("uid", [uid.encode()]),
    ]
    return attrs + ([("sn", [uid.encode()])] if sn else [])


def _search(base: str, filt: str = "(objectClass=*)") -> Callable[[Any], Any]:
    import_scope = 2  # ldap.SCOPE_SUBTREE

    return lambda conn: conn.search_s(base, import_scope, filt)


def _modify(dn: str, attr: str, value: bytes) -> Callable[[Any], Any]:
    return lambda conn: conn.modify_s(dn, [(2, attr, [value])])  # ldap.MOD_REPLACE


def _transport(port: Callable[[Ctx], int], host: str = LOOPBACK) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        conn = _open(f"ldap://{host}:{port(c)}")
        conn.simple_bind_s(USER_DN, USER_PW)

    return run


PEOPLE = f"ou=people,{BASE_DN}"

FAM.add("wrong_password", AUTH, "bind with a wrong password", _as(USER_DN, "nope"))
FAM.add(
    "unknown_dn_bind",
    AUTH,
    "bind as an entry that does not exist",
    _as(f"uid=mallory,{PEOPLE}", "mallory-pw"),
)
FAM.add(
    "no_such_base",
    NF,
    "search under a base that does not exist",
    _as(USER_DN, USER_PW, _search(f"ou=groups,{BASE_DN}")),
)
FAM.add(
    "entry_exists",
    EXISTS,
    "add an entry that exists",
    _as(ADMIN_DN, ADMIN_PW, lambda conn: conn.add_s(USER_DN, _person("alice"))),
)
FAM.add(
    "user_writes_secret",
    AUTH,
    "alice may not add under ou=secret",
    _as(USER_DN, USER_PW, lambda conn: conn.add_s(f"uid=s1,ou=secret,{BASE_DN}", _person("s1"))),
)
FAM.add(
    "anonymous_modify",
    AUTH,
    "an anonymous session may not modify (authentication required)",
    _as(None, "", _modify(f"uid=u1,{PEOPLE}", "cn", b"renamed")),
)
FAM.add(
    "modify_missing_entry",
    NF,
    "modify an entry that does not exist",
    _as(ADMIN_DN, ADMIN_PW, _modify(f"uid=ghost,{PEOPLE}", "cn", b"x")),
)
FAM.add(
    "size_limit",
    INT | QUOTA,
    "the search matches more entries than the server's size limit (3)",
    _as(USER_DN, USER_PW, _search(PEOPLE, "(uid=u*)")),
)
FAM.add(
    "object_class_violation",
    INT,
    "the pack's entry lacks a required attribute",
    _as(ADMIN_DN, ADMIN_PW, lambda conn: conn.add_s(f"uid=n1,{PEOPLE}", _person("n1", sn=False))),
)
FAM.add(
    "undefined_attribute",
    INT,
    "the pack modifies an attribute type the schema does not define",
    _as(ADMIN_DN, ADMIN_PW, _modify(USER_DN, "favouriteColour", b"blue")),
)
FAM.add(
    "delete_non_leaf",
    INT,
    "the pack deletes an entry that has children",
    _as(ADMIN_DN, ADMIN_PW, lambda conn: conn.delete_s(PEOPLE)),
)
FAM.add(
    "bad_filter",
    INT,
    "the pack's search filter does not parse",
    _as(USER_DN, USER_PW, _search(PEOPLE, "(uid=alice")),
)
FAM.add("refused", NET, "nothing listens", _transport(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _transport(lambda c: 389, UNRESOLVABLE))
FAM.add("silent", TO, "server never answers the bind", _transport(lambda c: c.net.silent))
FAM.add("dropped", NET, "closed at once", _transport(lambda c: c.net.close_now))
