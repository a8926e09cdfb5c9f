"""python-ldap (the OpenLDAP libldap binding, ``import ldap``) against a real OpenLDAP slapd
(Debian's ``slapd``, ``servers.slapd``: a mdb database with ACLs, a size limit of 3 entries)
started on 127.0.0.1 by the setup. Each case is one synchronous call of the binding (the
``*_s`` methods) and the ``ldap.LDAPError`` subclass libldap's result code maps to: bad
credentials, ACL refusals, missing and existing entries, schema violations, the size limit,
a non-leaf delete; and a refused port, an unresolvable host, a listener that never answers
(``OPT_TIMEOUT``/``OPT_NETWORK_TIMEOUT`` of 1 s), one that closes at once and one that
answers bytes of no BER. Nothing is faked."""

from __future__ import annotations

import contextlib
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
    return slapd(stack, work)


FAM = family(
    "python-ldap",
    "python-ldap against OpenLDAP slapd (Debian), real",
    served(_start),
    half="heldout20",
)


def _conn(url: str, dn: str | None = USER_DN, pw: str = USER_PW) -> Any:
    import ldap  # type: ignore[import-untyped]

    conn = ldap.initialize(url)
    conn.set_option(ldap.OPT_PROTOCOL_VERSION, 3)
    conn.set_option(ldap.OPT_NETWORK_TIMEOUT, 1.0)
    conn.set_option(ldap.OPT_TIMEOUT, 1.0)
    conn.set_option(ldap.OPT_REFERRALS, 0)
    if dn is not None:
        conn.simple_bind_s(dn, pw)
    return conn


def _url(port: int, host: str = LOOPBACK) -> str:
    return f"ldap://{host}:{port}"


def _person(uid: str) -> list[tuple[str, list[bytes]]]:
    return [
        ("objectClass", [b"inetOrgPerson"]),
        ("cn", [uid.encode()]),
        ("sn", [uid.encode()]),
        ("uid", [uid.encode()]),
    ]


@FAM.case("wrong_password", AUTH, "simple bind with a wrong password: invalidCredentials (49)")
def _wrong_password(c: Ctx) -> Any:
    return _conn(c.server.url, USER_DN, "not-the-password")


@FAM.case("unknown_dn", AUTH, "simple bind as a DN that does not exist: invalidCredentials (49)")
def _unknown_dn(c: Ctx) -> Any:
    return _conn(c.server.url, f"uid=mallory,ou=people,{BASE_DN}", "x")


@FAM.case(
    "unauthenticated_bind",
    AUTH | INT,
    "a DN with an empty password (an unauthenticated bind): unwillingToPerform (53)",
)
def _unauthenticated(c: Ctx) -> Any:
    return _conn(c.server.url, USER_DN, "")


@FAM.case(
    "add_without_write",
    AUTH,
    "alice may only read ou=people: the add is refused, insufficientAccess (50)",
)
def _add_no_write(c: Ctx) -> Any:
    return _conn(c.server.url).add_s(f"uid=newbie,ou=people,{BASE_DN}", _person("newbie"))


@FAM.case(
    "anonymous_delete",
    AUTH,
    "an anonymous session deletes an entry: strongerAuthRequired, modifications require auth",
)
def _anon_delete(c: Ctx) -> Any:
    return _conn(c.server.url, None).delete_s(f"uid=u1,ou=people,{BASE_DN}")


@FAM.case("search_missing_base", NF, "a search under a base DN that does not exist: noSuchObject")
def _search_missing(c: Ctx) -> Any:
    import ldap

    return _conn(c.server.url).search_s(f"ou=ghosts,{BASE_DN}", ldap.SCOPE_SUBTREE, "(uid=*)")


@FAM.case("delete_missing", NF, "the admin deletes an entry that does not exist: noSuchObject")
def _delete_missing(c: Ctx) -> Any:
    return _conn(c.server.url, ADMIN_DN, ADMIN_PW).delete_s(f"uid=ghost,ou=people,{BASE_DN}")


@FAM.case("add_existing", EXISTS, "the admin adds an entry that already exists: alreadyExists")
def _add_existing(c: Ctx) -> Any:
    return _conn(c.server.url, ADMIN_DN, ADMIN_PW).add_s(
        f"uid=u2,ou=people,{BASE_DN}", _person("u2")
    )


@FAM.case(
    "value_exists",
    EXISTS | INT,
    "adding a value the attribute already holds: attributeOrValueExists (20)",
)
def _value_exists(c: Ctx) -> Any:
    import ldap

    return _conn(c.server.url, ADMIN_DN, ADMIN_PW).modify_s(
        f"uid=u3,ou=people,{BASE_DN}", [(ldap.MOD_ADD, "cn", [b"u3"])]
    )


@FAM.case(
    "delete_non_leaf",
    INT,
    "the admin deletes ou=people, which has children: notAllowedOnNonLeaf (66)",
)
def _delete_non_leaf(c: Ctx) -> Any:
    return _conn(c.server.url, ADMIN_DN, ADMIN_PW).delete_s(f"ou=people,{BASE_DN}")


@FAM.case(
    "object_class_violation",
    INT,
    "an inetOrgPerson without its required sn: objectClassViolation (65)",
)
def _oc_violation(c: Ctx) -> Any:
    return _conn(c.server.url, ADMIN_DN, ADMIN_PW).add_s(
        f"uid=nosn,ou=people,{BASE_DN}",
        [("objectClass", [b"inetOrgPerson"]), ("cn", [b"nosn"]), ("uid", [b"nosn"])],
    )


@FAM.case("bad_filter", INT, "the pack's search filter has unbalanced parentheses: FILTER_ERROR")
def _bad_filter(c: Ctx) -> Any:
    import ldap

    return _conn(c.server.url).search_s(BASE_DN, ldap.SCOPE_SUBTREE, "(&(uid=u1)")


@FAM.case("invalid_dn", INT, "the pack deletes a string that is not a DN: invalidDNSyntax (34)")
def _invalid_dn(c: Ctx) -> Any:
    return _conn(c.server.url, ADMIN_DN, ADMIN_PW).delete_s("this is not a dn")


@FAM.case(
    "size_limit",
    QUOTA | INT,
    "a subtree search matching more entries than the server's sizelimit 3: sizeLimitExceeded",
)
def _size_limit(c: Ctx) -> Any:
    import ldap

    return _conn(c.server.url).search_s(
        f"ou=people,{BASE_DN}", ldap.SCOPE_SUBTREE, "(objectClass=inetOrgPerson)"
    )


@FAM.case("refused", NET, "nothing listens: SERVER_DOWN, Can't contact LDAP server")
def _refused(c: Ctx) -> Any:
    return _conn(_url(c.net.closed))


@FAM.case("dns", NET, "host does not resolve (.invalid): SERVER_DOWN")
def _dns(c: Ctx) -> Any:
    return _conn(_url(389, UNRESOLVABLE))


@FAM.case("silent", TO, "the server accepts and never answers the bind: OPT_TIMEOUT of 1 s")
def _silent(c: Ctx) -> Any:
    return _conn(_url(c.net.silent))


@FAM.case("dropped", NET, "the server closes the connection at once: SERVER_DOWN")
def _dropped(c: Ctx) -> Any:
    return _conn(_url(c.net.close_now))


@FAM.case("garbage", NET, "the peer answers bytes that are not BER")
def _garbage(c: Ctx) -> Any:
    return _conn(_url(c.net.garbage))
