"""svix (Svix's webhook-sending API: a client generated from Svix's OpenAPI spec, over
httpx) through its sync client ``Svix`` against a fake Svix API on 127.0.0.1
(``SvixOptions.server_url``, an empty retry schedule, a 1 s timeout). Errors are Svix's
``{"code", "detail"}`` bodies, and FastAPI-style ``{"detail": [{loc, msg, type}]}`` on 422;
the client raises ``HttpError`` (with ``status_code``) or ``HTTPValidationError`` for them,
whatever ``response.json()`` raises when a proxy answers HTML, httpx's exceptions from the
transport and pydantic's ``ValidationError`` when a model is built from bad input. Faked: the
Svix API; real: the generated client, httpx and pydantic."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    RL,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("svix", "fake Svix API", http_setup, half="heldout10")

_TOKEN = "PLANTEDsvix_testsk_Xq7Lm2Rv9Kp4Wn8Zc3Hd6Jt1.us"
_APP = "app_2yZwUhtgs1Ai8T9SZIhFf1Shbqo"


def _svix(url: str) -> Any:
    from svix.api import Svix, SvixOptions

    return Svix(_TOKEN, SvixOptions(server_url=url, retry_schedule=[], timeout=1.0))


def _get(url: str) -> Any:
    return _svix(url).application.get(_APP)


def _create(url: str) -> Any:
    from svix.api import ApplicationIn

    return _svix(url).application.create(ApplicationIn(name="Acme Corp", uid="acme-corp"))


def _err(code: str, detail: str) -> dict[str, str]:
    return {"code": code, "detail": detail}


GET: list[Row] = [
    (
        "bad_token",
        401,
        _err("authentication_failed", "Invalid token"),
        {},
        AUTH,
        None,
        "the API token is unknown or was revoked",
    ),
    (
        "insufficient_access",
        403,
        _err("insufficient access", "Insufficient access for the given operation."),
        {},
        AUTH,
        None,
        "the token is scoped to another application",
    ),
    (
        "no_app",
        404,
        _err("not_found", "Entity not found"),
        {},
        NF,
        None,
        "no application with that id in the environment",
    ),
    (
        "throttled",
        429,
        _err("rate_limit_exceeded", "Too many requests, please slow down."),
        {},
        RL,
        None,
        "the environment's request rate is exceeded",
    ),
    (
        "server_error",
        500,
        _err("server_error", "Internal Server Error"),
        {},
        NET,
        None,
        "Svix failed",
    ),
    (
        "html_503",
        503,
        "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle "
        "this request.\n</body></html>\n",
        {"Content-Type": "text/html", "Cache-Control": "no-cache"},
        NET,
        None,
        "the load balancer has no backend: HTML, the client fails to parse it",
    ),
]
http_cases(FAM, _get, GET)

CREATE: list[Row] = [
    (
        "uid_taken",
        409,
        _err("conflict", "An application with this uid already exists"),
        {},
        EXISTS,
        None,
        "an application with that uid already exists",
    ),
    (
        "uid_invalid",
        422,
        {
            "detail": [
                {
                    "loc": ["body", "uid"],
                    "msg": "String must match regex '^[a-zA-Z0-9\\-_.]+$'",
                    "type": "value_error",
                }
            ]
        },
        {},
        INT,
        None,
        "the request body fails validation (the pack's input)",
    ),
    (
        "bad_request",
        400,
        _err("generic_error", "Throttle rate must be greater than 0"),
        {},
        INT,
        None,
        "the request is refused as invalid (the pack's input)",
    ),
]
http_cases(FAM, _create, CREATE, transport=False)


def _no_name(ctx: Http) -> Any:
    from svix.api import ApplicationIn

    return _svix(ctx.http.url).application.create(ApplicationIn(name=None))  # type: ignore[arg-type]


FAM.add("no_name", INT, "an application without a name: the model refuses it", _no_name)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol, then closes",
    lambda c: _get(f"http://127.0.0.1:{c.net.garbage}"),
)
