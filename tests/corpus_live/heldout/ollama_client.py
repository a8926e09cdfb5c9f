"""The ollama Python client (a local-LLM SDK) against a fake Ollama server."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("ollama", 'fake Ollama HTTP API ({"error": ...})', http_setup, half="heldout")


def _call(url: str) -> Any:
    import ollama

    return ollama.Client(host=url, timeout=1).chat(
        model="llama-x", messages=[{"role": "user", "content": "hi"}]
    )


ROWS: list[Row] = [
    (
        "no_model",
        404,
        {"error": 'model "llama-x" not found, try pulling it first'},
        {},
        NF,
        None,
        "model not pulled",
    ),
    ("unauthorized", 401, {"error": "unauthorized"}, {}, AUTH, None, "proxy requires a key"),
    ("forbidden", 403, {"error": "forbidden"}, {}, AUTH, None, "forbidden"),
    (
        "busy",
        503,
        {"error": "server busy, please try again.  maximum pending requests exceeded"},
        {},
        RL | NET,
        None,
        "queue full, retry",
    ),
    ("rate", 429, {"error": "too many requests"}, {"Retry-After": "4"}, RL, 4.0, "proxy throttled"),
    (
        "bad_request",
        400,
        {"error": "invalid options: num_ctx must be positive"},
        {},
        INT,
        None,
        "bad options",
    ),
    (
        "oom",
        500,
        {"error": "model requires more system memory (12.0 GiB) than is available (4.0 GiB)"},
        {},
        INT | NET,
        None,
        "not enough memory on the server",
    ),
    (
        "runner",
        500,
        {"error": "llama runner process has terminated: signal: killed"},
        {},
        NET | INT,
        None,
        "runner died",
    ),
    ("gw", 502, "bad gateway", {}, NET, None, "proxy bad gateway"),
    ("gw_timeout", 504, "", {}, TO, None, "gateway timeout"),
]
http_cases(FAM, _call, ROWS)
