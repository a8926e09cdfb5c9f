"""The ``ldapwhoami`` CLI (Debian's ldap-utils, OpenLDAP 2.5) run as a pack runs it, a command
on argv, against a real OpenLDAP ``slapd`` (Debian's, back_mdb, with ACLs, no TLS, no SASL
secrets) started by the setup: a bind (simple or SASL) then the "Who am I?"
extended operation. Nothing is faked. The failure is the exit status and the
``ldap_bind: ...`` / ``ldap_start_tls: ...`` / ``Result: ...`` lines the tool writes."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
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
    require("ldapwhoami")
    return slapd(stack, work)


FAM = family(
    "ldapwhoami",
    "the ldapwhoami CLI against OpenLDAP slapd (Debian), real",
    served(_start),
    half="heldout16",
)


def _who(
    *extra: str,
    bind: str | None = USER_DN,
    password: str = USER_PW,
    simple: bool = True,
    host: str = LOOPBACK,
    port: Any = None,
    timeout: float = 10.0,
) -> Any:
    def run(c: Ctx) -> None:
        p = port(c) if port is not None else c.server.port
        argv = ["ldapwhoami", "-H", f"ldap://{host}:{p}", "-o", "nettimeout=2"]
        if simple:
            argv.append("-x")
        if bind is not None:
            argv += ["-D", bind, "-w", password]
        cli(argv + list(extra), timeout=timeout)

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "simple bind refused: invalid credentials (49)",
    _who(password="not-alices-password"),
)
FAM.add(
    "unknown_bind_dn",
    AUTH,
    "bind as a DN that does not exist: invalid credentials (49)",
    _who(bind=f"uid=mallory,ou=people,{BASE_DN}", password="whatever"),
)
FAM.add(
    "no_password_attribute",
    AUTH,
    "bind as an entry that has no userPassword: invalid credentials (49)",
    _who(bind=f"uid=u2,ou=people,{BASE_DN}", password="guess"),
)
FAM.add(
    "unauthenticated_bind",
    AUTH | INT,
    "a DN with an empty password: slapd is unwilling to perform an unauthenticated bind",
    _who(bind=ADMIN_DN, password=""),
)
FAM.add(
    "bad_dn_syntax",
    INT,
    "the pack passes a bind name that is not a DN: invalid DN syntax (34)",
    _who(bind="alice at example", password=USER_PW),
)
FAM.add(
    "sasl_no_secret",
    AUTH,
    "SASL SCRAM-SHA-256 bind for a user with no SASL secret in the directory: invalid credentials (49)",
    _who("-Y", "SCRAM-SHA-256", "-U", "alice", "-w", USER_PW, bind=None, simple=False),
)
FAM.add(
    "starttls_required",
    NET | INT,
    "-ZZ demands StartTLS; this slapd has no TLS: the extended operation is refused",
    _who("-ZZ"),
)
FAM.add(
    "proxy_authz_denied",
    AUTH,
    "a critical proxied-authorization control as another user: slapd's authz-policy says no",
    _who("-e", f"!authzid=dn:uid=u1,ou=people,{BASE_DN}"),
)
FAM.add(
    "unknown_option",
    INT,
    "the pack passes -P, an option ldapwhoami does not have: usage error",
    _who("-P", "2", bind=ADMIN_DN, password=ADMIN_PW),
)
FAM.add("refused", NET, "nothing listens", _who(port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve (.invalid)",
    _who(host=UNRESOLVABLE, port=lambda c: 389),
)
FAM.add(
    "silent",
    TO,
    "server never answers: the pack's own deadline expires",
    _who(port=lambda c: c.net.silent, timeout=2.5),
)
FAM.add("dropped", NET, "the peer closes at once", _who(port=lambda c: c.net.close_now))
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not LDAP",
    _who(port=lambda c: c.net.garbage),
)
