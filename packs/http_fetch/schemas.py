"""http.fetch: hand-written JSON Schemas (2020-12) and the pack's own codes."""

from __future__ import annotations

from typing import Any

from control_plane import CodeDoc, error_schema
from packs.credentials import credential_schema

__all__ = ["CODES", "INPUT_SCHEMA", "OUTPUT_SCHEMA", "VOCABULARY"]

DRAFT = "https://json-schema.org/draft/2020-12/schema"

#: The one declaration of the codes, in order: baseline codes (``None``: documented by the
#: vocabulary), then the pack's own; the output schema's enum is derived from it.
CODES: dict[str, CodeDoc | None] = {
    "auth_failed": None,
    "not_found": None,
    "rate_limited": None,
    "timeout": None,
    "network_error": None,
    "schema_mismatch": None,
    "too_large": CodeDoc(
        description=(
            "The response body is larger than max_bytes (by Content-Length or while "
            "reading), or has too many values to check against json_schema within the "
            "server's step budget; the body was not returned."
        ),
        retryable=False,
        recovery_hint=(
            "Raise max_bytes if the size is expected, or fetch a smaller resource (or use "
            "a json_schema with fewer positions per value)."
        ),
    ),
    "too_many_redirects": CodeDoc(
        description=(
            "The server redirected more than max_redirects times (or in a loop); the "
            "pack stopped following."
        ),
        retryable=False,
        recovery_hint=(
            "Call the final URL directly, or raise max_redirects if the chain is legitimately long."
        ),
    ),
    "http_error": CodeDoc(
        description=(
            "The server answered a status the baseline does not cover (400, 405, 409, 422 "
            "and other 4xx), or a redirect without a usable http(s) Location."
        ),
        retryable=False,
        recovery_hint=(
            "The request itself is wrong for this server: check the URL, method and "
            "headers before calling again."
        ),
    ),
    "invalid_json_schema": CodeDoc(
        description=(
            "The json_schema given in the input is not a valid JSON Schema, points outside "
            "itself (a non-local $ref, a $schema that is not a standard draft, a $id below "
            "the root), has a pattern that needs backtracking, or is larger than the bounds "
            "every outside schema is held to (size, nesting, references followed, regexes); "
            "nothing was fetched."
        ),
        retryable=False,
        recovery_hint=(
            "Fix json_schema (2020-12, local $ref only, linear-time patterns, within the "
            "bounds the message names) and call again."
        ),
    ),
    "not_permitted": CodeDoc(
        description=(
            "The destination, or a redirect's, is outside what the operator granted this "
            "pack (by default: public addresses only; loopback, private, link-local, cloud "
            "metadata and reserved addresses are refused). Nothing was sent to it."
        ),
        retryable=False,
        recovery_hint=(
            "Do not retry: the grant, not the call, decides. Use a destination the pack may "
            "reach, or ask the operator to grant it."
        ),
    ),
}
VOCABULARY = list(CODES)

_CREDENTIAL = credential_schema(
    "Exactly one credential form; never echoed back, scrubbed from messages."
)

INPUT_SCHEMA: dict[str, Any] = {
    "$schema": DRAFT,
    "title": "http.fetch input",
    "type": "object",
    "additionalProperties": False,
    "required": ["url"],
    "properties": {
        "url": {
            "type": "string",
            "pattern": "^[hH][tT][tT][pP][sS]?://[^\\s]+$",
            "maxLength": 8192,
            "description": "http:// or https:// URL. user:password@ in it is used as Basic "
            "credentials and removed from the URL.",
        },
        "method": {"enum": ["GET", "HEAD"], "default": "GET"},
        "headers": {
            "type": "object",
            "maxProperties": 64,
            "propertyNames": {"pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"},
            "additionalProperties": {"type": "string", "pattern": "^[^\\r\\n]*$"},
        },
        "credential": _CREDENTIAL,
        "timeout": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": 600,
            "description": "Seconds for the whole fetch, redirects included (default 30); "
            "the call's deadline caps it.",
        },
        "max_bytes": {
            "type": "integer",
            "minimum": 0,
            "maximum": 104857600,
            "description": "Largest body accepted (default 5 MiB, and never more than the "
            "server's message limit); more is too_large.",
        },
        "max_redirects": {
            "type": "integer",
            "minimum": 0,
            "maximum": 20,
            "description": "Redirects followed before too_many_redirects (default 5).",
        },
        "follow_redirects": {
            "type": "boolean",
            "description": "False: return a 3xx response as it is (default true).",
        },
        "json_schema": {
            "type": "object",
            "description": "JSON Schema (2020-12) the JSON body must match; a mismatch is "
            "schema_mismatch with the fields that did validate. Local $ref only, nothing "
            "fetched; patterns run on a linear-time engine (backreferences and lookaround "
            "are invalid_json_schema); size, nesting and references followed are bounded.",
        },
    },
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "$schema": DRAFT,
    "title": "http.fetch output",
    "type": "object",
    "additionalProperties": False,
    "required": ["url", "status", "headers", "bytes", "body", "body_format"],
    "properties": {
        "url": {"type": "string", "description": "Final URL, credentials removed."},
        "status": {"type": "integer", "minimum": 100, "maximum": 599},
        "reason": {"type": "string"},
        "headers": {
            "type": "object",
            "description": "Response headers, lower-case names, sensitive ones removed.",
            "additionalProperties": {"type": "string"},
        },
        "bytes": {"type": "integer", "minimum": 0},
        "body": {"description": "JSON value, text, base64 text, or null for HEAD."},
        "body_format": {"enum": ["json", "text", "base64", "none"]},
        "redirects": {
            "type": "array",
            "items": {"type": "string"},
            "description": "URLs redirected through, in order.",
        },
        "error": error_schema(
            CODES,
            retry_after={"type": "number", "minimum": 0},
            partial={"const": True},
            partial_result={"type": "object"},
        ),
    },
}
