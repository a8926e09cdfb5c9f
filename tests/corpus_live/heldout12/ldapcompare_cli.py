"""OpenLDAP's ``ldapcompare`` CLI (Debian's ``ldap-utils``) run as a pack runs it (simple bind,
``-x``, ``-o nettimeout=1``, a subprocess deadline) against a real OpenLDAP ``slapd`` (Debian's ``slapd``, an MDB database with access
rules: passwords only usable to authenticate, a subtree only the admin reads). Nothing is
faked but the transport failures. The failure is the exit status (the server's result code) with ``ldap_bind:
...`` on stderr for a failed bind, ``Compare Result: ...`` on stdout for a failed compare."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    require,
    served,
)
from corpus_live.core import cli as run_cli
from corpus_live.servers import ADMIN_DN, ADMIN_PW, BASE_DN, USER_DN, USER_PW, Slapd, slapd

Ctx = Served[Slapd]


def _start(stack: contextlib.ExitStack, work: Path) -> Slapd:
    require("ldapcompare")
    return slapd(stack, work)


FAM = family(
    "ldapcompare",
    "the ldapcompare CLI against OpenLDAP slapd (Debian), real",
    served(_start),
    half="heldout12",
)

_ADMIN = (ADMIN_DN, ADMIN_PW)
_ALICE = (USER_DN, USER_PW)


def _compare(
    *args: str,
    bind: tuple[str, str] | None = _ALICE,
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    deadline: float = 10.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        who = ["-D", bind[0], "-w", bind[1]] if bind else []
        argv = ["ldapcompare", "-x", "-H", f"ldap://{host}:{p}", "-o", "nettimeout=1", *who]
        run_cli([*argv, *args], timeout=deadline)

    return run


_U1 = f"uid=u1,ou=people,{BASE_DN}"

FAM.add(
    "wrong_password",
    AUTH,
    "bind: Invalid credentials (49), alice's password is wrong",
    _compare(_U1, "cn:u1", bind=(USER_DN, "not-it")),
)
FAM.add(
    "unknown_bind_dn",
    AUTH,
    "bind: Invalid credentials (49), no such entry to bind as",
    _compare(_U1, "cn:u1", bind=(f"uid=ghost,ou=people,{BASE_DN}", "ghost-pw")),
)
FAM.add(
    "unauthenticated_bind",
    AUTH,
    "bind: Unwilling to perform (53), a DN with an empty password",
    _compare(_U1, "cn:u1", bind=(USER_DN, "")),
)
FAM.add(
    "no_such_object",
    NF,
    "Compare Result: No such object (32), the entry is not there",
    _compare(f"uid=nobody,ou=people,{BASE_DN}", "cn:nobody"),
)
FAM.add(
    "undefined_attribute",
    INT,
    "Compare Result: Undefined attribute type (17), the pack's attribute is in no schema",
    _compare(_U1, "shoeSize:42"),
)
FAM.add(
    "password_compare_denied",
    AUTH,
    "Compare Result: Insufficient access (50), userPassword is usable only to authenticate",
    _compare(USER_DN, f"userPassword:{USER_PW}", bind=None),
)
FAM.add(
    "secret_subtree",
    AUTH | NF,
    "the admin-only subtree, compared by alice: access denied (or hidden as no such object)",
    _compare(f"ou=secret,{BASE_DN}", "ou:secret"),
)
FAM.add(
    "invalid_dn",
    INT,
    "Invalid DN syntax (34), the pack's DN is malformed",
    _compare("uid=u1,,ou=people", "cn:u1"),
)
FAM.add(
    "bad_assertion",
    INT,
    "the pack's assertion has no ':' (ldapcompare's usage)",
    _compare(_U1, "cn-u1"),
)
FAM.add(
    "admin_wrong_password",
    AUTH,
    "bind: Invalid credentials (49), the admin's password is wrong",
    _compare(_U1, "cn:u1", bind=(ADMIN_DN, "nope")),
)
FAM.add(
    "refused",
    NET,
    "Can't contact LDAP server (-1)",
    _compare(_U1, "cn:u1", port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "Can't contact LDAP server: the host does not resolve",
    _compare(_U1, "cn:u1", host=UNRESOLVABLE, port=lambda c: 389),
)
FAM.add(
    "silent",
    TO | NET,
    "no answer to the bind (nettimeout covers the connect only): the pack's 2 s deadline",
    _compare(_U1, "cn:u1", port=lambda c: c.net.silent, deadline=2),
)
FAM.add(
    "dropped",
    NET,
    "closed at once",
    _compare(_U1, "cn:u1", port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are no LDAP message",
    _compare(_U1, "cn:u1", port=lambda c: c.net.garbage),
)
