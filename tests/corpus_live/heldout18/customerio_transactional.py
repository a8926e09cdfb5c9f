"""customerio (Customer.io's Python bindings, requests underneath): its ``APIClient`` sends
transactional email through the App API, against a fake Customer.io App API on 127.0.0.1
answering the errors Customer.io documents for ``/v1/send/email`` (``{"meta": {"error":
...}}``) with their statuses: an invalid App API key, an account or workspace not allowed
to send, an unknown transactional message, an unverified sender domain, missing fields, a
body over the size limit, the send rate limit, server errors and a proxy's page; plus the
client's own timeout and the transport failures. The client raises one
``CustomerIOException`` for everything (the status, URL, payload and body in its
message); it retries only over https, so these plain-http calls are tried once."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("customerio", "fake Customer.io App API", http_setup, half="heldout18")


def _send(url: str) -> Any:
    from customerio import APIClient, SendEmailRequest  # type: ignore[import-untyped]

    client = APIClient("PLANTEDappApiKey7f3e9c1a2b4d", url=url, timeout=1)
    request = SendEmailRequest(
        transactional_message_id="order_shipped",
        to="jo.bloggs@example.com",
        identifiers={"id": "cust-4127"},
        message_data={"order_id": "A-99812", "carrier": "DHL"},
    )
    return client.send_email(request)


def _m(error: str) -> dict[str, Any]:
    return {"meta": {"error": error}}


ROWS: list[Row] = [
    (
        "invalid_key",
        401,
        _m("Unauthorized request"),
        {},
        AUTH,
        None,
        "the App API key is wrong (or restricted to other IP addresses)",
    ),
    (
        "owner_unconfirmed",
        403,
        _m("Account owner's email address is not confirmed."),
        {},
        AUTH,
        None,
        "the account may not send until its owner confirms an address",
    ),
    (
        "not_approved",
        403,
        _m("Account is not yet approved for sending."),
        {},
        AUTH,
        None,
        "the account is not yet verified for sending",
    ),
    (
        "do_not_send",
        403,
        _m('Workspace is set to "Do Not Send."'),
        {},
        AUTH,
        None,
        "the workspace is configured not to send messages",
    ),
    (
        "message_not_found",
        400,
        _m('"transactional_message_id" not found.'),
        {},
        NF,
        None,
        "the transactional message template does not exist",
    ),
    (
        "domain_unverified",
        400,
        _m('"from" address domain has not been verified.'),
        {},
        AUTH | INT,
        None,
        "the sender domain is not verified for this workspace",
    ),
    (
        "missing_field",
        400,
        _m('Missing required field: "to".'),
        {},
        INT,
        None,
        "a required field is missing (the caller's input)",
    ),
    (
        "too_large",
        400,
        _m("Request entity must be JSON encoded and not exceed 2048 KB."),
        {},
        INT,
        None,
        "the request body is over the size limit (the caller's input)",
    ),
    (
        "rate_limited",
        429,
        _m("Too Many Requests"),
        {},
        RL,
        None,
        "more sends per second than the API allows, no delay given",
    ),
    (
        "internal",
        500,
        _m("Internal Server Error"),
        {},
        NET,
        None,
        "the API failed",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        "<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the load balancer reached no backend (an HTML page)",
    ),
]
http_cases(FAM, _send, ROWS)
