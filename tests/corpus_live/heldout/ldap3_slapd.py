"""ldap3 against a real OpenLDAP slapd (Debian's slapd) on loopback."""

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
    family,
    served,
)
from corpus_live.servers import ADMIN_DN, ADMIN_PW, BASE_DN, USER_DN, USER_PW, Slapd, slapd

Ctx = Served[Slapd]


FAM = family("ldap3", "OpenLDAP 2.5 slapd (Debian slapd), real", served(slapd), half="heldout")


def _conn(
    ctx: Ctx,
    user: str | None = USER_DN,
    password: str | None = USER_PW,
    *,
    port: int | None = None,
    host: str = LOOPBACK,
    **kw: Any,
) -> Any:
    import ldap3

    server = ldap3.Server(
        host, port=port or ctx.server.port, connect_timeout=1, get_info=ldap3.NONE
    )
    return ldap3.Connection(
        server,
        user=user,
        password=password,
        auto_bind=True,
        raise_exceptions=True,
        receive_timeout=1,
        **kw,
    )


def _do(op: Any, user: str | None = USER_DN, password: str | None = USER_PW) -> Any:
    def run(ctx: Ctx) -> Any:
        conn = _conn(ctx, user, password)
        try:
            return op(conn)
        finally:
            conn.unbind()

    return run


FAM.add("bad_password", AUTH, "result 49 invalidCredentials", lambda c: _conn(c, password="nope"))
FAM.add(
    "unknown_dn",
    AUTH,
    "result 49 for a DN that does not exist",
    lambda c: _conn(c, user=f"uid=ghost,ou=people,{BASE_DN}", password="x"),
)
FAM.add("refused", NET, "nothing listens", lambda c: _conn(c, port=c.net.closed))
FAM.add("dns", NET, "host does not resolve", lambda c: _conn(c, host=UNRESOLVABLE, port=389))
FAM.add("silent", TO, "server never answers the bind", lambda c: _conn(c, port=c.net.silent))
FAM.add("dropped", NET, "closed at once", lambda c: _conn(c, port=c.net.close_now))
FAM.add(
    "no_such_object",
    NF,
    "result 32 noSuchObject (search base missing)",
    _do(lambda conn: conn.search(f"ou=ghost,{BASE_DN}", "(objectClass=*)")),
)
FAM.add(
    "modify_missing",
    NF,
    "result 32 on modify of a missing entry",
    _do(
        lambda conn: conn.modify(
            f"uid=ghost,ou=people,{BASE_DN}", {"sn": [("MODIFY_REPLACE", ["x"])]}
        ),
        ADMIN_DN,
        ADMIN_PW,
    ),
)
FAM.add(
    "already_exists",
    EXISTS,
    "result 68 entryAlreadyExists",
    _do(
        lambda conn: conn.add(USER_DN, ["inetOrgPerson"], {"cn": "Alice", "sn": "A"}),
        ADMIN_DN,
        ADMIN_PW,
    ),
)
FAM.add(
    "insufficient_access",
    AUTH,
    "result 50 insufficientAccessRights (write as a reader)",
    _do(
        lambda conn: conn.add(
            f"uid=new,ou=people,{BASE_DN}", ["inetOrgPerson"], {"cn": "N", "sn": "N"}
        )
    ),
)
FAM.add(
    "bad_filter",
    INT,
    "a malformed filter: the pack's bug",
    _do(lambda conn: conn.search(BASE_DN, "(objectClass=*")),
)
FAM.add(
    "undefined_attr",
    INT,
    "result 17 undefinedAttributeType",
    _do(
        lambda conn: conn.add(
            f"uid=x,ou=people,{BASE_DN}",
            ["inetOrgPerson"],
            {"cn": "X", "sn": "X", "ghostAttr": "1"},
        ),
        ADMIN_DN,
        ADMIN_PW,
    ),
)
FAM.add(
    "schema_violation",
    INT,
    "result 65 objectClassViolation",
    _do(
        lambda conn: conn.add(f"uid=y,ou=people,{BASE_DN}", ["inetOrgPerson"], {"cn": "Y"}),
        ADMIN_DN,
        ADMIN_PW,
    ),
)
FAM.add(
    "not_allowed_on_nonleaf",
    INT,
    "result 66 notAllowedOnNonLeaf",
    _do(lambda conn: conn.delete(f"ou=people,{BASE_DN}"), ADMIN_DN, ADMIN_PW),
)
FAM.add(
    "anonymous_write",
    AUTH,
    "result 50 or 8 strongerAuthRequired: an anonymous write",
    _do(lambda conn: conn.delete(USER_DN), None, None),
)
