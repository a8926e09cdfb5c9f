"""perplexityai (Perplexity's official SDK, Stainless-generated over httpx), its ASYNC client
``AsyncPerplexity``, against a fake Perplexity API on 127.0.0.1 (``base_url=``,
``max_retries=0``: the SDK would otherwise sleep out retries inside the handler;
``timeout=1``). Errors are what api.perplexity.ai sends: a wrong key meets the openresty
front's HTML page ``401 Authorization Required`` (not JSON); request errors are
``{"error": {"message", "type", "code"}}`` with Perplexity's types (``invalid_model``,
``invalid_parameter``, ``invalid_message``); Cloudflare fronts it (a 524 page when the origin
took too long). The wording of the out-of-credits (401) and tier (403) bodies is not
documented: they use the same envelope with types of that meaning. The SDK raises ``perplexity.AuthenticationError``, ``BadRequestError``,
``PermissionDeniedError``, ``RateLimitError``, ``InternalServerError`` or a plain
``APIStatusError`` for the statuses it does not name, and ``APIConnectionError`` /
``APITimeoutError`` on the transport."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, TO, Row, family, http_cases, http_setup

FAM = family("perplexityai", "fake Perplexity API (async client)", http_setup, half="heldout7")


async def _ask(url: str) -> Any:
    from perplexity import AsyncPerplexity

    async with AsyncPerplexity(
        api_key="pplx-PLANTED7b2c9d4e1f0a8b3c6d5e4f3a2b1c0d9e8f7a6b5c",
        base_url=url,
        max_retries=0,
        timeout=1.0,
    ) as client:
        return await client.chat.completions.create(
            model="sonar-pro",
            messages=[{"role": "user", "content": "What changed in the EU AI Act this month?"}],
        )


def _err(type: str, message: str, code: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": type, "code": code}}


_OPENRESTY_401 = (
    "<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body>\r\n"
    "<center><h1>401 Authorization Required</h1></center>\r\n"
    "<hr><center>openresty/1.27.4</center>\r\n</body>\r\n</html>\r\n"
)

_CF_524 = (
    '<!DOCTYPE html>\n<html lang="en-US">\n<head><title>api.perplexity.ai | 524: A timeout '
    "occurred</title></head>\n<body><h1>A timeout occurred</h1><p>Error code 524</p>"
    "<p>The origin web server timed out responding to this request.</p></body></html>\n"
)

_CF_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n"
    "</body>\r\n</html>\r\n"
)

JSON: list[Row] = [
    (
        "unknown_model",
        400,
        _err(
            "invalid_model",
            "Invalid model 'sonar-pro'. Permitted models can be found in the documentation at "
            "https://docs.perplexity.ai/getting-started/models.",
            400,
        ),
        {},
        INT | NF,
        None,
        "the model name is not one Perplexity serves (the pack's input)",
    ),
    (
        "bad_parameter",
        400,
        _err("invalid_parameter", "max_tokens must be at least 16 for sonar-pro.", 400),
        {},
        INT,
        None,
        "an out-of-range parameter (the pack's input)",
    ),
    (
        "bad_messages",
        400,
        _err(
            "invalid_message",
            "After the (optional) system message(s), user or tool message(s) should alternate "
            "with assistant message(s).",
            400,
        ),
        {},
        INT,
        None,
        "the conversation's roles do not alternate (the pack's input)",
    ),
    (
        "no_credits",
        401,
        _err(
            "insufficient_quota",
            "You have run out of API credits. Please add credits to your account to continue.",
            401,
        ),
        {},
        QUOTA | AUTH,
        None,
        "the account's prepaid API credits are used up",
    ),
    (
        "forbidden_model",
        403,
        _err(
            "permission_denied",
            "Your API tier does not have access to the sonar-deep-research model.",
            403,
        ),
        {},
        AUTH,
        None,
        "the key's tier may not use this model",
    ),
    (
        "rate_limited",
        429,
        _err("rate_limit_exceeded", "Rate limit exceeded. Please try again later.", 429),
        {},
        RL,
        None,
        "the tier's requests per minute (no delay sent)",
    ),
    (
        "server_error",
        500,
        _err("internal_server_error", "Internal server error", 500),
        {},
        NET,
        None,
        "Perplexity failed",
    ),
]
http_cases(FAM, _ask, JSON)

HTML: list[Row] = [
    (
        "bad_key",
        401,
        _OPENRESTY_401,
        {"Server": "openresty"},
        AUTH,
        None,
        "openresty's page for a wrong key",
    ),
    (
        "origin_timeout",
        524,
        _CF_524,
        {"Server": "cloudflare"},
        TO | NET,
        None,
        "Cloudflare's origin timed out",
    ),
    (
        "bad_gateway",
        502,
        _CF_502,
        {"Server": "cloudflare"},
        NET,
        None,
        "Cloudflare reached no origin",
    ),
]
http_cases(FAM, _ask, HTML, content_type="text/html", transport=False)
