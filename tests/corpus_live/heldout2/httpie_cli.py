"""HTTPie's ``http`` CLI (Debian's httpie) against a fake Cloudflare API v4 answering its
documented error envelopes (``{"success": false, "errors": [{"code": 81057, ...}]}``: a
numeric space of Cloudflare's own) and its edge's 52x statuses. ``--check-status`` makes
4xx exit 4 and 5xx exit 5 with ``http: warning: HTTP 404 Not Found`` on stderr; the
response (headers and body) is on stdout."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    Http,
    Row,
    cli,
    family,
    http_cases,
    http_setup,
    require,
)

FAM = family(
    "httpie", "HTTPie 3.2 CLI against a fake Cloudflare API v4", http_setup, half="heldout2"
)

ZONE = "023e105f4ecef8ad9ca31a8372d0c353"


def _http(method: str, path: str, *items: str) -> Any:
    def call(url: str) -> None:
        require("http")
        cli(
            [
                "http",
                "--check-status",
                "--ignore-stdin",
                "--timeout=1",
                "--print=hb",
                method,
                f"{url}/client/v4{path}",
                "Authorization:Bearer PLANTED-cf-token",
                *items,
            ],
            timeout=15,
        )

    return call


_GET = _http("GET", f"/zones/{ZONE}/dns_records/372e67954025e0ba6aaa6d586b9e0b59")
_POST = _http(
    "POST", f"/zones/{ZONE}/dns_records", "type=A", "name=www.example.com", "content=192.0.2.1"
)


def _cf(code: int, message: str, *chain: tuple[int, str]) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if chain:
        err["error_chain"] = [{"code": c, "message": m} for c, m in chain]
    return {"success": False, "errors": [err], "messages": [], "result": None}


def _edge(status: int, title: str) -> str:
    return (
        f"<!DOCTYPE html><html><head><title>api.cloudflare.com | {status}: {title}</title>"
        f"</head><body><h1>Error {status}</h1><p>{title}</p>"
        "<p>Cloudflare Ray ID: 8c2d1e3f4a5b6c7d</p></body></html>"
    )


READ: list[Row] = [
    (
        "auth_error",
        403,
        _cf(10000, "Authentication error"),
        {},
        AUTH,
        None,
        "code 10000: the token is not valid for this call",
    ),
    (
        "record_missing",
        404,
        _cf(81044, "Record does not exist."),
        {},
        NF,
        None,
        "code 81044: the DNS record id does not exist",
    ),
    (
        "throttled",
        429,
        _cf(971, "Please wait and consider throttling your request speed"),
        {"Retry-After": "60"},
        RL,
        None,
        "code 971, Retry-After on stdout only (the CLI's stderr says HTTP 429)",
    ),
    (
        "origin_error",
        500,
        _cf(10001, "Internal server error"),
        {},
        NET,
        None,
        "the API failed (5xx)",
    ),
    (
        "bad_gateway",
        502,
        _edge(502, "Bad gateway"),
        {"Content-Type": "text/html"},
        NET,
        None,
        "the edge could not reach the API",
    ),
    (
        "edge_timeout",
        524,
        _edge(524, "A timeout occurred"),
        {"Content-Type": "text/html"},
        TO,
        None,
        "Cloudflare's 524: the origin did not answer in time (a status with no standard name)",
    ),
]
http_cases(FAM, _GET, READ)

WRITE: list[Row] = [
    (
        "record_exists",
        400,
        _cf(81058, "An identical record already exists."),
        {},
        EXISTS,
        None,
        "code 81058 on a 400 (the body, on stdout; stderr says only HTTP 400)",
    ),
    (
        "record_quota",
        400,
        _cf(81045, "Record quota exceeded."),
        {},
        QUOTA,
        None,
        "code 81045: the zone's DNS record quota is used up (a plan limit, not throttling)",
    ),
    (
        "invalid_content",
        400,
        _cf(
            1004,
            "DNS Validation Error",
            (9005, "Content for A record must be a valid IPv4 address."),
        ),
        {},
        INT,
        None,
        "code 1004/9005: the record's content is invalid (the pack's input)",
    ),
]
http_cases(FAM, _POST, WRITE, transport=False)


def _missing(ctx: Http) -> None:
    cli(["http-not-installed-x", "--check-status", "GET", ctx.http.url])


FAM.add("not_installed", frozenset({"dependency_missing"}), "the CLI is not installed", _missing)
