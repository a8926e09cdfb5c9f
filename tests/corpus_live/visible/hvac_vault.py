"""hvac (HashiCorp Vault's client) against a fake Vault answering its error bodies."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, Row, family, http_cases, http_setup

FAM = family("hvac", 'fake HashiCorp Vault API ({"errors": [...]})', http_setup, half="visible")


def _call(url: str) -> Any:
    import hvac

    client = hvac.Client(url=url, token="hvs.PLANTED", timeout=1)
    return client.secrets.kv.v2.read_secret_version(path="app/db", raise_on_deleted_version=True)


def _e(*errors: str) -> dict[str, Any]:
    return {"errors": list(errors)}


ROWS: list[Row] = [
    (
        "permission_denied",
        403,
        _e("1 error occurred:\n\t* permission denied\n\n"),
        {},
        AUTH,
        None,
        "token lacks policy",
    ),
    ("bad_token", 403, _e("permission denied", "invalid token"), {}, AUTH, None, "invalid token"),
    ("no_secret", 404, _e(), {}, NF, None, "no such secret"),
    ("sealed", 503, _e("Vault is sealed"), {}, NET, None, "Vault sealed: unavailable"),
    (
        "standby",
        429,
        _e(),
        {},
        RL | NET,
        None,
        "a standby node (Vault uses 429 for unsealed standby)",
    ),
    (
        "rate_quota",
        429,
        _e('request path "secret/data/app/db": rate limit quota exceeded'),
        {"Retry-After": "3"},
        RL,
        3.0,
        "rate limit quota",
    ),
    ("bad_request", 400, _e("invalid request"), {}, INT, None, "invalid request"),
    ("internal", 500, _e("internal error"), {}, NET, None, "server error"),
    (
        "bad_gateway",
        502,
        _e("error forwarding request"),
        {},
        NET,
        None,
        "performance standby forwarding failed",
    ),
    ("unsupported_path", 405, _e("unsupported operation"), {}, INT, None, "method not allowed"),
    ("token_expired", 403, _e("permission denied"), {}, AUTH, None, "token expired"),
    ("lease_not_found", 400, _e("lease not found"), {}, NF | INT, None, "lease not found"),
]
http_cases(FAM, _call, ROWS)
