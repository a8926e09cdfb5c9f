"""voyageai (Voyage AI's embeddings SDK) against a fake Voyage API answering its documented
error bodies (``{"detail": ...}`` with 400, 401, 403, 429, 5xx)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("voyageai", "fake Voyage AI API", http_setup, half="heldout3")


def _embed(url: str) -> Any:
    import voyageai

    client = voyageai.Client(
        api_key="pa-PLANTED-voyage-key", max_retries=0, timeout=1, base_url=url + "/v1"
    )
    return client.embed(["hello world"], model="voyage-3.5", input_type="document")


def _d(detail: str) -> dict[str, str]:
    return {"detail": detail}


ROWS: list[Row] = [
    (
        "bad_key",
        401,
        _d("Provided API key is invalid."),
        {},
        AUTH,
        None,
        "the API key is invalid",
    ),
    (
        "ip_forbidden",
        403,
        _d("Your IP address is not in the allowlist of this organization."),
        {},
        AUTH,
        None,
        "the organization's IP allowlist refuses this caller",
    ),
    (
        "too_many_tokens",
        400,
        _d(
            "Request to model 'voyage-3.5' failed. The max allowed tokens per submitted batch "
            "is 320000. Your batch has 412345 tokens after truncation. Please lower the number "
            "of tokens in the batch."
        ),
        {},
        INT,
        None,
        "the batch is over the model's token limit: it never passes",
    ),
    (
        "unknown_model",
        400,
        _d(
            "Model voyage-9 is not supported. Supported models are ['voyage-3.5', "
            "'voyage-3.5-lite', 'voyage-3-large', 'voyage-code-3']."
        ),
        {},
        INT | NF,
        None,
        "the model named does not exist (the pack's input)",
    ),
    (
        "rate_limited",
        429,
        _d(
            "You have exceeded your rate limit of 2000 requests per minute. Please wait and "
            "try again later."
        ),
        {},
        RL,
        None,
        "the organization's rate limit",
    ),
    (
        "no_payment_method",
        429,
        _d(
            "You have not yet added your payment method in the billing page and will have "
            "reduced rate limits of 3 RPM and 10K TPM. To unlock our standard rate limits, "
            "please add a payment method in the billing page for the appropriate organization "
            "in the user dashboard (https://dashboard.voyageai.com/). Even with payment methods "
            "entered, the free tokens (200M tokens for Voyage series 3) will still apply."
        ),
        {},
        RL,
        None,
        "the reduced rate limits of an account without a payment method: waiting works",
    ),
    (
        "internal",
        500,
        _d("Internal server error"),
        {},
        NET,
        None,
        "Voyage failed",
    ),
    (
        "unavailable",
        503,
        _d("The service is temporarily unavailable due to high traffic. Please retry later."),
        {},
        NET,
        None,
        "Voyage is overloaded",
    ),
    (
        "gateway_html",
        502,
        "<html><head><title>502 Bad Gateway</title></head><body>502 Bad Gateway</body></html>",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the load balancer's HTML page",
    ),
]
http_cases(FAM, _embed, ROWS)
