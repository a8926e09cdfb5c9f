"""lumaai (Luma AI's Stainless-generated SDK for the Dream Machine video API, its sync
``LumaAI`` client over httpx) against a fake Dream Machine API (``/dream-machine/v1``) on
127.0.0.1 (``base_url`` pointed at it, ``max_retries=0`` so each request is sent once, a 1 s
timeout). The API is a FastAPI service: its errors are ``{"detail": "..."}`` bodies, request
validation a 422 with pydantic's ``detail`` list, behind Cloudflare (``cf-ray``, an HTML 502
from the edge). The client raises one ``APIStatusError`` subclass per status,
``APIConnectionError``/``APITimeoutError`` for the transport. Faked: the API; real: the client
and httpx."""

from __future__ import annotations

from typing import Any

from corpus_live.core import AUTH, INT, NET, NF, QUOTA, RL, Row, family, http_cases, http_setup

FAM = family("lumaai", "fake Luma Dream Machine API", http_setup, half="heldout14")

_H = {"cf-ray": "8f1c2d3e4a5b6c7d-SJC", "server": "cloudflare"}
_GEN = "d1b2c3a4-5e6f-4a8b-9c0d-1e2f3a4b5c6d"


def _client(url: str) -> Any:
    from lumaai import LumaAI

    return LumaAI(
        auth_token="luma-PLANTED-3f9c2a7e-81d4-4b6e-a0c5",
        base_url=url + "/dream-machine/v1",
        max_retries=0,
        timeout=1.0,
    )


def _create(url: str) -> Any:
    with _client(url) as luma:
        return luma.generations.create(
            model="ray-2",
            prompt="A lighthouse at dusk, waves breaking on the rocks",
            aspect_ratio="16:9",
            duration="5s",
        )


def _get(url: str) -> Any:
    with _client(url) as luma:
        return luma.generations.get(_GEN)


CREATE: list[Row] = [
    (
        "bad_key",
        401,
        {"detail": "Invalid API key"},
        _H,
        AUTH,
        None,
        "the API key is wrong or was revoked",
    ),
    (
        "validation",
        422,
        {
            "detail": [
                {
                    "type": "literal_error",
                    "loc": ["body", "resolution"],
                    "msg": "Input should be '540p', '720p', '1080p' or '4k'",
                    "input": "8k",
                    "ctx": {"expected": "'540p', '720p', '1080p' or '4k'"},
                }
            ]
        },
        _H,
        INT,
        None,
        "the caller's request body fails the API's validation",
    ),
    (
        "no_credits",
        400,
        {"detail": "Insufficient credits"},
        _H,
        QUOTA,
        None,
        "the account has no credits left for a generation",
    ),
    (
        "concurrency",
        429,
        {"detail": "Too many concurrent generations. Please wait for some to finish."},
        _H,
        RL,
        None,
        "the account's concurrent-generation limit, no delay given",
    ),
    (
        "server_error",
        500,
        {"detail": "Internal Server Error"},
        _H,
        NET,
        None,
        "the service failed while creating the generation",
    ),
    (
        "edge_502",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502"
        " Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n",
        _H,
        NET,
        None,
        "Cloudflare's edge got no answer from the origin",
    ),
]
http_cases(FAM, _create, CREATE)

GET: list[Row] = [
    (
        "generation_missing",
        404,
        {"detail": "Generation not found"},
        _H,
        NF,
        None,
        "no generation with that id on this account",
    ),
    (
        "expired_key_get",
        401,
        {"detail": "Invalid API key"},
        _H,
        AUTH,
        None,
        "the API key was revoked before the status poll",
    ),
]
http_cases(FAM, _get, GET, transport=False)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _get(f"http://127.0.0.1:{c.net.garbage}"),
)
