"""What a handler returned, as plain data: the one copy the pack boundary makes.

The invoke pipeline copies a handler's return value inside the pack boundary, before
anything else touches it (a returned object's methods may raise anything, ``SystemExit``
included). Isolated workers make the same copy in the worker and send it as JSON
(:meth:`Returned.to_data` / :meth:`Returned.from_data`), so the parent never runs code of
an object the pack built.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from control_plane.core.bounds import json_safe, safe_text
from control_plane.core.not_json import first_fault, has_non_finite
from control_plane.core.pack import Check, Result

__all__ = ["Returned", "copy_returned"]


class Returned:
    """What a handler returned, copied to plain JSON data inside the pack boundary.

    ``kind``: not a JSON object (the type's name, for the ``schema_mismatch`` message);
    ``output``: the copied object; ``checks``: a :class:`Result`'s checks as plain dicts
    (``None`` when no Result was returned), ``all_checks`` whether each was a
    :class:`Check`; ``problem``: why the output is not JSON data (it was then copied with
    :func:`~control_plane.core.bounds.json_safe` so a returned ``error`` still counts).
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
        if not isinstance(output, Mapping):
            copied.kind = f"a Result whose output is {type(output).__name__}"
            return copied
    elif not isinstance(output, Mapping):
        copied.kind = f"{type(output).__name__}, not a JSON object"
        return copied
    doc = dict(output) if type(output) is not dict else output
    try:
        # One copy as plain JSON data: tuples become lists, subclasses their base types,
        # and what JSON cannot carry (sets, bytes, non-string keys, integers beyond 64 bits,
        # cycles) is refused here rather than by the transport after the outcome was built.
        encoded = orjson.dumps(doc)
        checks = orjson.dumps(copied.checks) if copied.checks else None
    except (TypeError, ValueError, OverflowError) as exc:
        _refuse(copied, doc, exc)
        return copied
    output_copy = orjson.loads(encoded)
    checks_copy = orjson.loads(checks) if checks is not None else None
    # orjson writes inf and NaN as null without a word: where a null was written, look.
    if _maybe_non_finite(encoded, output_copy, doc) or (
        checks is not None and _maybe_non_finite(checks, checks_copy, copied.checks)
    ):
        _refuse(copied, doc, None)
        return copied
    copied.output = output_copy
    if checks_copy is not None:
        copied.checks = checks_copy
    return copied


def _maybe_non_finite(encoded: bytes, copy: Any, original: Any) -> bool:
    """Whether ``original`` holds an inf or NaN that orjson wrote as ``null``.

    Only where a ``null`` was written; then a copy equal to the original (compared in C)
    has none, since a non-finite float never equals the ``None`` written in its place.
    A copy that differs for another reason (tuples became lists, a datetime a string)
    is checked by :func:`~control_plane.core.not_json.has_non_finite`."""
    return b"null" in encoded and copy != original and has_non_finite(original)


def _refuse(copied: Returned, doc: dict[str, Any], exc: BaseException | None) -> None:
    """The output is not JSON data: say where (the path and the value, see
    :func:`~control_plane.core.not_json.first_fault`) and keep a JSON-safe copy, so a
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
