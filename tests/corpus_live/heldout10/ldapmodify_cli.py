"""OpenLDAP's ``ldapmodify`` CLI (Debian's ``ldap-utils``) run as a pack runs it (simple bind,
``-x``, the LDIF on standard input, ``-o nettimeout=1``, a subprocess deadline) against a real
OpenLDAP ``slapd`` (Debian's ``slapd``, an MDB database with access rules: the admin writes
everything, users write only their own entry, anonymous reads). The failure is the exit status
and ``ldap_bind: ...`` / ``ldap_add: ...`` / ``ldap_modify: ...`` on stderr with the server's
result code; the tool's own LDIF parser fails the same way before any write. Nothing is
faked."""

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
    require("ldapmodify")
    return slapd(stack, work)


FAM = family(
    "ldapmodify",
    "the ldapmodify CLI against OpenLDAP slapd (Debian), real",
    served(_start),
    half="heldout10",
)

_ADMIN = (ADMIN_DN, ADMIN_PW)
_ALICE = (USER_DN, USER_PW)


def _modify(
    ldif: str,
    *,
    bind: tuple[str, str] | None = _ADMIN,
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    deadline: float = 10.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        who = ["-D", bind[0], "-w", bind[1]] if bind else []
        argv = ["ldapmodify", "-x", "-H", f"ldap://{host}:{p}", "-o", "nettimeout=1", *who]
        run_cli(argv, input=ldif.encode(), timeout=deadline)

    return run


def _entry(uid: str, parent: str = f"ou=people,{BASE_DN}", *, sn: bool = True) -> str:
    lines = [
        f"dn: uid={uid},{parent}",
        "changetype: add",
        "objectClass: inetOrgPerson",
        f"cn: {uid}",
        *([f"sn: {uid}"] if sn else []),
        f"uid: {uid}",
    ]
    return "\n".join(lines) + "\n"


def _mod(dn: str, attr: str = "description", value: str = "changed") -> str:
    return f"dn: {dn}\nchangetype: modify\nreplace: {attr}\n{attr}: {value}\n"


_U0 = f"uid=u0,ou=people,{BASE_DN}"

FAM.add(
    "wrong_password",
    AUTH,
    "simple bind as the admin with a wrong password: invalid credentials",
    _modify(_mod(_U0), bind=(ADMIN_DN, "nope")),
)
FAM.add(
    "unknown_bind_dn",
    AUTH,
    "simple bind as a DN that does not exist",
    _modify(_mod(_U0), bind=(f"uid=ghost,ou=people,{BASE_DN}", "x")),
)
FAM.add(
    "anonymous_write",
    AUTH,
    "an anonymous session modifies an entry the rules let it only read",
    _modify(_mod(_U0), bind=None),
)
FAM.add(
    "user_writes_other",
    AUTH,
    "alice modifies another user's entry: insufficient access",
    _modify(_mod(_U0), bind=_ALICE),
)
FAM.add(
    "add_exists",
    EXISTS,
    "adding an entry whose DN exists",
    _modify(_entry("u1")),
)
FAM.add(
    "modify_missing",
    NF,
    "modifying an entry that does not exist: no such object",
    _modify(_mod(f"uid=ghost,ou=people,{BASE_DN}")),
)
FAM.add(
    "add_missing_parent",
    NF,
    "adding an entry under a parent that does not exist",
    _modify(_entry("newbie", f"ou=nowhere,{BASE_DN}")),
)
FAM.add(
    "object_class_violation",
    INT,
    "adding an inetOrgPerson without its required sn",
    _modify(_entry("nosn", sn=False)),
)
FAM.add(
    "undefined_attribute",
    INT,
    "replacing an attribute type the schema does not define",
    _modify(_mod(_U0, attr="favouriteColour", value="blue")),
)
FAM.add(
    "delete_non_leaf",
    INT,
    "deleting ou=people, which still has children",
    _modify(f"dn: ou=people,{BASE_DN}\nchangetype: delete\n"),
)
FAM.add(
    "invalid_dn",
    INT,
    "an LDIF record whose DN is not a valid DN",
    _modify("dn: this is not a dn\nchangetype: modify\nreplace: cn\ncn: x\n"),
)
FAM.add(
    "ldif_syntax",
    INT,
    "ldapmodify's own LDIF parser: an unknown changetype",
    _modify(f"dn: {_U0}\nchangetype: explode\n"),
)
FAM.add(
    "refused",
    NET,
    "nothing listens",
    _modify(_mod(_U0), port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _modify(_mod(_U0), host=UNRESOLVABLE, port=lambda c: 389),
)
FAM.add(
    "silent",
    TO,
    "the server accepts and never answers: the pack's 1.5 s subprocess deadline",
    _modify(_mod(_U0), port=lambda c: c.net.silent, deadline=1.5),
)
FAM.add(
    "dropped",
    NET,
    "the server closes the connection at once",
    _modify(_mod(_U0), port=lambda c: c.net.close_now),
)
