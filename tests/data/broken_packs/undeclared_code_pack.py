"""Broken: raises ``downstream_down``, a code its vocabulary does not declare."""

from __future__ import annotations

from typing import Any

import _common

from control_plane import Context, Pack, PackError, hookimpl

PACK_NAME = "broken.undeclared"
SEAMS = ("_common:fetch",)
SAMPLE = {"url": "https://example.invalid/a"}


def handle(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    try:
        body = _common.fetch(doc["url"])
    except ConnectionError as exc:  # the fault: a code nobody declared
        raise PackError("downstream_down", "the downstream is down") from exc
    return {"length": len(body)}


PACK = Pack(
    name=PACK_NAME,
    version="0.1.0",
    summary="Raises a code outside its vocabulary.",
    input_schema=_common.INPUT_SCHEMA,
    output_schema=_common.output_schema(["network_error", "not_found"], length={"type": "integer"}),
    handler=handle,
)


@hookimpl
def register_packs(register: Any) -> None:
    register(PACK)
