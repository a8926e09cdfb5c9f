"""Broken: the error code is a plain string, so any code could reach a caller."""

from __future__ import annotations

from typing import Any

import _common

from control_plane import Context, Pack, hookimpl

PACK_NAME = "broken.open_vocab"
SEAMS = ("_common:fetch",)
SAMPLE = {"url": "https://example.invalid/a"}


def handle(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"length": len(_common.fetch(doc["url"]))}


PACK = Pack(
    name=PACK_NAME,
    version="0.1.0",
    summary="Leaves its vocabulary open.",
    input_schema=_common.INPUT_SCHEMA,
    output_schema=_common.output_schema(None, length={"type": "integer"}),
    handler=handle,
)


@hookimpl
def register_packs(register: Any) -> None:
    register(PACK)
