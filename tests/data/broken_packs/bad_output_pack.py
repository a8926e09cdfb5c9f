"""Broken: returns ``count`` as a string where its output schema says integer."""

from __future__ import annotations

from typing import Any

import _common

from control_plane import Context, Pack, hookimpl

PACK_NAME = "broken.bad_output"
SEAMS: tuple[str, ...] = ()
SAMPLE = {"url": "https://example.invalid/a"}


def handle(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"count": "three"}


PACK = Pack(
    name=PACK_NAME,
    version="0.1.0",
    summary="Returns output that breaks its own schema.",
    input_schema=_common.INPUT_SCHEMA,
    output_schema=_common.output_schema(["not_found"], count={"type": "integer"}),
    handler=handle,
)


@hookimpl
def register_packs(register: Any) -> None:
    register(PACK)
