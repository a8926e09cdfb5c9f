"""linode-api4 (Akamai's official Python SDK for the Linode API v4, over requests) against a
fake Linode API on 127.0.0.1 (``base_url=``; the pack turns the SDK's retries off, else it
retries 408, 429 and 502 five times). Errors are Linode's ``{"errors": [{"reason",
"field"?}]}`` bodies; a throttled token is told the wait in ``Retry-After``. The SDK raises
``linode_api4.ApiError`` (status, the reasons and the response attached) for every status,
and requests' exceptions from the transport. It sets no timeout of its own (no case against
a silent server)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    UNRESOLVABLE,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("linode-api4", "fake Linode API v4", http_setup, half="heldout8")

_TOKEN = "PLANTED0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d"


def _client(url: str) -> Any:
    from linode_api4 import LinodeClient

    return LinodeClient(_TOKEN, base_url=url + "/v4", retry=False)


def _get_instance(url: str) -> Any:
    from linode_api4 import Instance

    instance = _client(url).load(Instance, 48213376)
    return instance.label


def _create_instance(url: str) -> Any:
    return _client(url).linode.instance_create(
        "g6-standard-2", "us-east", image="linode/debian12", label="web-1", root_pass="Pl4nted!pw"
    )


def _errs(reason: str, field: str | None = None) -> dict[str, Any]:
    err: dict[str, Any] = {"reason": reason}
    if field is not None:
        err["field"] = field
    return {"errors": [err]}


GET: list[Row] = [
    (
        "invalid_token",
        401,
        _errs("Invalid Token"),
        {},
        AUTH,
        None,
        "the token is unknown or expired",
    ),
    (
        "scope_missing",
        401,
        _errs("Your OAuth token is not authorized to use this endpoint."),
        {},
        AUTH,
        None,
        "the token's scopes do not cover Linodes",
    ),
    ("not_found", 404, _errs("Not found"), {}, NF, None, "no Linode with that id"),
    (
        "maintenance",
        503,
        _errs("Service Unavailable"),
        {},
        NET,
        None,
        "the API is down for maintenance",
    ),
    (
        "internal",
        500,
        _errs("Please try again later"),
        {},
        NET,
        None,
        "Linode's API failed",
    ),
]
http_cases(FAM, _get_instance, GET, transport=False)

CREATE: list[Row] = [
    (
        "no_grant",
        403,
        _errs("Unauthorized"),
        {},
        AUTH,
        None,
        "a restricted user without the grant to add Linodes",
    ),
    (
        "label_taken",
        400,
        _errs("Label must be unique among your linodes", "label"),
        {},
        EXISTS | INT,
        None,
        "a Linode with that label exists",
    ),
    (
        "bad_region",
        400,
        _errs("region is not valid", "region"),
        {},
        INT,
        None,
        "the region does not exist (the pack's input)",
    ),
    (
        "account_limit",
        400,
        _errs("Account Limit reached. Please open a support ticket."),
        {},
        QUOTA | INT,
        None,
        "the account's limit of Linodes",
    ),
    (
        "rate_limited",
        429,
        _errs("Too Many Requests"),
        {"Retry-After": "4"},
        RL,
        4.0,
        "the token's limit on instance creation, the wait in Retry-After",
    ),
]
http_cases(FAM, _create_instance, CREATE, transport=False)

FAM.add(
    "refused",
    NET,
    "nothing listens",
    lambda c: _get_instance(f"http://{LOOPBACK}:{c.net.closed}"),
)
FAM.add("dns", NET, "host does not resolve", lambda c: _get_instance(f"http://{UNRESOLVABLE}"))
FAM.add(
    "dropped",
    NET,
    "closed at once",
    lambda c: _get_instance(f"http://{LOOPBACK}:{c.net.close_now}"),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: _get_instance(f"http://{LOOPBACK}:{c.net.garbage}"),
)


def _no_token(ctx: Http) -> Any:
    from linode_api4 import LinodeClient

    return LinodeClient(None, base_url=ctx.http.url + "/v4", retry=False).regions()


FAM.add(
    "no_token",
    AUTH | INT,
    "no token configured: the SDK refuses before sending",
    _no_token,
)
