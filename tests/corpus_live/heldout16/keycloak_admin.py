"""python-keycloak (requests underneath) against a fake Keycloak answering its real error
bodies: the OpenID Connect token endpoint's ``{error, error_description}`` (OAuth 2.0 error
words, Keycloak's descriptions) and the Admin REST API's ``{error, error_description}`` and
``{errorMessage}`` / ``{field, errorMessage, params}`` bodies, with Keycloak's statuses; plus
the library's own timeout and the transport failures. The library's retries are off."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("python-keycloak", "fake Keycloak", http_setup, half="heldout16")

_HINT = "For more on this error consult the server log."


def _login(url: str) -> Any:
    from keycloak import KeycloakOpenID

    oid = KeycloakOpenID(
        server_url=f"{url}/",
        realm_name="acme",
        client_id="billing-portal",
        client_secret_key="PLANTED-keycloak-client-secret",
        timeout=1,
        max_retries=0,
    )
    return oid.token("ada", "correct horse battery staple")


def _oauth(error: str, description: str) -> Any:
    return {"error": error, "error_description": description}


ROWS: list[Row] = [
    (
        "bad_password",
        401,
        _oauth("invalid_grant", "Invalid user credentials"),
        {},
        AUTH,
        None,
        "the user's password is wrong",
    ),
    (
        "bad_client_secret",
        401,
        _oauth("unauthorized_client", "Invalid client or Invalid client credentials"),
        {},
        AUTH,
        None,
        "the client secret is wrong",
    ),
    (
        "account_disabled",
        400,
        _oauth("invalid_grant", "Account disabled"),
        {},
        AUTH,
        None,
        "the user account is disabled",
    ),
    (
        "no_direct_grant",
        400,
        _oauth("unauthorized_client", "Client not allowed for direct access grants"),
        {},
        AUTH | INT,
        None,
        "the client may not use the password grant",
    ),
    (
        "unknown_realm",
        404,
        _oauth("Realm does not exist", _HINT),
        {},
        NF,
        None,
        "the realm does not exist",
    ),
    (
        "internal",
        500,
        _oauth("unknown_error", _HINT),
        {},
        NET,
        None,
        "Keycloak failed",
    ),
    (
        "unavailable",
        503,
        "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle "
        "this request.\n</body></html>\n",
        {"Content-Type": "text/html", "Cache-Control": "no-cache"},
        NET,
        None,
        "the load balancer has no Keycloak node up",
    ),
]
http_cases(FAM, _login, ROWS)


def _admin(url: str) -> Any:
    from keycloak import KeycloakAdmin, KeycloakOpenIDConnection

    conn = KeycloakOpenIDConnection(
        server_url=f"{url}/",
        realm_name="acme",
        client_id="admin-cli",
        token={
            "access_token": "eyJhbGciOiJSUzI1NiJ9.PLANTED.keycloak",
            "expires_in": 300,
            "refresh_expires_in": 1800,
            "refresh_token": "eyJhbGciOiJIUzI1NiJ9.PLANTED.refresh",
            "token_type": "Bearer",
        },
        timeout=1,
        max_retries=0,
    )
    return KeycloakAdmin(connection=conn)


def _create_user(url: str) -> Any:
    return _admin(url).create_user(
        {
            "username": "ada",
            "email": "ada@acme.example",
            "enabled": True,
            "credentials": [{"type": "password", "value": "short", "temporary": False}],
        }
    )


def _admin_case(
    id: str, status: int, body: Any, expect: frozenset[str], why: str, *, get: bool = False
) -> None:
    def run(ctx: Http) -> Any:
        ctx.http.set(status, body)
        if get:
            return _admin(ctx.http.url).get_user("5b0d3a4e-7f2c-4c1e-9a77-2f1e0c8d9b31")
        return _create_user(ctx.http.url)

    FAM.add(id, expect, f"HTTP {status}: {why}", run)


_admin_case(
    "user_exists",
    409,
    {"errorMessage": "User exists with same username"},
    EXISTS,
    "a user with this username already exists",
)
_admin_case(
    "password_policy",
    400,
    _oauth("invalidPasswordMinLengthMessage", "Invalid password: minimum length 12."),
    INT,
    "the password breaks the realm's policy (the caller's input)",
)
_admin_case(
    "token_expired",
    401,
    {"error": "HTTP 401 Unauthorized"},
    AUTH,
    "the admin access token has expired",
)
_admin_case(
    "missing_role",
    403,
    _oauth("HTTP 403 Forbidden", _HINT),
    AUTH,
    "the admin account lacks the manage-users role",
)
_admin_case(
    "user_not_found",
    404,
    _oauth("User not found", _HINT),
    NF,
    "the user does not exist",
    get=True,
)
