"""Where a pack's output stops being JSON: the path and the value (``result.rows[0][0] is inf``)."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

from control_plane._kernel.bounds import MAX_NODES, safe_text

__all__ = ["first_fault", "has_non_finite"]

#: orjson's nesting limit (it raises "Recursion limit reached" beyond it).
_MAX_NESTING = 254
_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1


#: The standard library's C encoder refuses non-finite floats (``allow_nan=False``);
#: values orjson encodes natively (datetime, UUID...) it skips (``default``).
_FINITE_ONLY = json.JSONEncoder(allow_nan=False, check_circular=False, default=lambda _: None)


def has_non_finite(value: Any) -> bool:
    """Whether a non-finite float is anywhere in ``value`` (already known to encode with
    orjson: no cycles, string keys). One pass of the C encoder, about 3x cheaper than a
    walk in Python."""
    try:
        _FINITE_ONLY.encode(value)
    except ValueError:
        return True
    return False


def first_fault(value: Any, root: str) -> str | None:
    """``"<path> is <what>: not JSON"`` for the first part of ``value`` that JSON cannot
    carry (``root`` names ``value`` itself, e.g. ``result``); ``None`` when none is found
    within the budget."""
    return _Walk().fault(value, root, 0)


class _Walk:
    __slots__ = ("budget", "open")

    def __init__(self) -> None:
        self.budget = MAX_NODES
        self.open: set[int] = set()

    def fault(self, value: Any, path: str, depth: int) -> str | None:
        self.budget -= 1
        if self.budget < 0:
            return None
        if value is None or isinstance(value, bool):
            return None
        if isinstance(value, float):
            real = float.__float__(value)
            return None if math.isfinite(real) else f"{path} is {real!r}: not JSON"
        if isinstance(value, int):
            if _INT64_MIN <= int.__index__(value) <= _UINT64_MAX:
                return None
            return f"{path} is an integer beyond 64 bits: not JSON"
        if isinstance(value, str):
            if _encodes(value):
                return None
            return f"{path} is a string with a lone surrogate: not JSON"
        if not isinstance(value, dict | list | tuple):
            return self._leaf(value, path)
        if depth >= _MAX_NESTING:
            return f"{path} nests deeper than {_MAX_NESTING} levels: not JSON"
        if id(value) in self.open:
            return f"{path} contains itself (a cycle): not JSON"
        self.open.add(id(value))
        try:
            if isinstance(value, dict):
                for key, item in dict.items(value):
                    if not isinstance(key, str):
                        shown = safe_text(repr(key), 80)
                        return f"{path} has a key {shown} of type {type(key).__name__}: not JSON"
                    if not _encodes(key):
                        return f"{path} has a key with a lone surrogate: not JSON"
                    found = self.fault(item, _member(path, key), depth + 1)
                    if found is not None or self.budget < 0:
                        return found
                return None
            items = list.__iter__(value) if isinstance(value, list) else tuple.__iter__(value)
            for index, item in enumerate(items):
                found = self.fault(item, f"{path}[{index}]", depth + 1)
                if found is not None or self.budget < 0:
                    return found
            return None
        finally:
            self.open.discard(id(value))

    @staticmethod
    def _leaf(value: Any, path: str) -> str | None:
        """A type orjson may still encode (datetime, UUID, dataclass...): ask it."""
        try:
            orjson.dumps(value)
        except (TypeError, ValueError, OverflowError):
            return f"{path} is {type(value).__name__}: not JSON"
        return None


def _encodes(text: str) -> bool:
    try:
        str.encode(text, "utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _member(path: str, key: str) -> str:
    if key.isidentifier() and key.isascii():
        return f"{path}.{key}"
    return f"{path}[{orjson.dumps(str.__str__(key)[:80]).decode()}]"
