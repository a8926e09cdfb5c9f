"""braintree (Braintree's Python server SDK, XML over requests) against a fake Braintree
gateway on 127.0.0.1 (a custom ``Environment``): the SDK maps each status to an exception of
its own with no message (``AuthenticationError`` on 401, ``AuthorizationError`` 403,
``NotFoundError`` 404 with the id it looked for, ``RequestTimeoutError`` 408,
``UpgradeRequiredError`` 426, ``TooManyRequestsError`` 429, ``ServerError`` 500,
``ServiceUnavailableError`` 503 (Braintree's maintenance answer), ``GatewayTimeoutError`` 504,
``UnexpectedError`` otherwise), and with ``wrap_http_exceptions`` its own transport errors.
The bodies are what Braintree sends with them: empty or a bare XML error, never read."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from corpus_live.core import AUTH, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("braintree", "fake Braintree gateway", http_setup, half="heldout5")


def _gateway(url: str) -> Any:
    import braintree

    parts = urlsplit(url)
    env = braintree.Environment(
        "corpus", parts.hostname, str(parts.port or 80), "http://127.0.0.1:9", False, None
    )
    return braintree.BraintreeGateway(
        braintree.Configuration(
            environment=env,
            merchant_id="m4rch4ntplanted",
            public_key="PLANTEDpublic00",
            private_key="PLANTEDbraintreeprivatekey000000",
            timeout=1,
            wrap_http_exceptions=True,
        )
    )


def _find_customer(url: str) -> Any:
    return _gateway(url).customer.find("cus_4242")


def _void(url: str) -> Any:
    return _gateway(url).transaction.void("txn9qk2r")


_XML = '<?xml version="1.0" encoding="UTF-8"?>\n'

ROWS: list[Row] = [
    ("bad_keys", 401, "", {}, AUTH, None, "the public/private key pair is wrong"),
    (
        "no_permission",
        403,
        "",
        {},
        AUTH,
        None,
        "the API user's role may not read customers",
    ),
    ("no_customer", 404, "", {}, NF, None, "no customer with that id"),
    (
        "request_timeout",
        408,
        "",
        {},
        TO,
        None,
        "Braintree timed out reading the request",
    ),
    (
        "upgrade_required",
        426,
        "",
        {},
        INT,
        None,
        "the SDK's API version is no longer supported: retrying never helps",
    ),
    (
        "too_many_requests",
        429,
        _XML + "<api-error-response><message>Too Many Requests</message></api-error-response>\n",
        {},
        RL,
        None,
        "over the request threshold (no delay sent)",
    ),
    ("server_error", 500, "", {}, NET, None, "Braintree failed"),
    (
        "maintenance",
        503,
        "",
        {},
        NET,
        None,
        "Braintree is down for maintenance",
    ),
    ("gateway_timeout", 504, "", {}, TO | NET, None, "Braintree's gateway timed out"),
]
http_cases(FAM, _find_customer, ROWS, content_type="application/xml; charset=utf-8")
http_cases(
    FAM,
    _void,
    [("void_missing", 404, "", {}, NF, None, "voiding a transaction that does not exist")],
    content_type="application/xml; charset=utf-8",
    transport=False,
)
