"""The ``ldappasswd`` CLI (Debian's ldap-utils, OpenLDAP 2.5) run as a pack runs it, a command
on argv, against a real OpenLDAP ``slapd`` (Debian's, back_mdb, with ACLs) started by the setup.
The failure is the exit status and the ``Result: ...`` / ``ldap_bind: ...`` lines it writes."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Served,
    cli,
    family,
    require,
    served,
)
from corpus_live.servers import ADMIN_DN, ADMIN_PW, BASE_DN, USER_DN, USER_PW, Slapd, slapd

Ctx = Served[Slapd]


def _start(stack: Any, work: Any) -> Slapd:
    require("ldappasswd")
    return slapd(stack, work)


FAM = family(
    "ldappasswd",
    "the ldappasswd CLI against OpenLDAP slapd (Debian), real",
    served(_start),
    half="heldout15",
)


def _pw(
    target: str,
    *extra: str,
    bind: str | None = ADMIN_DN,
    password: str = ADMIN_PW,
    host: str = LOOPBACK,
    port: Any = None,
    timeout: float = 10.0,
) -> Any:
    def run(c: Ctx) -> None:
        p = port(c) if port is not None else c.server.port
        argv = ["ldappasswd", "-x", "-H", f"ldap://{host}:{p}", "-o", "nettimeout=2"]
        if bind is not None:
            argv += ["-D", bind, "-w", password]
        cli(argv + list(extra) + [target], timeout=timeout)

    return run


FAM.add(
    "wrong_admin_password",
    AUTH,
    "bind refused: invalid credentials for the admin DN",
    _pw(USER_DN, "-s", "n3w-pw", password="not-it"),
)
FAM.add(
    "unknown_bind_dn",
    AUTH,
    "bind as a DN that does not exist: invalid credentials",
    _pw(USER_DN, "-s", "n3w-pw", bind=f"uid=mallory,ou=people,{BASE_DN}", password="x"),
)
FAM.add(
    "other_users_password",
    AUTH,
    "alice may not change another user's password: insufficient access",
    _pw(f"uid=u1,ou=people,{BASE_DN}", "-s", "n3w-pw", bind=USER_DN, password=USER_PW),
)
FAM.add(
    "anonymous_change",
    AUTH,
    "no bind: slapd refuses a password change from an anonymous session",
    _pw(USER_DN, "-s", "n3w-pw", bind=None),
)
FAM.add(
    "wrong_old_password",
    AUTH | INT,
    "alice gives an old password: slapd is unwilling to verify it",
    _pw(USER_DN, "-a", "not-the-old-one", "-s", "n3w-pw", bind=USER_DN, password=USER_PW),
)
FAM.add(
    "no_such_entry",
    NF,
    "the admin sets the password of an entry that does not exist",
    _pw(f"uid=ghost,ou=people,{BASE_DN}", "-s", "n3w-pw"),
)
FAM.add(
    "no_such_suffix",
    NF | INT,
    "target DN under a suffix this server does not hold (other error)",
    _pw("uid=alice,ou=people,dc=other,dc=test", "-s", "n3w-pw"),
)
FAM.add(
    "bad_dn_syntax",
    INT,
    "the pack passes a target that is not a DN: invalid DN syntax",
    _pw("alice at example", "-s", "n3w-pw"),
)
FAM.add(
    "refused",
    NET,
    "nothing listens",
    _pw(USER_DN, "-s", "n3w-pw", port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _pw(USER_DN, "-s", "n3w-pw", host=UNRESOLVABLE, port=lambda c: 389),
)
FAM.add(
    "silent",
    TO,
    "server never answers: the pack's own deadline expires",
    _pw(USER_DN, "-s", "n3w-pw", port=lambda c: c.net.silent, timeout=2.5),
)
FAM.add(
    "dropped",
    NET,
    "the peer closes at once",
    _pw(USER_DN, "-s", "n3w-pw", port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not LDAP",
    _pw(USER_DN, "-s", "n3w-pw", port=lambda c: c.net.garbage),
)
