"""The ``ldapexop`` CLI (Debian's ldap-utils, OpenLDAP 2.5: LDAP extended operations) run as
a pack runs it, a command on argv, against a real OpenLDAP ``slapd`` (Debian's, back_mdb,
with ACLs, no TLS, no dynamic-objects overlay) started by the setup: "Who am I?", cancel,
refresh and the Password Modify operation (RFC 3062, its request value BER-encoded by the
case and passed base64 as ``oid::data``). Nothing is faked but the transport failures. The
failure is the exit status and the ``ldap_bind: ...`` / ``ldap_parse_result: ...`` lines the
tool writes."""

from __future__ import annotations

import base64
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

PASSWD_MODIFY = "1.3.6.1.4.1.4203.1.11.1"


def _start(stack: Any, work: Any) -> Slapd:
    require("ldapexop")
    return slapd(stack, work)


FAM = family(
    "ldapexop",
    "the ldapexop CLI against OpenLDAP slapd (Debian), real",
    served(_start),
    half="heldout17",
)


def _passwd_modify(user: str = "", old: str = "", new: str = "") -> str:
    """``oid::base64`` of a PasswdModifyRequestValue: SEQUENCE of [0] user, [1] old, [2] new."""

    def tlv(tag: int, value: bytes) -> bytes:
        assert len(value) < 128
        return bytes([tag, len(value)]) + value

    body = b"".join(tlv(t, v.encode()) for t, v in ((0x80, user), (0x81, old), (0x82, new)) if v)
    return f"{PASSWD_MODIFY}::{base64.b64encode(tlv(0x30, body)).decode()}"


def _exop(
    *op: str,
    bind: str | None = USER_DN,
    password: str = USER_PW,
    host: str = LOOPBACK,
    port: Any = None,
    timeout: float = 10.0,
) -> Any:
    def run(c: Ctx) -> None:
        p = port(c) if port is not None else c.server.port
        argv = ["ldapexop", "-H", f"ldap://{host}:{p}", "-o", "nettimeout=2", "-x"]
        if bind is not None:
            argv += ["-D", bind, "-w", password]
        cli(argv + list(op), timeout=timeout)

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "the bind before the operation is refused: invalid credentials (49)",
    _exop("whoami", password="not-alices-password"),
)
FAM.add(
    "anonymous_password_change",
    AUTH,
    "Password Modify with no bind: only authenticated users may change passwords (8)",
    _exop(PASSWD_MODIFY, bind=None),
)
FAM.add(
    "change_other_users_password",
    AUTH,
    "alice sets u1's password: the userPassword ACL gives her no write there (50)",
    _exop(_passwd_modify(f"uid=u1,ou=people,{BASE_DN}", new="new-secret-1")),
)
FAM.add(
    "old_password_mismatch",
    AUTH | INT,
    "Password Modify with an old password that is not hers: unwilling to verify old password (53)",
    _exop(_passwd_modify(old="not-the-old-one", new="new-secret-1")),
)
FAM.add(
    "password_change_missing_entry",
    NF,
    "the admin sets the password of an entry that does not exist: no such object (32)",
    _exop(
        _passwd_modify(f"uid=ghost,ou=people,{BASE_DN}", new="new-secret-1"),
        bind=ADMIN_DN,
        password=ADMIN_PW,
    ),
)
FAM.add(
    "malformed_request_value",
    INT,
    "the pack sends a Password Modify value that is not BER: protocol error (2)",
    _exop(f"{PASSWD_MODIFY}::{base64.b64encode(b'not ber').decode()}"),
)
FAM.add(
    "cancel_unknown_operation",
    NF,
    "cancel of a message id the server has no operation for: no operation to cancel (119)",
    _exop("cancel", "5"),
)
FAM.add(
    "refresh_unsupported",
    INT,
    "refresh of a dynamic entry: this slapd has no dynamic objects, unsupported extended operation",
    _exop("refresh", USER_DN, "60"),
)
FAM.add(
    "unknown_oid",
    INT,
    "the pack sends an extended operation OID slapd does not know: protocol error (2)",
    _exop("1.2.3.4.5.6.7"),
)
FAM.add(
    "critical_control_unavailable",
    INT,
    "a critical no-op control on whoami: critical extension is unavailable (12)",
    _exop("-e", "!noop", "whoami"),
)
FAM.add(
    "bad_dn_syntax",
    INT,
    "the pack binds with a name that is not a DN: invalid DN syntax (34)",
    _exop("whoami", bind="alice at example"),
)
FAM.add(
    "bad_cancel_id",
    INT,
    "the pack passes a cancel id that is not a number: invalid cancelid, usage",
    _exop("cancel", "last"),
)
FAM.add("refused", NET, "nothing listens", _exop("whoami", port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve (.invalid)",
    _exop("whoami", host=UNRESOLVABLE, port=lambda c: 389),
)
FAM.add(
    "silent",
    TO,
    "server never answers the bind: the pack's own deadline expires",
    _exop("whoami", port=lambda c: c.net.silent, timeout=2.5),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not LDAP",
    _exop("whoami", port=lambda c: c.net.garbage),
)
