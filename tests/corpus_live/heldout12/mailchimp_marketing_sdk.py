"""mailchimp-marketing (Mailchimp's Swagger-Codegen generated Marketing API client over
requests) against a fake Marketing API 3.0 on 127.0.0.1 (the client's ``host`` pointed at it,
a 1 s timeout). Mailchimp answers every error as ``application/problem+json``: ``{type, title,
status, detail, instance}`` (validation failures add ``errors[]`` of ``{field, message}``), per
its documented error glossary; its 429 carries no delay. The client raises ``ApiClientError``
with the body text and the status for a failing answer, and wraps requests' transport errors
in ``ApiClientError`` with no status. Faked: the API; real: the client and requests."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, EXISTS, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("mailchimp-marketing", "fake Mailchimp Marketing API", http_setup, half="heldout12")

_LIST = "5b1e0c7a9d"
_HASH = "b58996c504c5638798eb6b511e6f49af"
_DOCS = "https://mailchimp.com/developer/marketing/docs/errors/"
_PJ = {"Content-Type": "application/problem+json; charset=utf-8"}


def _client(url: str) -> Any:
    from mailchimp_marketing import Client  # type: ignore[import-untyped]

    client = Client()
    client.set_config({"api_key": "3c9f0e2b7a41d58e6f0a9b3c2d1e4f57-us21", "timeout": 1})
    client.api_client.host = url + "/3.0"
    return client


def _get_member(url: str) -> Any:
    return _client(url).lists.get_list_member(_LIST, _HASH)


def _add_member(url: str) -> Any:
    member = {"email_address": "ada@example.com", "status": "subscribed"}
    return _client(url).lists.add_list_member(_LIST, member)


def _problem(title: str, status: int, detail: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": _DOCS,
        "title": title,
        "status": status,
        "detail": detail,
        "instance": "9d3c1f7e-2a4b-4c8d-b1e6-0f5a7d2c3b91",
        **extra,
    }


GET: list[Row] = [
    (
        "api_key_invalid",
        401,
        _problem(
            "API Key Invalid",
            401,
            "Your API key may be invalid, or you've attempted to access the wrong datacenter.",
        ),
        _PJ,
        AUTH,
        None,
        "the API key is revoked or wrong",
    ),
    (
        "user_disabled",
        403,
        _problem("User Disabled", 403, "This account has been disabled."),
        _PJ,
        AUTH,
        None,
        "the account behind the key is disabled",
    ),
    (
        "forbidden_role",
        403,
        _problem("Forbidden", 403, "The API key provided does not have access to this resource."),
        _PJ,
        AUTH,
        None,
        "the key's user may not read this audience",
    ),
    (
        "member_not_found",
        404,
        _problem("Resource Not Found", 404, "The requested resource could not be found."),
        _PJ,
        NF,
        None,
        "no member with this hash in the audience",
    ),
    (
        "too_many_connections",
        429,
        _problem(
            "Too Many Requests", 429, "You have exceeded the limit of 10 simultaneous connections."
        ),
        _PJ,
        RL,
        None,
        "over the 10 simultaneous connections per user, no delay given",
    ),
    (
        "internal",
        500,
        _problem(
            "Internal Server Error",
            500,
            "An unexpected internal error has occurred. Please contact Support for more information.",
        ),
        _PJ,
        NET,
        None,
        "Mailchimp failed",
    ),
    (
        "gateway_timeout",
        504,
        "<HTML><HEAD>\n<TITLE>Gateway Timeout</TITLE>\n</HEAD><BODY>\n<H1>Gateway Timeout</H1>\n"
        "The proxy server did not receive a timely response from the upstream server.<P>\n"
        "Reference&#32;&#35;30&#46;5f3c1b17&#46;1764431211&#46;2a6e0f4d\n</BODY></HTML>\n",
        {"Content-Type": "text/html", "Server": "AkamaiGHost"},
        TO | NET,
        None,
        "the CDN's edge got no answer from the API in time",
    ),
]
http_cases(FAM, _get_member, GET)

POST: list[Row] = [
    (
        "member_exists",
        400,
        _problem(
            "Member Exists",
            400,
            "ada@example.com is already a list member. Use PUT to insert or update list members.",
        ),
        _PJ,
        EXISTS,
        None,
        "the address is already in the audience",
    ),
    (
        "invalid_resource",
        400,
        _problem(
            "Invalid Resource",
            400,
            "The resource submitted could not be validated. For field-specific details, see the"
            " 'errors' array.",
            errors=[{"field": "email_address", "message": "This value should be a valid email."}],
        ),
        _PJ,
        INT,
        None,
        "the caller's member fails validation",
    ),
    (
        "forgotten_email",
        400,
        _problem(
            "Forgotten Email Not Subscribed",
            400,
            "ada@example.com was permanently deleted and cannot be re-imported. The contact must"
            " re-subscribe to get back on the list.",
        ),
        _PJ,
        INT,
        None,
        "the address was permanently deleted and may not be re-added by the API",
    ),
    (
        "signup_throttled",
        400,
        _problem(
            "Invalid Resource",
            400,
            "ada@example.com has signed up to a lot of lists very recently; we're not allowing"
            " more signups for now",
        ),
        _PJ,
        INT | RL,
        None,
        "Mailchimp's anti-abuse check refuses more signups for this address for now",
    ),
    (
        "json_parse",
        400,
        _problem(
            "JSON Parse Error",
            400,
            "We encountered an unspecified JSON parsing error.",
        ),
        _PJ,
        INT,
        None,
        "the server could not parse the request body",
    ),
]
http_cases(FAM, _add_member, POST, transport=False)
