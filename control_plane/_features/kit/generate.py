"""Inputs drawn from a pack's input schema (``hypothesis`` + ``hypothesis-jsonschema``).

Imported lazily: the kit's static checks and the CLI need neither library.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["minimal_input", "run_generated"]


def _simple(schema: Any, depth: int = 0) -> Any:
    """A small instance built from the schema's own words (examples, default, const,
    enum, required properties); ``_MISSING`` when it cannot tell."""
    if not isinstance(schema, Mapping) or depth > 8:
        return _MISSING
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    for key in ("examples", "enum"):
        values = schema.get(key)
        if isinstance(values, list) and values:
            return values[0]
    kind = schema.get("type", "object" if "properties" in schema else None)
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind == "object":
        props = schema.get("properties", {})
        out: dict[str, Any] = {}
        for name in schema.get("required", []):
            value = _simple(props.get(name, {}), depth + 1) if isinstance(props, Mapping) else {}
            if value is _MISSING:
                return _MISSING
            out[name] = value
        return out
    if kind == "string":
        return "a" * int(schema.get("minLength", 1) or 1)
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
        return int(low) if kind == "integer" else float(low)
    if kind == "boolean":
        return False
    if kind == "array":
        return [] if not schema.get("minItems") else _MISSING
    if kind == "null":
        return None
    return _MISSING


_MISSING: Any = object()


def minimal_input(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A small object the input schema admits: built from the schema's examples, defaults
    and required properties when that validates, else the first one hypothesis finds."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(dict(schema))
    simple = _simple(schema)
    if isinstance(simple, dict) and validator.is_valid(simple):
        return simple
    if validator.is_valid({}):
        return {}
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample, Unsatisfiable
    from hypothesis_jsonschema import from_schema

    try:
        found = find(
            from_schema(dict(schema)),
            lambda doc: isinstance(doc, dict),
            settings=settings(
                database=None,
                suppress_health_check=list(HealthCheck),
                phases=[Phase.generate],  # the first example found; no shrinking
            ),
        )
    except (NoSuchExample, Unsatisfiable):
        return {}
    return dict(found) if isinstance(found, dict) else {}


def run_generated(
    schema: Mapping[str, Any],
    faults: Sequence[str | None],
    check: Callable[[dict[str, Any], str | None], None],
    max_examples: int,
) -> None:
    """Call ``check(doc, fault)`` for generated inputs and faults; hypothesis shrinks a
    failure to the smallest input and re-raises it. Derandomized: CI sees one sequence."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st
    from hypothesis_jsonschema import from_schema

    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        # No "explain" phase: it re-runs the pack many times only to annotate lines.
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
    )
    @given(doc=from_schema(dict(schema)), fault=st.sampled_from(list(faults)))
    def generated(doc: Any, fault: str | None) -> None:
        if isinstance(doc, dict):
            check(doc, fault)

    generated()
