"""bonsai (an LDAP client: a C extension on OpenLDAP's libldap) against a real OpenLDAP slapd
(Debian's ``slapd``, an mdb database with a size limit of 3 and ACLs: a ``ou=secret`` subtree
only the admin may touch, users read, anonymous read). The failures are bonsai's ``LDAPError``
subclasses with the server's result code and diagnostic message, or bonsai's own connection
and timeout errors. Nothing is faked."""

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
PEOPLE = f"ou=people,{BASE_DN}"


def _start(stack: contextlib.ExitStack, work: Path) -> Slapd:
    import bonsai  # noqa: F401 - skip cleanly when the library is missing

    return slapd(stack, work)


FAM = family(
    "bonsai",
    "bonsai against OpenLDAP slapd (Debian), real",
    served(_start),
    half="heldout8",
)


def _connect(url: str, dn: str | None, password: str) -> Any:
    import bonsai

    client = bonsai.LDAPClient(url)
    if dn is not None:
        client.set_credentials("SIMPLE", user=dn, password=password)
    return client.connect(timeout=1.0)


def _as(
    dn: str | None, password: str, body: Callable[[Any], Any] | None = None
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        conn = _connect(c.server.url, dn, password)
        try:
            if body is not None:
                body(conn)
        finally:
            conn.close()

    return run


def _person(conn: Any, dn: str, uid: str, *, sn: bool = True) -> None:
    import bonsai

    entry = bonsai.LDAPEntry(dn)
    entry["objectClass"] = ["inetOrgPerson"]
    entry["cn"] = [uid]
    entry["uid"] = [uid]
    if sn:
        entry["sn"] = [uid]
    conn.add(entry)


def _search(base: str, filt: str = "(objectClass=*)") -> Callable[[Any], Any]:
    def go(conn: Any) -> Any:
        import bonsai

        return conn.search(base, bonsai.LDAPSearchScope.SUBTREE, filt)

    return go


def _modify(dn: str, attr: str, value: str, *, fetch: bool = True) -> Callable[[Any], Any]:
    def go(conn: Any) -> Any:
        import bonsai

        if fetch:
            entry = conn.search(dn, bonsai.LDAPSearchScope.BASE)[0]
        else:
            entry = bonsai.LDAPEntry(dn, conn)
        entry[attr] = [value]
        return entry.modify()

    return go


def _transport(port: Callable[[Ctx], int], host: str = LOOPBACK) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        _connect(f"ldap://{host}:{port(c)}", USER_DN, USER_PW).close()

    return run


FAM.add("wrong_password", AUTH, "bind with a wrong password", _as(USER_DN, "nope"))
FAM.add(
    "unknown_dn_bind",
    AUTH,
    "bind as an entry that does not exist",
    _as(f"uid=mallory,{PEOPLE}", "mallory-pw"),
)
FAM.add(
    "delete_missing_entry",
    NF,
    "delete an entry that does not exist",
    _as(ADMIN_DN, ADMIN_PW, lambda conn: conn.delete(f"uid=ghost,{PEOPLE}")),
)
FAM.add(
    "entry_exists",
    EXISTS,
    "add an entry that exists",
    _as(ADMIN_DN, ADMIN_PW, lambda conn: _person(conn, USER_DN, "alice")),
)
FAM.add(
    "user_writes_secret",
    AUTH,
    "alice may not add under ou=secret",
    _as(USER_DN, USER_PW, lambda conn: _person(conn, f"uid=s1,ou=secret,{BASE_DN}", "s1")),
)
FAM.add(
    "anonymous_modify",
    AUTH,
    "an anonymous session may not modify (authentication required)",
    _as(None, "", _modify(f"uid=u1,{PEOPLE}", "cn", "renamed")),
)
FAM.add(
    "modify_missing_entry",
    NF,
    "modify an entry that does not exist",
    _as(ADMIN_DN, ADMIN_PW, _modify(f"uid=ghost,{PEOPLE}", "cn", "x", fetch=False)),
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
    _as(ADMIN_DN, ADMIN_PW, lambda conn: _person(conn, f"uid=n1,{PEOPLE}", "n1", sn=False)),
)
FAM.add(
    "undefined_attribute",
    INT,
    "the pack modifies an attribute type the schema does not define",
    _as(ADMIN_DN, ADMIN_PW, _modify(USER_DN, "favouriteColour", "blue")),
)
FAM.add(
    "delete_non_leaf",
    INT,
    "the pack deletes an entry that has children",
    _as(ADMIN_DN, ADMIN_PW, lambda conn: conn.delete(PEOPLE)),
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
FAM.add(
    "dropped",
    NET | TO,
    "closed at once (bonsai reports it as a timeout)",
    _transport(lambda c: c.net.close_now),
)
