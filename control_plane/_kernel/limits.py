"""Limits on what a request may carry, refused as
:class:`~control_plane._kernel.errors.RequestRejected`.
"""

from __future__ import annotations

from typing import Any

from control_plane._kernel.errors import FieldViolation, InvalidInput, RequestRejected, UnknownPack
from control_plane._kernel.redact import scrub

__all__ = [
    "MAX_INPUT_DEPTH",
    "MAX_PACK_NAME",
    "MAX_REQUEST_ID",
    "ConfigError",
    "check_depth",
    "check_request_id",
    "clip",
    "describe_json_error",
    "input_too_large",
    "nests_deeper_than",
    "refine_unknown_pack",
]

#: Longest pack name the control plane will echo back (names are dotted identifiers).
MAX_PACK_NAME = 256
#: Longest caller-supplied request id (it travels back in every error's metadata).
MAX_REQUEST_ID = 128
#: Deepest nesting of an input document. orjson parses up to 1024 levels but serializes
#: only up to 254, so deeper input could never travel back in a result; 200 leaves packs
#: room to wrap what they were given.
MAX_INPUT_DEPTH = 200


class ConfigError(ValueError):
    """A reliability or security setting that cannot work (``packctl serve`` exits 2)."""


def clip(text: str, limit: int = 64) -> str:
    """``text`` scrubbed, then cut to ``limit`` characters for echoing back (``...`` marks
    the cut): the echo channel's one path (pack names, request ids). Scrubbed *before* it
    is cut, so a secret cut in half still matches."""
    return scrub(text, limit)


def refine_unknown_pack(exc: UnknownPack) -> RequestRejected:
    """An empty or oversized pack name is a malformed request, not an unknown pack."""
    name = exc.name
    if not name:
        return InvalidInput("", [FieldViolation("pack", "the pack name is empty")])
    if len(name) > MAX_PACK_NAME:
        return InvalidInput(
            clip(name),
            [
                FieldViolation(
                    "pack",
                    f"the pack name is {len(name)} characters long, over the limit of "
                    f"{MAX_PACK_NAME}",
                )
            ],
        )
    return exc


def check_request_id(pack: str, request_id: str) -> None:
    """Refuse a request id longer than :data:`MAX_REQUEST_ID` characters."""
    if len(request_id) > MAX_REQUEST_ID:
        raise InvalidInput(
            pack,
            [
                FieldViolation(
                    "request_id",
                    f"the request id is {len(request_id)} characters long, over the limit of "
                    f"{MAX_REQUEST_ID}",
                )
            ],
        )


def input_too_large(pack: str, size: int, limit: int) -> InvalidInput:
    """The refusal of an input document over ``limit`` bytes."""
    return InvalidInput(
        clip(pack, MAX_PACK_NAME),
        [
            FieldViolation(
                "input",
                f"the input is {size} bytes, over the limit of {limit} bytes "
                "(packctl serve --max-input-bytes)",
            )
        ],
    )


_JSON_HINTS = (
    ("depth limit exceeded", f"input nests deeper than {MAX_INPUT_DEPTH} levels"),
    ("number is infinity", "input holds a number too large for a 64-bit float (over 1.8e308)"),
    ("not valid UTF-8", "input is not valid UTF-8"),
    ("surrogate", "input holds an unpaired UTF-16 surrogate escape"),
    ("byte order mark", "input starts with a UTF-8 byte order mark; send plain UTF-8"),
    ("Input is a zero-length", "input is empty; send a JSON object such as {}"),
)


def describe_json_error(exc: ValueError) -> str:
    """A caller-facing description of why the input is not JSON, with the parser's detail."""
    text = str(exc)
    for needle, hint in _JSON_HINTS:
        if needle in text:
            return f"{hint} ({text})"
    return f"input is not valid JSON: {text}"


def nests_deeper_than(doc: Any, limit: int) -> bool:
    """True when ``doc`` nests dicts and lists more than ``limit`` levels deep (walked
    with a stack of its own: no recursion, whatever the depth)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def check_depth(pack: str, payload: bytes | str, doc: dict[str, Any]) -> None:
    """Refuse input nesting deeper than :data:`MAX_INPUT_DEPTH`.

    Called only for payloads longer than the limit; the bracket count (C speed) clears
    almost every document before the walk does.
    """
    opening = (b"[", b"{") if isinstance(payload, bytes) else ("[", "{")
    if payload.count(opening[0]) + payload.count(opening[1]) <= MAX_INPUT_DEPTH:  # type: ignore[arg-type]
        return
    if nests_deeper_than(doc, MAX_INPUT_DEPTH):
        raise InvalidInput(
            pack, [FieldViolation("", f"input nests deeper than {MAX_INPUT_DEPTH} levels")]
        )
