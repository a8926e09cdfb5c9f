"""Schemas shared by the broken sample packs."""

from __future__ import annotations

from typing import Any

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["url"],
    "properties": {"url": {"type": "string", "minLength": 1, "maxLength": 200}},
}


def output_schema(codes: list[str] | None, **props: Any) -> dict[str, Any]:
    """An output schema; ``codes=None`` leaves the error code open (a plain string)."""
    code: dict[str, Any] = {"type": "string"} if codes is None else {"enum": codes}
    return {
        "type": "object",
        "properties": {
            **props,
            "error": {
                "type": "object",
                "required": ["code"],
                "properties": {"code": code, "message": {"type": "string"}},
            },
        },
    }


def fetch(url: str) -> str:
    """The downstream seam of the sample packs (never reached in tests: the kit patches it)."""
    raise ConnectionRefusedError(111, f"no downstream in the sample packs: {url}")
