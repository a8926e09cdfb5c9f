"""Broken: copies the downstream's error text, credentials and all, into its output."""

from __future__ import annotations

from typing import Any

import _common

from control_plane import Context, Pack, hookimpl

PACK_NAME = "broken.leaky"
SEAMS = ("_common:fetch",)
SAMPLE = {"url": "https://example.invalid/a"}


def handle(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    try:
        body = _common.fetch(doc["url"])
    except Exception as exc:  # the fault: the raw text travels as data
        return {"ok": False, "detail": f"downstream failed: {exc}"}
    return {"ok": True, "detail": body[:100]}


PACK = Pack(
    name=PACK_NAME,
    version="0.1.0",
    summary="Leaks downstream error text into its result.",
    input_schema=_common.INPUT_SCHEMA,
    output_schema=_common.output_schema(
        ["network_error", "auth_failed"], ok={"type": "boolean"}, detail={"type": "string"}
    ),
    handler=handle,
)


@hookimpl
def register_packs(register: Any) -> None:
    register(PACK)
