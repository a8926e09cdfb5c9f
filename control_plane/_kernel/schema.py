"""Compiled JSON Schema validators (jsonschema-rs) for the per-call checks."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import jsonschema
import jsonschema_rs

from control_plane._kernel.bounds import MAX_PARTIAL_NODES
from control_plane._kernel.errors import FieldViolation
from control_plane._kernel.outside_schema import (
    MAX_CHECK_STEPS,
    admit,
    check_cost,
    outside_schema_fault,
    refuse_retrieval,
)
from control_plane._kernel.redact import scrub

__all__ = ["CompiledSchema", "check_schema", "json_pointer", "linear_pattern_fault"]

_MAX_VIOLATIONS = 20
#: Most schema errors :meth:`CompiledSchema.partial` reads of one output.
_MAX_ERRORS_READ = 1_000
#: Validator messages quote the offending value; a raw body must not travel in them.
_MAX_DESCRIPTION = 200
#: The linear-time engine, for every pattern of every schema; a pattern whose program
#: would pass these sizes is refused (compiling one then costs at most ~15 ms).
_LINEAR = jsonschema_rs.RegexOptions(size_limit=256 * 1024, dfa_size_limit=1024 * 1024)
#: Keywords whose values are data, not schemas: a "pattern" key under them is not a regex.
_DATA_KEYWORDS = frozenset({"const", "enum", "examples", "default"})


def _describe(error: Any) -> str:
    """The validator's message, scrubbed, then cut to :data:`_MAX_DESCRIPTION` characters.

    Messages quote the caller's input (a 1 MB string, say): only a bounded window past
    the cut is scrubbed, so the cost is bounded too, and the secret that straddles the cut
    is still recognised whole.
    """
    return scrub(str(error.message), _MAX_DESCRIPTION)


def json_pointer(path: Iterable[str | int]) -> str:
    """RFC 6901 pointer for a path of keys and indexes (``""`` is the root)."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else ""


def _patterns(node: Any) -> Iterator[str]:
    """Every regular expression in a schema: ``pattern`` values, ``patternProperties`` keys."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield value
            elif key == "patternProperties" and isinstance(value, Mapping):
                yield from (k for k in value if isinstance(k, str))
            yield from _patterns(value)
    elif isinstance(node, list):
        for item in node:
            yield from _patterns(item)


def _pattern_sites(node: Any, path: list[str | int]) -> Iterator[tuple[str, str, str]]:
    """``(pointer, keyword, regex)`` for every regex of a schema, data keywords skipped."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in _DATA_KEYWORDS:
                continue
            if key == "pattern" and isinstance(value, str):
                yield json_pointer([*path, key]), "pattern", value
            elif key == "patternProperties" and isinstance(value, Mapping):
                for regex in value:
                    if isinstance(regex, str):
                        where = json_pointer([*path, key, regex])
                        yield where, "patternProperties", regex
            yield from _pattern_sites(value, [*path, str(key)])
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _pattern_sites(item, [*path, index])


def linear_pattern_fault(schema: Mapping[str, Any]) -> str | None:
    """The first regex of ``schema`` the linear-time engine cannot run, said with its
    JSON pointer (``/properties/name/pattern: ...``), or None."""
    for where, keyword, regex in _pattern_sites(schema, []):
        probe = {"pattern": regex} if keyword == "pattern" else {keyword: {regex: True}}
        try:
            _compile(probe)
        except ValueError:
            return (
                f"{where or '/'}: the regular expression needs a backtracking engine "
                "(a backreference or a lookaround) or is too large for the linear-time "
                "one, which every schema's patterns run on"
            )
    return None


def _compile(schema: dict[str, Any]) -> Any:
    """jsonschema-rs's validator: linear-time patterns, nothing retrieved from anywhere."""
    return jsonschema_rs.validator_for(schema, pattern_options=_LINEAR, retriever=refuse_retrieval)


def _quick_check(schema: dict[str, Any]) -> bool:
    """True when ``schema`` surely passes :func:`check_schema` (microseconds, not ms).

    ``jsonschema-rs`` meta-validates and compiles it, and every regex compiles under
    Python's ``re`` too (what the ``regex`` format check of the pure-Python meta-validation
    adds). ``False`` sends the schema down the full path, which words the fault.
    """
    try:
        if not jsonschema_rs.meta.is_valid(schema):
            return False
        _compile(schema)
        for pattern in _patterns(schema):
            re.compile(pattern)
    except (ValueError, re.error, jsonschema_rs.ReferencingError):
        return False
    return True


def check_schema(schema: Mapping[str, Any]) -> str | None:
    """Meta-validate a schema against its draft (2020-12 by default); the fault or None.

    Every schema passes :func:`~control_plane._kernel.outside_schema.outside_schema_fault`
    first (nothing fetched, bounded size and expansion) and every regex must run on the
    linear-time engine; a fault that starts with ``/`` names its place.
    """
    fault = outside_schema_fault(schema)
    if fault is not None:
        return fault
    if _quick_check(dict(schema)):
        return None
    fault = linear_pattern_fault(schema)
    if fault is not None:
        return fault
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(dict(schema))
    except jsonschema.SchemaError as exc:
        where = json_pointer(exc.absolute_path) or "/"
        return f"invalid JSON Schema at {where}: {exc.message}"
    try:
        _compile(dict(schema))
    except (ValueError, jsonschema_rs.ReferencingError) as exc:
        return f"JSON Schema does not compile: {exc}"
    return None


#: Schema positions per value (references followed) up to which checking a document costs
#: about what walking it in Python would: no bound is computed for such a schema.
CHEAP_WEIGHT = 16


class CompiledSchema:
    """A schema compiled once; ``is_valid`` costs microseconds.

    Raises ``ValueError`` for a schema :func:`outside_schema_fault` refuses or that does
    not compile (call :func:`check_schema` first for the worded fault); patterns run on
    the linear-time engine and nothing is retrieved.
    """

    __slots__ = ("_heaviest", "_validator", "cheap", "is_valid", "schema", "weights")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = dict(schema)
        #: Positions per instance depth (:func:`~control_plane._kernel.outside_schema.admit`).
        self.weights = admit(self.schema)
        self._heaviest = max(self.weights)
        #: At most :data:`CHEAP_WEIGHT` positions per value: :meth:`check_fault` has nothing
        #: to say (decided once, here, not per call).
        self.cheap = self._heaviest <= CHEAP_WEIGHT
        try:
            self._validator = _compile(self.schema)
        except jsonschema_rs.ReferencingError as exc:
            raise ValueError(str(exc)) from None
        #: Whether an instance is valid: the compiled validator's own method, no wrapper.
        self.is_valid: Callable[[Any], bool] = self._validator.is_valid

    def cost_fault(self, instance: Any, size: int | None = None) -> str | None:
        """Why checking ``instance`` would take too long (the validator holds the GIL: the
        whole server would wait), or None. ``size``: the instance's JSON length, a cheap
        upper bound on its values (no walk when it is small enough)."""
        if size is not None and self._heaviest * max(size, 1) <= MAX_CHECK_STEPS:
            return None
        steps = check_cost(self.weights, instance)
        if steps is None:
            return None
        return (
            f"checking it against the schema would take more than {MAX_CHECK_STEPS} steps "
            f"(a schema of {sum(self.weights)} positions, with its references followed, "
            "over that many values)"
        )

    def check_fault(self, instance: Any, raw: bytes | str | None = None) -> str | None:
        """:meth:`cost_fault` for a pack's input or output, at a cost below the check's own:
        a schema of at most :data:`CHEAP_WEIGHT` positions per value is checked at about
        the cost of walking the document (no bound is computed); else, given the ``raw``
        JSON, its values are counted from its separators (an upper bound, C-speed) and a
        document that could cost more than the budget is refused without a walk."""
        if self.cheap:
            return None
        heaviest = self._heaviest
        if raw is None:
            return self.cost_fault(instance)
        if isinstance(raw, bytes):
            values = 1 + raw.count(b",") + raw.count(b"[") + raw.count(b":")
        else:
            values = 1 + raw.count(",") + raw.count("[") + raw.count(":")
        if heaviest * values <= MAX_CHECK_STEPS:
            return None
        return (
            f"checking it against the schema could take more than {MAX_CHECK_STEPS} steps "
            f"(up to {heaviest} schema positions, with its references followed, for each of "
            f"up to {values} values)"
        )

    def violations(self, instance: Any) -> list[FieldViolation]:
        """Field-level violations, JSON pointers into ``instance``; at most 20."""
        out: list[FieldViolation] = []
        for error in self._validator.iter_errors(instance):
            out.append(FieldViolation(json_pointer(error.instance_path), _describe(error)))
            if len(out) >= _MAX_VIOLATIONS:
                break
        return out

    def partial(self, instance: Mapping[str, Any]) -> tuple[dict[str, Any], list[FieldViolation]]:
        """The top-level fields of ``instance`` that broke no rule, and the violations.

        Fields a root-level ``additionalProperties``/``unevaluatedProperties: false`` rejects
        count as broken too.
        """
        bad: set[str] = set()
        violations: list[FieldViolation] = []
        for count, error in enumerate(self._validator.iter_errors(instance)):
            if count >= _MAX_ERRORS_READ:  # bounded work: past this, no field is vouched for
                more = f"more than {_MAX_ERRORS_READ} violations; no field of the output is kept"
                return {}, [*violations, FieldViolation("", more)]
            path = list(error.instance_path)
            if path:
                bad.add(str(path[0]))
            else:
                unexpected = getattr(error.kind, "unexpected", None)
                if isinstance(unexpected, list):
                    bad.update(str(key) for key in unexpected)
            if len(violations) < _MAX_VIOLATIONS:
                violations.append(FieldViolation(json_pointer(path), _describe(error)))
        # At most MAX_PARTIAL_NODES fields: the partial result keeps no more values anyway.
        fields = itertools.islice(instance.items(), MAX_PARTIAL_NODES)
        return {k: v for k, v in fields if k not in bad}, violations
