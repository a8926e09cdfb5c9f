"""sparkpost (SparkPost's email delivery API, python-sparkpost on requests): its
``Transmissions`` resource sends a templated email against a fake SparkPost API on 127.0.0.1
answering the errors SparkPost sends (``{"errors": [{"message", "description", "code"}]}``
bodies with SparkPost's numeric codes such as ``1603`` and ``7001``) with their statuses:
a wrong API key, a key without the transmissions grant, an unknown template, an unverified
sending domain, a missing or malformed field, a suppressed recipient, the daily sending
limit (HTTP 420), a body too large, rate limits, a server error and an unavailable edge;
plus the transport failures and a peer answering garbage. The client raises one
``SparkPostAPIException`` for every status; it sets no timeout of its own, so no
silent-server case. (The ``SparkPost`` facade always prefixes ``https://``, so the
resource is built on the fake's ``http://`` base directly.)"""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
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

FAM = family("sparkpost", "fake SparkPost API", http_setup, half="heldout20")


def _send(url: str) -> Any:
    from sparkpost.transmissions import Transmissions

    tx = Transmissions(f"{url}/api/v1", "PLANTEDq7xk2mw9h3v5b8n1c4d6e8f0a2b4c6d8e0")
    return tx.send(
        recipients=["jo.bloggs@example.com"],
        template="order-shipped",
        from_email="orders@mail.example.com",
        substitution_data={"order_id": "A-99812"},
    )


def _e(message: str, code: str | None = None, description: str | None = None) -> Any:
    err: dict[str, str] = {"message": message}
    if description is not None:
        err["description"] = description
    if code is not None:
        err["code"] = code
    return {"errors": [err]}


ROWS: list[Row] = [
    (
        "unauthorized",
        401,
        _e("Unauthorized."),
        {},
        AUTH,
        None,
        "the API key is unknown or was deleted",
    ),
    (
        "forbidden",
        403,
        _e("Forbidden."),
        {},
        AUTH,
        None,
        "the API key lacks the Transmissions: Read/Write grant",
    ),
    (
        "template_missing",
        422,
        _e("Subresource not found", "1603", "template 'order-shipped' does not exist"),
        {},
        NF,
        None,
        "code 1603: the stored template named in the transmission does not exist",
    ),
    (
        "unverified_domain",
        422,
        _e("Invalid domain", "7001", "Unconfigured or unverified sending domain."),
        {},
        AUTH | INT,
        None,
        "code 7001: the account may not send from this domain until it is verified",
    ),
    (
        "field_missing",
        422,
        _e("required field is missing", "1400", "recipients or list_id required"),
        {},
        INT,
        None,
        "code 1400: a required field is missing (the caller's input)",
    ),
    (
        "bad_format",
        422,
        _e(
            "invalid data format/type",
            "1300",
            "Substitution data must be a JSON object",
        ),
        {},
        INT,
        None,
        "code 1300: a field has the wrong type (the caller's input)",
    ),
    (
        "recipient_suppressed",
        422,
        _e(
            "Message generation rejected",
            "1902",
            "recipient address was suppressed due to customer policy",
        ),
        {},
        INT,
        None,
        "code 1902: the only recipient is on the suppression list",
    ),
    (
        "daily_limit",
        420,
        _e("Exceed Sending Limit (daily)", "2102"),
        {},
        QUOTA,
        None,
        "code 2102: the account's daily sending limit is spent",
    ),
    (
        "too_large",
        413,
        "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n"
        "<center><h1>413 Request Entity Too Large</h1></center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        INT,
        None,
        "the body is over the API's size limit (the caller's input)",
    ),
    (
        "rate_limited",
        429,
        _e("Too many requests"),
        {},
        RL,
        None,
        "the account is over its API request rate; SparkPost sends no delay",
    ),
    (
        "internal",
        500,
        _e("Internal server error", "1000"),
        {},
        NET,
        None,
        "the API failed",
    ),
    (
        "unavailable",
        503,
        "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle "
        "this request.\n</body></html>\n",
        {"Content-Type": "text/html", "Cache-Control": "no-cache"},
        NET,
        None,
        "the load balancer has no healthy API server (an HTML page)",
    ),
]
http_cases(FAM, _send, ROWS, transport=False)

FAM.add("refused", NET, "nothing listens", lambda c: _send(f"http://{LOOPBACK}:{c.net.closed}"))
FAM.add("dns", NET, "host does not resolve", lambda c: _send(f"http://{UNRESOLVABLE}:80"))
FAM.add("dropped", NET, "closed at once", lambda c: _send(f"http://{LOOPBACK}:{c.net.close_now}"))


@FAM.case("garbage", NET, "the peer answers bytes of no protocol instead of HTTP")
def _garbage(c: Http) -> Any:
    return _send(f"http://{LOOPBACK}:{c.net.garbage}")
