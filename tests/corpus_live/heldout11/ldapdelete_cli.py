"""OpenLDAP's ``ldapdelete`` CLI (Debian's ``ldap-utils``) run as a pack runs it (simple bind,
``-x``, the DNs on argv or in a file, ``-o nettimeout=1``, a subprocess deadline) against a real
OpenLDAP ``slapd`` (Debian's ``slapd``, an MDB database with access rules: the admin writes
everything, users write only their own entry, anonymous reads). The failure is the exit status
and ``ldap_bind: ...`` / ``ldap_delete: ...`` on stderr with the server's result code.
Nothing is faked."""

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
    require("ldapdelete")
    return slapd(stack, work)


FAM = family(
    "ldapdelete",
    "the ldapdelete CLI against OpenLDAP slapd (Debian), real",
    served(_start),
    half="heldout11",
)

_ADMIN = (ADMIN_DN, ADMIN_PW)
_ALICE = (USER_DN, USER_PW)


def _delete(
    *args: str,
    bind: tuple[str, str] | None = _ADMIN,
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    deadline: float = 10.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        who = ["-D", bind[0], "-w", bind[1]] if bind else []
        argv = ["ldapdelete", "-x", "-H", f"ldap://{host}:{p}", "-o", "nettimeout=1", *who]
        run_cli([*argv, *args], timeout=deadline)

    return run


_U1 = f"uid=u1,ou=people,{BASE_DN}"

FAM.add(
    "wrong_password",
    AUTH,
    "bind: Invalid credentials (49), the admin's password is wrong",
    _delete(_U1, bind=(ADMIN_DN, "not-it")),
)
FAM.add(
    "unknown_bind_dn",
    AUTH,
    "bind: Invalid credentials (49), no such entry to bind as",
    _delete(_U1, bind=(f"uid=ghost,ou=people,{BASE_DN}", "ghost-pw")),
)
FAM.add(
    "no_such_object",
    NF,
    "delete: No such object (32), the entry is not there",
    _delete(f"uid=nobody,ou=people,{BASE_DN}"),
)
FAM.add(
    "missing_parent",
    NF,
    "delete: No such object (32), not even its parent exists",
    _delete(f"uid=x,ou=robots,{BASE_DN}"),
)
FAM.add(
    "non_leaf",
    INT,
    "delete: Operation not allowed on non-leaf (66), ou=people has children",
    _delete(f"ou=people,{BASE_DN}"),
)
FAM.add(
    "insufficient_access",
    AUTH,
    "delete: Insufficient access (50), alice may not delete another user",
    _delete(_U1, bind=_ALICE),
)
FAM.add(
    "anonymous",
    AUTH,
    "delete: Strong(er) authentication required (8), an anonymous session may only read",
    _delete(_U1, bind=None),
)
FAM.add(
    "invalid_dn",
    INT,
    "delete: Invalid DN syntax (34), the pack's DN is not a DN",
    _delete("this is not a dn"),
)
FAM.add(
    "missing_file",
    INT | NF,
    "-f names a file of DNs that does not exist",
    _delete("-f", "/nonexistent/corpus44/dns.txt"),
)
FAM.add(
    "starttls_unavailable",
    NET | INT,
    "-ZZ demands StartTLS, the server has no TLS configured",
    _delete("-ZZ", _U1),
)
FAM.add("refused", NET, "nothing listens", _delete(_U1, port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _delete(_U1, host=UNRESOLVABLE, port=lambda c: 389),
)
FAM.add(
    "silent",
    TO,
    "the server never answers the bind: the pack's 2 s subprocess deadline expires",
    _delete(_U1, port=lambda c: c.net.silent, deadline=2.0),
)
FAM.add(
    "dropped",
    NET,
    "the server end closes the connection at once",
    _delete(_U1, port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not LDAP",
    _delete(_U1, port=lambda c: c.net.garbage),
)
