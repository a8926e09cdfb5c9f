"""mailchimp-transactional (Mandrill's Python SDK) against a fake Mandrill API 1.3, which
answers every error with HTTP 500 and ``{"status": "error", "code", "name", "message"}``: the
meaning is in ``name`` (``Invalid_Key``, ``Unknown_Template``, ``Unknown_Subaccount``,
``PaymentRequired``, ``ValidationError``, ``GeneralError``), never in the status. The SDK's ``ApiClientError`` has no message: only ``text`` (the decoded
body) and ``status_code``."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("mailchimp-transactional", "fake Mandrill API 1.3", http_setup, half="heldout4")


def _client(url: str) -> Any:
    import mailchimp_transactional as mt

    client = mt.Client("md-PLANTEDmandrillkey000")
    client.api_client.host = url + "/api/1.3"
    client.set_timeout(1)
    return client


def _send(url: str) -> Any:
    return _client(url).messages.send_template(
        {
            "template_name": "welcome-v2",
            "template_content": [],
            "message": {
                "to": [{"email": "ada@example.org"}],
                "subaccount": "eu-shop",
            },
        }
    )


def _e(code: int, name: str, message: str) -> dict[str, Any]:
    return {"status": "error", "code": code, "name": name, "message": message}


ROWS: list[Row] = [
    (
        "invalid_key",
        500,
        _e(-1, "Invalid_Key", "Invalid API key"),
        {},
        AUTH,
        None,
        "the API key is invalid (Mandrill answers 500)",
    ),
    (
        "unknown_template",
        500,
        _e(5, "Unknown_Template", 'No such template "welcome-v2"'),
        {},
        NF,
        None,
        "the template does not exist",
    ),
    (
        "unknown_subaccount",
        500,
        _e(12, "Unknown_Subaccount", "No subaccount exists with the id 'eu-shop'"),
        {},
        NF,
        None,
        "the subaccount does not exist",
    ),
    (
        "payment_required",
        500,
        _e(
            -30,
            "PaymentRequired",
            "The requested feature requires payment. Please add credits or a paid plan to send "
            "transactional email.",
        ),
        {},
        INT | AUTH,
        None,
        "the account has no paid plan: no retry helps",
    ),
    (
        "validation",
        500,
        _e(
            -2,
            "ValidationError",
            'Validation error: {"message":{"to":[{"email":"Please enter a valid email address"}]}}',
        ),
        {},
        INT,
        None,
        "a malformed recipient (the pack's input)",
    ),
    (
        "general",
        500,
        _e(
            -1,
            "GeneralError",
            "An unexpected error occurred processing the request. Mandrill "
            "developers have been notified.",
        ),
        {},
        NET | INT,
        None,
        "Mandrill failed on its side",
    ),
    (
        "throttled",
        429,
        "<html><body><h1>429 Too Many Requests</h1>You have sent too many requests in a given "
        "amount of time.</body></html>",
        {"Retry-After": "60", "Content-Type": "text/html"},
        RL,
        None,
        "the front's rate limit (the SDK keeps no headers: the delay is lost)",
    ),
    (
        "gateway",
        502,
        "<html><body><h1>502 Bad Gateway</h1></body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the front's gateway error page",
    ),
]
http_cases(FAM, _send, ROWS)
