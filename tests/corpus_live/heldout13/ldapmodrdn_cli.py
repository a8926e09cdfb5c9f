"""OpenLDAP's ``ldapmodrdn`` CLI (Debian's ``ldap-utils``) run as a pack runs it (simple bind,
``-x``, ``-o nettimeout=1``, a subprocess deadline) against a real OpenLDAP ``slapd`` (Debian's
``slapd``, an MDB database with access rules: users read everything but write only their own
entry, a subtree only the admin sees). Nothing is faked but the transport failures. The failure
is the exit status (the server's result code) with ``ldap_bind: ...`` on stderr for a failed
bind; a refused rename says ``Rename Result: ...`` on stdout only, its stderr is empty."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

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
    require,
    served,
)
from corpus_live.core import cli as run_cli
from corpus_live.servers import ADMIN_DN, ADMIN_PW, BASE_DN, USER_DN, USER_PW, Slapd, slapd

Ctx = Served[Slapd]


def _start(stack: contextlib.ExitStack, work: Path) -> Slapd:
    require("ldapmodrdn")
    return slapd(stack, work)


FAM = family(
    "ldapmodrdn",
    "the ldapmodrdn CLI against OpenLDAP slapd (Debian), real",
    served(_start),
    half="heldout13",
)

_ADMIN = (ADMIN_DN, ADMIN_PW)
_ALICE = (USER_DN, USER_PW)
_PEOPLE = f"ou=people,{BASE_DN}"
_U1 = f"uid=u1,{_PEOPLE}"


def _rename(
    *args: str,
    bind: tuple[str, str] | None = _ADMIN,
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    deadline: float = 10.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        who = ["-D", bind[0], "-w", bind[1]] if bind else []
        argv = ["ldapmodrdn", "-x", "-H", f"ldap://{host}:{p}", "-o", "nettimeout=1", *who]
        run_cli([*argv, *args], timeout=deadline)

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "bind: Invalid credentials (49), the admin's password is wrong",
    _rename(_U1, "uid=u1-new", bind=(ADMIN_DN, "not-it")),
)
FAM.add(
    "unknown_bind_dn",
    AUTH,
    "bind: Invalid credentials (49), no such entry to bind as",
    _rename(_U1, "uid=u1-new", bind=(f"uid=ghost,{_PEOPLE}", "ghost-pw")),
)
FAM.add(
    "anonymous_write",
    AUTH,
    "exit 8: Strong(er) authentication required, an anonymous session may not rename",
    _rename(_U1, "uid=u1-new", bind=None),
)
FAM.add(
    "other_users_entry",
    AUTH,
    "exit 50: Insufficient access, alice may write only her own entry",
    _rename(_U1, "uid=u1-new", bind=_ALICE),
)
FAM.add(
    "no_such_entry",
    NF,
    "exit 32: No such object, the entry to rename is not there",
    _rename(f"uid=ghost,{_PEOPLE}", "uid=ghost2"),
)
FAM.add(
    "no_such_superior",
    NF,
    "exit 32: No such object, the new parent (-s) is not there",
    _rename("-s", f"ou=nowhere,{BASE_DN}", _U1, "uid=u1"),
)
FAM.add(
    "target_exists",
    EXISTS,
    "exit 68: Already exists, another entry holds the new name",
    _rename(_U1, "uid=u2"),
)
FAM.add(
    "objectclass_violation",
    INT,
    "exit 65: Object class violation, the new RDN's attribute is not allowed",
    _rename(_U1, "dc=u1"),
)
FAM.add(
    "undefined_attribute",
    INT,
    "exit 34: the pack's new RDN names an attribute type in no schema (invalid DN)",
    _rename(_U1, "shoeSize=42"),
)
FAM.add(
    "invalid_dn",
    INT,
    "exit 34: Invalid DN syntax, the pack's DN is malformed",
    _rename("uid=u1,,ou=people", "uid=u1-new"),
)
FAM.add(
    "refused",
    NET,
    "Can't contact LDAP server (-1)",
    _rename(_U1, "uid=u1-new", port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "Can't contact LDAP server: the host does not resolve",
    _rename(_U1, "uid=u1-new", host=UNRESOLVABLE, port=lambda c: 389),
)
FAM.add(
    "silent",
    TO | NET,
    "no answer to the bind (nettimeout covers the connect only): the pack's 2 s deadline",
    _rename(_U1, "uid=u1-new", port=lambda c: c.net.silent, deadline=2),
)
FAM.add(
    "dropped",
    NET,
    "closed at once",
    _rename(_U1, "uid=u1-new", port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol",
    _rename(_U1, "uid=u1-new", port=lambda c: c.net.garbage),
)
