"""The bounds every outcome is held to (docs/reliability.md), and :func:`json_safe` to fit any
value.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "MAX_CHECKS",
    "MAX_CHECK_VALUE_NODES",
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_PARTIAL_NODES",
    "MAX_RETRY_AFTER",
    "MAX_TEXT",
    "bound_text",
    "clamp_retry_after",
    "exact_str",
    "json_safe",
    "safe_text",
    "valid_text",
]

#: Largest ``retry_after`` (seconds) a caller is told: one day.
MAX_RETRY_AFTER = 86_400.0
#: Longest text (characters) scrubbed or stored; longer ones are cut first.
MAX_TEXT = 64 * 1024
#: Deepest nesting :func:`json_safe` keeps (deeper values become a marker).
MAX_DEPTH = 64

_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1


def clamp_retry_after(seconds: float) -> float:
    """``seconds`` within ``[0, MAX_RETRY_AFTER]`` (non-finite: ``MAX_RETRY_AFTER`` for
    +inf, 0 otherwise)."""
    if math.isnan(seconds):
        return 0.0
    return min(MAX_RETRY_AFTER, max(0.0, seconds))


def exact_str(value: object) -> str | None:
    """``value`` as an exact ``str`` when it is a string of any kind, else ``None``.

    A ``str`` subclass may forge ``__eq__``/``__hash__``/``__str__``; ``str.__str__`` copies
    its characters into a plain ``str`` without calling any of them.
    """
    if type(value) is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    return None


def valid_text(text: str) -> str:
    """``text`` with lone surrogates replaced (U+FFFD), so it encodes as UTF-8."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Pairs of surrogates become the character they encode, lone ones U+FFFD.
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def bound_text(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters, with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [truncated {len(text) - limit} characters]"


def safe_text(value: object, limit: int = MAX_TEXT) -> str:
    """Any value as a bounded, encodable exact ``str``; never raises (a hostile
    ``__str__`` -- even one raising ``SystemExit`` -- gives a fixed text)."""
    text = exact_str(value)
    if text is None:
        try:
            text = exact_str(str(value))
        # Hostile __str__: the text is only informative; anything it raises is absorbed.
        except BaseException:  # noqa: BLE001
            text = None
        if text is None:
            text = f"<unprintable {type(value).__name__}>"
    return valid_text(bound_text(text, limit))


#: Most values :func:`json_safe` copies; the rest become a marker (shared sub-objects
#: would otherwise expand exponentially).
MAX_NODES = 100_000
#: Most values of a ``partial_result`` an error carries (scrubbed and kept); the rest are
#: cut with a marker. The wire sends far less (3.5 KiB of details): this bounds the work.
MAX_PARTIAL_NODES = 10_000
#: Most values of a check's ``expected`` or ``actual``.
MAX_CHECK_VALUE_NODES = 1_000
#: Most checks a validation lists one by one; the rest are summed up in one more check.
MAX_CHECKS = 1_000


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON data that orjson and protobuf always accept (module docs).

    Bounded whatever ``value`` is: a cycle becomes ``"[REDACTED cycle]"``, nesting deeper
    than :data:`MAX_DEPTH` a marker too, and after :data:`MAX_NODES` values each container
    keeps what it had and one ``"[REDACTED N more values]"`` (for a mapping, a key of
    that text with the value ``None``).
    """
    return _safe(value, 0, [MAX_NODES], set())


def _safe(value: Any, depth: int, budget: list[int], path: set[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        return "[REDACTED too many values]"
    kind = type(value)
    if value is None or kind is bool:
        return value
    if kind is str:
        return valid_text(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        number = int.__index__(value)
        return number if _INT64_MIN <= number <= _UINT64_MAX else str(number)
    if isinstance(value, float):
        real = float.__float__(value)
        return real if math.isfinite(real) else None
    if isinstance(value, str):
        return valid_text(str.__str__(value))
    if not isinstance(value, dict | list | tuple):
        return f"[REDACTED {type(value).__name__}]"
    if depth >= MAX_DEPTH:
        return "[REDACTED nested too deep]"
    if id(value) in path:
        return "[REDACTED cycle]"
    path.add(id(value))
    try:
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            # dict.items, not value.items(): a subclass may override it
            for count, (k, v) in enumerate(dict.items(value)):
                if budget[0] <= 0:  # stop here: the work is bounded, not the input
                    out[_more(dict.__len__(value) - count)] = None
                    break
                out[_key(k)] = _safe(v, depth + 1, budget, path)
            return out
        items: Any = (
            list.__getitem__(value, slice(None))  # no overridden __iter__
            if isinstance(value, list)
            else tuple.__getitem__(value, slice(None))
        )
        kept: list[Any] = []
        for count, v in enumerate(items):
            if budget[0] <= 0:
                kept.append(_more(len(items) - count))
                break
            kept.append(_safe(v, depth + 1, budget, path))
        return kept
    finally:
        path.discard(id(value))


def _more(left: int) -> str:
    return f"[REDACTED {left} more values]"


def _key(key: Any) -> str:
    text = exact_str(key)
    if text is None:
        text = safe_text(key, 256) if isinstance(key, int | float | bool) else repr(type(key))
    return valid_text(text)
