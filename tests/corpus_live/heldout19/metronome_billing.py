"""metronome-sdk (Metronome's usage-billing API, a Stainless client on httpx): its sync
client creates a customer against a fake Metronome API on 127.0.0.1 answering the errors
Metronome sends (``{"message": ...}`` bodies, a ``conflicting_id`` on a conflict) with their
statuses and headers: a wrong token, a missing permission, unknown objects, a
conflicting ingest alias or uniqueness key, the caller's bad input, rate limits, server
errors and a proxy's page; plus the client's own timeout and the transport failures. The
client's retries are off (``max_retries=0``), so each call is tried once."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("metronome-sdk", "fake Metronome API", http_setup, half="heldout19")


def _create(url: str) -> Any:
    from metronome import Metronome

    client = Metronome(
        bearer_token="PLANTEDmetronomeTok3c9a", base_url=url, max_retries=0, timeout=1
    )
    return client.v1.customers.create(
        name="Acme Corp", ingest_aliases=["team@acme.example"], external_id="acme-7781"
    )


def _m(message: str, **extra: Any) -> dict[str, Any]:
    return {"message": message, **extra}


ROWS: list[Row] = [
    ("unauthorized", 401, _m("Unauthorized"), {}, AUTH, None, "the API token is wrong"),
    (
        "forbidden",
        403,
        _m("Forbidden: this token does not have permission to perform this action"),
        {},
        AUTH,
        None,
        "the token lacks the permission for this endpoint",
    ),
    ("not_found", 404, _m("Not Found"), {}, NF, None, "the endpoint or object is unknown"),
    (
        "alias_conflict",
        409,
        _m(
            "Ingest alias team@acme.example is already in use",
            conflicting_id="9b2d7a4e-5a1f-4c8e-9f6b-1d2c3b4a5e6f",
        ),
        {},
        EXISTS,
        None,
        "another customer already owns the ingest alias",
    ),
    (
        "uniqueness_key",
        409,
        _m("A request with this uniqueness_key has already been processed"),
        {},
        EXISTS,
        None,
        "the same create was already done under that uniqueness key",
    ),
    (
        "bad_request",
        400,
        _m("name: must be a non-empty string"),
        {},
        INT,
        None,
        "a field of the request is invalid (the caller's input)",
    ),
    (
        "unprocessable",
        422,
        _m("external_id must be at most 128 characters"),
        {},
        INT,
        None,
        "the request is well formed but its values are refused (the caller's input)",
    ),
    (
        "rate_limited",
        429,
        _m("Too Many Requests"),
        {"Retry-After": "2"},
        RL,
        2.0,
        "too many requests, the server says when to retry",
    ),
    ("internal", 500, _m("Internal Server Error"), {}, NET, None, "the API failed"),
    (
        "unavailable",
        503,
        "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle "
        "this request.\n</body></html>\n",
        {"Content-Type": "text/html", "Cache-Control": "no-cache"},
        NET,
        None,
        "the load balancer had no backend (an HTML page)",
    ),
]
http_cases(FAM, _create, ROWS)
