"""mailjet-rest (Mailjet's Python client, over requests) against a fake Mailjet API on
127.0.0.1 (the client allows a loopback ``api_url`` and refuses any other host that is not
``mailjet.com``). Errors are Mailjet's documented bodies: the REST API's ``{"ErrorInfo",
"ErrorMessage", "StatusCode"}`` (401 key failure, 404 ``Object not found``, 400 ``MJ18`` for a
contact that exists), and the Send API v3.1's ``{"Messages": [{"Status": "error", "Errors":
[...]}]}`` with ``mj-`` error codes. The client raises ``MailjetAuthError`` (401/403),
``DoesNotExistError`` (404), ``ValidationError`` (400), ``ApiRateLimitError`` (429), and a plain
``ApiError`` worded as a network error for 5xx; ``TimeoutError`` and ``CriticalApiError``
for transport failures. Its retries are mounted for https only, so none run here."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    RL,
    TO,
    UNRESOLVABLE,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("mailjet-rest", "fake Mailjet API", http_setup, half="heldout5")

_AUTH = ("PLANTEDmjpublic0000000000000000", "PLANTEDmjprivate000000000000000")


def _client(url: str, version: str) -> Any:
    from mailjet_rest import Client

    return Client(auth=_AUTH, version=version, api_url=url, timeout=1)


def _send(url: str) -> Any:
    return _client(url, "v3.1").send.create(
        data={
            "Messages": [
                {
                    "From": {"Email": "billing@example.com", "Name": "Billing"},
                    "To": [{"Email": "customer@example.org"}],
                    "Subject": "Your invoice",
                    "TextPart": "Invoice attached.",
                }
            ]
        }
    )


def _get_contact(url: str) -> Any:
    return _client(url, "v3").contact.get(id="customer@example.org")


def _add_contact(url: str) -> Any:
    return _client(url, "v3").contact.create(data={"Email": "customer@example.org"})


def _rest(message: str, status: int, info: str = "") -> dict[str, Any]:
    return {"ErrorInfo": info, "ErrorMessage": message, "StatusCode": status}


_KEY_FAILURE = (
    "API key authentication/authorization failure. You may be unauthorized to access the API "
    "or your API key may be expired. Visit API keys management section to check your keys."
)


def _send_error(code: str, status: int, message: str, related: list[str]) -> dict[str, Any]:
    return {
        "Messages": [
            {
                "Status": "error",
                "Errors": [
                    {
                        "ErrorIdentifier": "f987008f-251a-4dff-8ffc-40f1583ad7bc",
                        "ErrorCode": code,
                        "StatusCode": status,
                        "ErrorMessage": message,
                        "ErrorRelatedTo": related,
                    }
                ],
            }
        ]
    }


SEND: list[Row] = [
    (
        "bad_key",
        401,
        {
            "ErrorIdentifier": "3a2b1c0d-4e5f-4061-8293-a4b5c6d7e8f9",
            "StatusCode": 401,
            "ErrorMessage": _KEY_FAILURE,
        },
        {},
        AUTH,
        None,
        "the API key pair is wrong or expired",
    ),
    (
        "bad_payload",
        400,
        _send_error("mj-0003", 400, 'Missing mandatory property "To".', ["To"]),
        {},
        INT,
        None,
        "the message lacks a mandatory field (the pack's input)",
    ),
    (
        "rate_limited",
        429,
        _rest("Too many requests", 429),
        {},
        RL,
        None,
        "throttled: Mailjet sends no delay",
    ),
    (
        "server_error",
        500,
        _rest("Internal Server Error", 500),
        {},
        NET,
        None,
        "Mailjet failed (the client calls it a network error)",
    ),
    (
        "unavailable",
        503,
        "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this "
        "request.\n</body></html>\n",
        {"Content-Type": "text/html", "Cache-Control": "no-cache"},
        NET,
        None,
        "the load balancer has no backend",
    ),
]
http_cases(FAM, _send, SEND, transport=False)
http_cases(
    FAM,
    _get_contact,
    [
        ("no_contact", 404, _rest("Object not found", 404), {}, NF, None, "no such contact"),
        (
            "forbidden",
            403,
            _rest(_KEY_FAILURE, 403),
            {},
            AUTH,
            None,
            "the sub-account key may not read contacts",
        ),
    ],
    transport=False,
)
http_cases(
    FAM,
    _add_contact,
    [
        (
            "contact_exists",
            400,
            _rest(
                'MJ18 A Contact resource with value "customer@example.org" for Email already '
                "exists.",
                400,
            ),
            {},
            EXISTS | INT,
            None,
            "the contact exists (Mailjet answers 400 MJ18)",
        )
    ],
    transport=False,
)
FAM.add(
    "refused",
    NET,
    "nothing listens",
    lambda c: _send(f"http://{LOOPBACK}:{c.net.closed}"),
)
FAM.add(
    "silent",
    TO,
    "server never answers",
    lambda c: _send(f"http://{LOOPBACK}:{c.net.silent}"),
)
FAM.add(
    "dropped",
    NET,
    "closed at once",
    lambda c: _send(f"http://{LOOPBACK}:{c.net.close_now}"),
)
FAM.add(
    "host_refused",
    INT,
    "the client refuses an api_url that is not Mailjet's nor loopback, before any lookup",
    lambda c: _send(f"http://{UNRESOLVABLE}"),
)
