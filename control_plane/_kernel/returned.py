"""What a handler returned, copied to plain JSON data inside the pack boundary, large results
piecewise.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from control_plane._kernel.bounds import json_safe, safe_text
from control_plane._kernel.not_json import first_fault, has_non_finite
from control_plane._kernel.pack import Check, Result

__all__ = ["CHUNK_VALUES", "LargeResult", "Returned", "copy_returned", "encode_result"]

#: The most values (containers, items, scalars) one call of the C encoder or decoder is
#: given: a bound on how long the pack's copy holds the GIL at once (~1 ms).
CHUNK_VALUES = 4096
#: orjson's nesting limit: containers nested deeper are refused ("Recursion limit reached").
_MAX_NESTING = 254


class Returned:
    """What a handler returned, copied to plain JSON data inside the pack boundary.

    ``kind``: not a JSON object (the type's name, for the ``schema_mismatch`` message);
    ``output``: the copied object; ``checks``: a :class:`Result`'s checks as plain dicts
    (``None`` when no Result was returned), ``all_checks`` whether each was a
    :class:`Check`; ``problem``: why the output is not JSON data (it was then copied with
    :func:`~control_plane._kernel.bounds.json_safe` so a returned ``error`` still counts).
    """

    __slots__ = ("all_checks", "checks", "exc", "kind", "output", "problem")

    def __init__(self) -> None:
        self.kind: str | None = None
        self.output: dict[str, Any] = {}
        self.checks: list[dict[str, Any]] | None = None
        self.all_checks = True
        self.problem: str | None = None
        self.exc: BaseException | None = None

    def to_data(self) -> dict[str, Any]:
        """As JSON data (an isolated worker's reply)."""
        return {
            "kind": self.kind,
            "output": self.output,
            "checks": self.checks,
            "all_checks": self.all_checks,
            "problem": self.problem,
        }

    @classmethod
    def from_data(cls, data: Any) -> Returned:
        """Rebuilt from :meth:`to_data` output received from an untrusted peer: every field
        is type-checked; what does not fit the shape makes it a ``schema_mismatch``."""
        copied = cls()
        if not isinstance(data, dict):
            copied.kind = "a malformed reply from its worker"
            return copied
        kind, output, checks = data.get("kind"), data.get("output"), data.get("checks")
        problem = data.get("problem")
        copied.kind = None if kind is None else safe_text(kind, 200)
        copied.output = output if isinstance(output, dict) else {}
        if kind is None and not isinstance(output, dict):
            copied.kind = "a malformed reply from its worker"
        if checks is not None:
            copied.checks = (
                [c for c in checks if isinstance(c, dict)] if isinstance(checks, list) else []
            )
        copied.all_checks = data.get("all_checks") is True
        copied.problem = None if problem is None else safe_text(problem, 2000)
        return copied


def copy_returned(returned: Any) -> Returned:
    """Copy ``returned`` to plain data (see :class:`Returned`). Runs inside the pack
    boundary: a hostile object's methods may raise anything while it is read."""
    if type(returned) is Returned:  # already copied (an isolated worker's reply)
        return returned
    copied = Returned()
    output: Any = returned
    if isinstance(returned, Result):
        output = returned.output
        raw_checks = list(returned.checks)
        copied.all_checks = all(type(c) is Check or isinstance(c, Check) for c in raw_checks)
        copied.checks = [c.to_dict() for c in raw_checks] if copied.all_checks else []
        if type(output) is not dict and not isinstance(output, Mapping):
            copied.kind = f"a Result whose output is {type(output).__name__}"
            return copied
    elif type(output) is not dict and not isinstance(output, Mapping):  # dict: no ABC check
        copied.kind = f"{type(output).__name__}, not a JSON object"
        return copied
    doc = dict(output) if type(output) is not dict else output
    try:
        # One copy as plain JSON data: tuples become lists, subclasses their base types,
        # and what JSON cannot carry (sets, bytes, non-string keys, integers beyond 64 bits,
        # cycles, inf and NaN) is refused here rather than by the transport after the
        # outcome was built.
        # The common case, a small result, straight to one round trip: what _plain(doc, 1)
        # does for it, without its calls; any other (large, or nested past the limit,
        # which _plain refuses) takes _plain.
        measure = _measure(doc)
        if measure is not None and measure[1] <= _MAX_NESTING:
            plain = _round_trip(doc)
        else:
            plain = _plain(doc, 1)
        checks = _plain(copied.checks, 1) if copied.checks else None
    except _NotFinite:
        _refuse(copied, doc, None)
        return copied
    except (TypeError, ValueError, OverflowError) as exc:
        _refuse(copied, doc, exc)
        return copied
    copied.output = plain
    if checks is not None:
        copied.checks = checks
    return copied


class _NotFinite(Exception):
    """A non-finite float, which orjson writes as ``null`` without a word."""


_CONTAINERS = (dict, list, tuple)


def _measure(value: Any) -> tuple[int, int] | None:
    """``(values, nesting)`` of ``value`` when it holds at most :data:`CHUNK_VALUES`
    values, else ``None``; the walk stops there (a cycle included)."""
    count, deepest, level = 1, 1, 1
    containers = _CONTAINERS
    stack: list[tuple[Any, int]] = []
    push = stack.append
    item: Any = value
    while True:
        count += len(item)
        if count > CHUNK_VALUES:
            return None
        inner = level + 1
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, containers):
                push((child, inner))
        if not stack:
            return count, deepest
        item, level = stack.pop()
        deepest = max(deepest, level)


def _container(value: Any) -> bool:
    return isinstance(value, _CONTAINERS)


class LargeResult(dict[str, Any]):
    """A result the copy took piece by piece (more than :data:`CHUNK_VALUES` values):
    its type says so at no cost, so that the server encodes it with
    :func:`encode_result`, off the event loop, and a small one at once."""

    __slots__ = ()


def _pieces(value: Any, level: int) -> tuple[int, int] | None:
    """The measure of ``value`` (a piece one C call may take) or ``None`` (walk into it);
    refuses nesting past orjson's limit, as one call would, wherever the pieces fall."""
    if level > _MAX_NESTING:
        raise TypeError("Recursion limit reached")
    if not _container(value):
        return 0, 0
    measure = _measure(value)
    if measure is not None and level - 1 + measure[1] > _MAX_NESTING:
        raise TypeError("Recursion limit reached")
    return measure


def _round_trip(value: Any) -> Any:
    encoded = orjson.dumps(value)
    copy = orjson.loads(encoded)
    # orjson writes inf and NaN as null without a word: where a null was written, look.
    # A copy equal to the original (compared in C) holds none, since a non-finite float
    # never equals the None written in its place; only a copy that differs for another
    # reason too (tuples became lists, a datetime a string) is walked.
    if b"null" in encoded and copy != value and has_non_finite(value):
        raise _NotFinite
    return copy


def _runs(value: Any, level: int) -> Iterator[tuple[Any, Any, Any]]:
    """A large container's members in order, as ``(run, None, None)`` -- a new container
    of consecutive small members, at most about :data:`CHUNK_VALUES` values, for one C
    call -- or ``(None, key, member)`` for a member too large for one (its key ``None``
    in a list)."""
    pairs = value.items() if isinstance(value, dict) else ((None, item) for item in value)
    run: Any = {} if isinstance(value, dict) else []
    size = 0
    for key, item in pairs:
        measure = _pieces(item, level + 1)
        if measure is None:
            if run:
                yield run, None, None
                run, size = type(run)(), 0
            yield None, key, item
            continue
        if isinstance(run, dict):
            run[key] = item
        else:
            run.append(item)
        size += measure[0] + 1
        if size >= CHUNK_VALUES:
            yield run, None, None
            run, size = type(run)(), 0
    if run:
        yield run, None, None


def _plain(value: Any, level: int) -> Any:
    """``value`` as plain JSON data (the encoder's round trip), piece by piece; raises
    what orjson raises, or :class:`_NotFinite`. ``level``: its container nesting."""
    if _pieces(value, level) is not None:
        return _round_trip(value)
    if isinstance(value, dict):
        out: dict[str, Any] = LargeResult() if level == 1 else {}
        for run, key, item in _runs(value, level):
            if run is not None:
                out.update(_round_trip(run))
            else:
                out[_key(key)] = _plain(item, level + 1)
        return out
    items: list[Any] = []
    for run, _, item in _runs(value, level):
        if run is not None:
            items.extend(_round_trip(run))
        else:
            items.append(_plain(item, level + 1))
    return items


def _key(key: Any) -> str:
    """A dict key as the encoder takes it: a str (a subclass's plain text) or refused."""
    if type(key) is str:
        return key
    copied: dict[str, None] = orjson.loads(orjson.dumps({key: None}))
    return next(iter(copied))


def encode_result(value: Any) -> bytes:
    """``orjson.dumps(value)`` -- the same bytes -- piece by piece for a large value (see
    module docs): for plain JSON data such as an outcome's result; raises what orjson
    raises. Run it off the event loop for a :class:`LargeResult`."""
    return _encode(value, 1)


def _encode(value: Any, level: int) -> bytes:
    if _pieces(value, level) is not None:
        return orjson.dumps(value)
    parts: list[bytes] = []
    for run, key, item in _runs(value, level):
        if run is not None:
            parts.append(orjson.dumps(run)[1:-1])  # the members, without the brackets
        elif isinstance(value, dict):
            parts.append(b"%b:%b" % (orjson.dumps(_key(key)), _encode(item, level + 1)))
        else:
            parts.append(_encode(item, level + 1))
    body = b",".join(parts)
    return b"{%b}" % body if isinstance(value, dict) else b"[%b]" % body


def _refuse(copied: Returned, doc: dict[str, Any], exc: BaseException | None) -> None:
    """The output is not JSON data: say where (the path and the value, see
    :func:`~control_plane._kernel.not_json.first_fault`) and keep a JSON-safe copy, so a
    returned ``error`` still counts."""
    problem = first_fault(doc, "result")
    if problem is None and copied.checks:
        problem = first_fault(copied.checks, "validation.checks")
    if problem is None:
        problem = safe_text(exc, 2000) if exc is not None else "a value JSON cannot carry"
    if exc is not None:
        exc.add_note(f"pack output: {problem}")
    copied.problem = problem
    copied.exc = exc
    copied.output = json_safe(doc)
    copied.checks = json_safe(copied.checks) if copied.checks is not None else None
