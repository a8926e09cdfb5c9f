"""The ``http.fetch`` pack: GET or HEAD a URL, the HTTP status soup mapped to codes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from control_plane import Context, Pack, Reach, hookimpl
from packs.http_fetch.client import DEFAULT_TIMEOUT, fetch
from packs.http_fetch.grant import DECLARED_EGRESS, body_limit, egress_policy
from packs.http_fetch.schemas import CODES, INPUT_SCHEMA, OUTPUT_SCHEMA

__all__ = ["PACK", "handle", "register_packs"]

DOCS = """\
GET or HEAD an http(s) URL with optional `headers`, a `credential` (`bearer`, `basic`
username/password, or a custom `header`; never echoed back and scrubbed from every
message), a `timeout` for the whole fetch, `max_bytes` (capped by the server's message
limit), and `max_redirects` (followed within the limit; the credential and the caller's
headers are dropped when a redirect leaves the origin). With `json_schema`, the JSON body
must match it (its patterns run on a linear-time engine). Only destinations the operator
granted are reached (default: public addresses), checked on the resolved address of every hop.

Returns `status`, `headers` (sensitive ones removed), `body` (JSON, text or base64, per
`body_format`), `bytes`, the final `url` and the `redirects` followed.

| code | retryable | when |
|---|---|---|
| `auth_failed` | no | HTTP 401, 403, 407 |
| `not_found` | no | HTTP 404, 410 |
| `rate_limited` | yes | HTTP 429, or 503 with Retry-After; `retry_after` in seconds |
| `timeout` | yes | connect/read timeout, HTTP 408/504 |
| `network_error` | yes | DNS failure, refused, reset, malformed HTTP, other 5xx |
| `schema_mismatch` | no | body breaks `json_schema`; `partial: true` with the valid fields |
| `too_large` | no | body larger than `max_bytes` |
| `too_many_redirects` | no | more than `max_redirects` redirects, or a loop |
| `http_error` | no | other 4xx, or a redirect without a usable Location |
| `invalid_json_schema` | no | `json_schema` invalid, non-local, backtracking or too large |
| `not_permitted` | no | a destination outside the egress grant; nothing sent to it |

Full page: docs/packs/http.fetch.md.
"""


def handle(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Fetch ``doc["url"]`` within its timeout, the call's deadline and the pack's grant."""
    budget = min(float(doc.get("timeout", DEFAULT_TIMEOUT)), ctx.remaining(DEFAULT_TIMEOUT))
    return fetch(
        doc,
        budget,
        egress=egress_policy(ctx),
        cancelled=lambda: ctx.cancelled,
        body_limit=body_limit(ctx),
    )


PACK = Pack(
    name="http.fetch",
    version="1.0.0",
    summary="GET or HEAD a URL; HTTP failures become auth_failed, not_found, rate_limited, ...",
    input_schema=INPUT_SCHEMA,
    output_schema=OUTPUT_SCHEMA,
    handler=handle,
    codes=CODES,
    docs=DOCS,
    # Network only: no file, no program, no ambient credential; public addresses unless
    # the operator grants more (--grant http.fetch:egress=public,loopback; docs/grants.md).
    reach=Reach(egress=DECLARED_EGRESS),
)


@hookimpl
def register_packs(register: Callable[[Pack], None]) -> None:
    """Register ``http.fetch``."""
    register(PACK)
