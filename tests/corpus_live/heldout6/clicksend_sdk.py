"""clicksend-client (ClickSend's official SDK for its REST v3 API, a generated client over
urllib3 and pydantic) against a fake ClickSend API on 127.0.0.1 (``Configuration(host=...)``,
HTTP basic auth with username and API key): errors are ClickSend's response envelope
``{"http_code", "response_code", "response_msg", "data"}`` (``UNAUTHORIZED``, ``FORBIDDEN``,
``NOT_FOUND``, ``BAD_REQUEST`` with per-field messages in ``data``, ``TOO_MANY_REQUESTS``,
``INTERNAL_SERVER_ERROR``). The SDK raises ``clicksend.exceptions`` per status
(``UnauthorizedException``, ``ForbiddenException``, ``NotFoundException``,
``BadRequestException``, ``ServiceException``, a plain ``ApiException`` for 429) with the
status, body and headers, and urllib3's exceptions on the transport (the pack turns urllib3's
retries off: they would sleep out a ``Retry-After`` inside the handler)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("clicksend-client", "fake ClickSend REST v3 API", http_setup, half="heldout6")


def _configuration(url: str) -> Any:
    import clicksend

    return clicksend.Configuration(
        host=url,
        username="ops@example.com",
        password="PLANTED-2F1C9B7E-4A3D-4B6E-9C1F-0D2E3F4A5B6C",
        retries=False,
    )


def _account(url: str) -> Any:
    import clicksend
    from clicksend.api.management_api import ManagementApi

    with clicksend.ApiClient(_configuration(url)) as api:
        return ManagementApi(api).view_account_details(_request_timeout=1.0)


def _template(url: str) -> Any:
    import clicksend
    from clicksend.api.sms_api import SmsApi

    with clicksend.ApiClient(_configuration(url)) as api:
        return SmsApi(api).view_a_specific_sms_template("4821", _request_timeout=1.0)


def _create_template(url: str) -> Any:
    import clicksend
    from clicksend.api.sms_api import SmsApi
    from clicksend.models.create_sms_template_request import CreateSmsTemplateRequest

    with clicksend.ApiClient(_configuration(url)) as api:
        req = CreateSmsTemplateRequest(template_name="", body="Your code is {code}")
        return SmsApi(api).create_sms_template(
            create_sms_template_request=req, _request_timeout=1.0
        )


def _env(status: int, code: str, msg: str, data: Any = None) -> dict[str, Any]:
    return {"http_code": status, "response_code": code, "response_msg": msg, "data": data}


ACCOUNT: list[Row] = [
    (
        "bad_credentials",
        401,
        _env(401, "UNAUTHORIZED", "Unauthorized. Please check your username and API key."),
        {"WWW-Authenticate": 'Basic realm="ClickSend"'},
        AUTH,
        None,
        "the username or API key is wrong",
    ),
    (
        "forbidden",
        403,
        _env(403, "FORBIDDEN", "You do not have access to this resource."),
        {},
        AUTH,
        None,
        "a subaccount without access to account details",
    ),
    (
        "rate_limited",
        429,
        _env(429, "TOO_MANY_REQUESTS", "Too many requests. Please try again later."),
        {"Retry-After": "1"},
        RL,
        1.0,
        "more than the allowed requests per second, the wait in Retry-After",
    ),
    (
        "server_error",
        500,
        _env(500, "INTERNAL_SERVER_ERROR", "Something went wrong. Please try again."),
        {},
        NET,
        None,
        "ClickSend failed",
    ),
]
http_cases(FAM, _account, ACCOUNT)

TEMPLATE: list[Row] = [
    (
        "no_template",
        404,
        _env(404, "NOT_FOUND", "Resource not found."),
        {},
        NF,
        None,
        "no SMS template with that id",
    ),
]
http_cases(FAM, _template, TEMPLATE, transport=False)

CREATE: list[Row] = [
    (
        "bad_template",
        400,
        _env(
            400,
            "BAD_REQUEST",
            "Invalid input.",
            {"template_name": "Template name field is required."},
        ),
        {},
        INT,
        None,
        "the template has no name (the pack's input)",
    ),
]
http_cases(FAM, _create_template, CREATE, transport=False)


def _unavailable(ctx: Any) -> Any:
    ctx.http.set(
        503,
        "<html><head><title>503 Service Temporarily Unavailable</title></head><body>\r\n"
        "<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n</body></html>\r\n",
        {},
        "text/html",
    )
    return _account(ctx.http.url)


FAM.add("unavailable", NET, "HTTP 503: the web tier is down (an HTML page)", _unavailable)
