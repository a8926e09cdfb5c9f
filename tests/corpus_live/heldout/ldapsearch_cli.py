"""OpenLDAP's ``ldapsearch``/``ldapadd`` CLIs (Debian's ldap-utils) against a real slapd."""

from __future__ import annotations

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
    cli,
    family,
    served,
)
from corpus_live.servers import ADMIN_DN, ADMIN_PW, BASE_DN, USER_DN, USER_PW, Slapd, slapd

Ctx = Served[Slapd]


FAM = family(
    "ldap-utils",
    "ldapsearch/ldapadd against OpenLDAP 2.5 slapd (Debian), real",
    served(slapd),
    half="heldout",
)


def _search(
    base: str = BASE_DN,
    *,
    user: str = USER_DN,
    password: str = USER_PW,
    url: Any = None,
    filt: str = "(objectClass=*)",
) -> Any:
    def run(ctx: Ctx) -> None:
        u = url(ctx) if url else ctx.server.url
        cli(
            [
                "ldapsearch",
                "-x",
                "-H",
                u,
                "-D",
                user,
                "-w",
                password,
                "-b",
                base,
                "-o",
                "nettimeout=1",
                "-l",
                "2",
                filt,
            ],
            timeout=10,
        )

    return run


def _add(ldif: str, user: str = ADMIN_DN, password: str = ADMIN_PW) -> Any:
    def run(ctx: Ctx) -> None:
        cli(
            ["ldapadd", "-x", "-H", ctx.server.url, "-D", user, "-w", password],
            input=ldif.encode(),
            timeout=10,
        )

    return run


NEW = f"dn: uid=new,ou=people,{BASE_DN}\nobjectClass: inetOrgPerson\ncn: N\nsn: N\n"
FAM.add("bad_password", AUTH, "ldap_bind: Invalid credentials (49)", _search(password="nope"))
FAM.add("no_such_object", NF, "No such object (32)", _search(f"ou=ghost,{BASE_DN}"))
FAM.add(
    "refused",
    NET,
    "Can't contact LDAP server (-1)",
    _search(url=lambda c: f"ldap://{LOOPBACK}:{c.net.closed}"),
)
FAM.add(
    "dns",
    NET,
    "Can't contact LDAP server (host does not resolve)",
    _search(url=lambda c: f"ldap://{UNRESOLVABLE}:389"),
)
FAM.add(
    "silent",
    TO,
    "the server never answers the bind",
    _search(url=lambda c: f"ldap://{LOOPBACK}:{c.net.silent}"),
)
FAM.add("bad_filter", INT, "Bad search filter (-7)", _search(filt="(objectClass=*"))
FAM.add(
    "already_exists",
    EXISTS,
    "ldap_add: Already exists (68)",
    _add(f"dn: {USER_DN}\nobjectClass: inetOrgPerson\ncn: Alice\nsn: A\n"),
)
FAM.add(
    "insufficient_access", AUTH, "ldap_add: Insufficient access (50)", _add(NEW, USER_DN, USER_PW)
)
FAM.add(
    "schema",
    INT,
    "ldap_add: Object class violation (65)",
    _add(f"dn: uid=z,ou=people,{BASE_DN}\nobjectClass: inetOrgPerson\ncn: Z\n"),
)
FAM.add(
    "no_parent",
    NF,
    "ldap_add: No such object (32): the parent entry is missing",
    _add(f"dn: uid=z,ou=ghost,{BASE_DN}\nobjectClass: inetOrgPerson\ncn: Z\nsn: Z\n"),
)
