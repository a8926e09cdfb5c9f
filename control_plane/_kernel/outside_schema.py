"""The one gate every JSON Schema passes before any validator library sees it.

A schema may come from outside the server: a caller's ``json_schema`` (http.fetch), the
``inputSchema``/``outputSchema`` an MCP server lists for its tools, a third-party pack's
schemas. Validator libraries do more with a schema than check it: jsonschema-rs fetches
an unknown ``$schema`` URI and remote ``$ref`` targets over HTTP (and reads ``file://``),
its compile time grows with the square of a chain of references, its validation time with
the number of paths through them (two references to the next of 30 definitions: 2**30
checks per value), and it recurses natively. :func:`outside_schema_fault` measures all of
that in Python, iteratively and within a fixed budget, and says why a schema is refused;
:mod:`control_plane._kernel.schema` compiles nothing it has not admitted.

What is admitted (docs/packs/http.fetch.md, docs/mcp.md):

* ``$ref``/``$dynamicRef``/``$recursiveRef`` only to the document itself (``#``, ``#/json/
  pointer``, ``#anchor``), each one resolving; ``$schema`` only a standard draft;
  ``$id`` only at the root (it cannot move a reference's base elsewhere).
* At most :data:`MAX_NODES` JSON values, :data:`MAX_TEXT` characters of keys and strings,
  :data:`MAX_DEPTH` levels of nesting, :data:`MAX_PATTERN` characters per regex.
* The schema as a validator walks it from the root (``$defs`` reached by reference only),
  every reference followed (a reference back into a schema being expanded counts once:
  recursion consumes the instance): at most
  :data:`MAX_EXPANDED` positions (the work per value of the instance) and at most
  :data:`MAX_CHAIN` levels deep (the validator's native recursion per value), with at most
  :data:`MAX_PATTERNS` regexes to compile (and at most that many in the document).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final
from urllib.parse import unquote

__all__ = [
    "KNOWN_DIALECTS",
    "MAX_CHAIN",
    "MAX_CHECK_STEPS",
    "MAX_DEPTH",
    "MAX_EXPANDED",
    "MAX_NODES",
    "MAX_PATTERN",
    "MAX_PATTERNS",
    "MAX_TEXT",
    "admit",
    "check_cost",
    "outside_schema_fault",
    "refuse_retrieval",
]

#: JSON values (objects, arrays, strings, numbers...) in one schema document.
MAX_NODES: Final = 50_000
#: Characters of keys and strings in one schema document.
MAX_TEXT: Final = 1_000_000
#: Levels of nesting of the JSON document.
MAX_DEPTH: Final = 64
#: Schema positions a validator visits per value, every reference followed.
MAX_EXPANDED: Final = 20_000
#: Levels deep that walk goes (nesting and reference hops together).
MAX_CHAIN: Final = 256
#: Steps (a schema position checked against a value) one check of an instance may take,
#: estimated before it runs (:func:`check_cost`): the validator holds the GIL throughout,
#: and a ref-heavy position costs ~13 ns a value, so ~0.7 s at most.
MAX_CHECK_STEPS: Final = 50_000_000
#: Characters in one ``pattern`` or ``patternProperties`` regex.
MAX_PATTERN: Final = 2_000
#: Regexes a validator compiles for one schema (each reference to one compiles it again):
#: each costs up to ~15 ms on the linear-time engine with its size limits.
MAX_PATTERNS: Final = 64

#: The ``$schema`` values admitted: the drafts validators know without fetching anything.
KNOWN_DIALECTS: Final = frozenset(
    f"{scheme}://json-schema.org/{draft}{end}"
    for scheme in ("http", "https")
    for draft in (
        "draft-04/schema",
        "draft-06/schema",
        "draft-07/schema",
        "draft/2019-09/schema",
        "draft/2020-12/schema",
    )
    for end in ("", "#")
)
_REF_KEYS: Final = ("$ref", "$dynamicRef", "$recursiveRef")
#: Keywords whose values are data, never schemas: nothing under them is a keyword.
_DATA_KEYWORDS: Final = frozenset(
    {"const", "enum", "examples", "default", "$comment", "$vocabulary", "description", "title"}
)
#: Keywords whose values map names (not keywords) to schemas.
_NAMED_SCHEMAS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
#: Keywords whose schemas are checked against the value's members (items, properties,
#: keys), not the value itself.
_MEMBER_KEYWORDS: Final = frozenset(
    {
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "items",
        "prefixItems",
        "additionalItems",
        "unevaluatedItems",
        "contains",
    }
)
#: Where reusable schemas live: a validator reaches them through references only.
_DEFINITIONS: Final = frozenset({"$defs", "definitions"})
_ANCHOR_KEYS: Final = ("$anchor", "$dynamicAnchor")
_SHOWN = 120


def refuse_retrieval(uri: str) -> Any:
    """The retriever handed to jsonschema-rs: nothing outside the document is fetched."""
    raise ValueError(f"{uri[:_SHOWN]!r} is outside the schema: nothing is fetched")


def _pointer(path: tuple[str | int, ...]) -> str:
    if not path:
        return "/"
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _shown(text: str) -> str:
    return repr(text[:_SHOWN] + ("..." if len(text) > _SHOWN else ""))


def outside_schema_fault(schema: Any) -> str | None:
    """Why ``schema`` may not reach a validator library (said with its JSON pointer), or
    ``None``. Iterative; its own work is bounded by the limits it checks."""
    return _gate(schema, [])


def admit(schema: Any) -> tuple[int, ...]:
    """The schema's positions per instance depth (``[0]``: those checked against the value
    itself, ``[1]``: against its members...; :func:`check_cost`), or ``ValueError`` with
    :func:`outside_schema_fault`'s fault."""
    weights: list[int] = []
    fault = _gate(schema, weights)
    if fault is not None:
        raise ValueError(fault)
    return tuple(weights) or (1,)


def check_cost(
    weights: tuple[int, ...], instance: Any, budget: int = MAX_CHECK_STEPS
) -> int | None:
    """``None`` when checking ``instance`` against a schema of ``weights`` costs at most
    ``budget`` steps (a schema position checked against a value), else the steps counted
    when the budget ran out. Each value is charged every position at its depth (past the
    schema's last depth, a recursion: the largest); iterative, it stops at the budget."""
    deepest = max(weights)
    steps = 0
    stack: list[tuple[Any, int]] = [(instance, 0)]
    while stack:
        value, depth = stack.pop()
        steps += weights[depth] if depth < len(weights) else deepest
        if steps > budget:
            return steps
        if isinstance(value, Mapping):
            stack.extend((member, depth + 1) for member in value.values())
        elif isinstance(value, list | tuple):
            stack.extend((member, depth + 1) for member in value)
    return None


def _gate(schema: Any, weights: list[int]) -> str | None:
    if isinstance(schema, bool):
        return None
    if not isinstance(schema, Mapping):
        return "/: a JSON Schema is an object or a boolean"
    fault = _size_fault(schema)
    if fault is not None:
        return fault
    anchors: dict[str, Any] = {}
    fault = _keyword_fault(schema, anchors)
    if fault is not None:
        return fault
    return _expansion_fault(schema, anchors, weights)


def _size_fault(schema: Mapping[str, Any]) -> str | None:
    """Nodes, characters, nesting of the raw document: one pass, no recursion."""
    nodes = 0
    text = 0
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            return f"/: the schema has more than {MAX_NODES} JSON values"
        if depth > MAX_DEPTH:
            return f"/: the schema is nested deeper than {MAX_DEPTH} levels"
        if isinstance(node, str):
            text += len(node)
        elif isinstance(node, Mapping):
            for key, value in node.items():
                text += len(key) if isinstance(key, str) else 0
                stack.append((value, depth + 1))
        elif isinstance(node, list | tuple):
            stack.extend((item, depth + 1) for item in node)
        if text > MAX_TEXT:
            return f"/: the schema has more than {MAX_TEXT} characters of keys and strings"
    return None


def _subschemas(
    node: Mapping[str, Any], path: tuple[str | int, ...], *, definitions: bool = True
) -> Iterator[tuple[Any, tuple[str | int, ...]]]:
    """The values under ``node``'s keywords a validator reads as schemas (unknown keywords
    included: a reference under one is still refused when it leaves the document);
    ``definitions=False``: not the ``$defs``/``definitions`` (reached by reference only)."""
    for key, value in node.items():
        if key in _DATA_KEYWORDS or key in _REF_KEYS:
            continue
        if not definitions and key in _DEFINITIONS:
            continue
        if key in _NAMED_SCHEMAS and isinstance(value, Mapping):
            for name, sub in value.items():
                if isinstance(sub, Mapping | bool):
                    yield sub, (*path, key, name)
        elif isinstance(value, Mapping):
            yield value, (*path, key)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, Mapping | bool):
                    yield item, (*path, key, index)


def _keyword_fault(schema: Mapping[str, Any], anchors: dict[str, Any]) -> str | None:
    """References that leave the document, dialects and ``$id`` s that would fetch, regexes
    too long (at most :data:`MAX_PATTERNS` in the document); collects the anchors
    references may name."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(schema, ())]
    patterns = 0
    while stack:
        node, path = stack.pop()
        if not isinstance(node, Mapping):
            continue
        fault = _node_fault(node, path, root=node is schema)
        if fault is not None:
            return fault
        patterns += _regex_count(node)
        if patterns > MAX_PATTERNS:
            return f"/: the schema has more than {MAX_PATTERNS} regular expressions"
        for key in _ANCHOR_KEYS:
            name = node.get(key)
            if isinstance(name, str):
                anchors.setdefault(name, node)
        stack.extend(_subschemas(node, path))
    return None


def _node_fault(node: Mapping[str, Any], path: tuple[str | int, ...], *, root: bool) -> str | None:
    where = _pointer(path)
    for key in _REF_KEYS:
        ref = node.get(key)
        if isinstance(ref, str) and not ref.startswith("#"):
            return (
                f"{where}: {key} {_shown(ref)} points outside the schema: only local "
                "references ('#', '#/...', '#anchor') are accepted; nothing is fetched"
            )
    dialect = node.get("$schema")
    if isinstance(dialect, str) and dialect not in KNOWN_DIALECTS:
        return (
            f"{where}: $schema {_shown(dialect)} is outside the schema: only the standard "
            "drafts (draft-04 to 2020-12) are accepted; nothing is fetched"
        )
    if not root and isinstance(node.get("$id"), str):
        return f"{where}: $id is accepted only at the root of the schema"
    if isinstance(node.get("pattern"), str) and len(node["pattern"]) > MAX_PATTERN:
        return f"{_pointer((*path, 'pattern'))}: a regex longer than {MAX_PATTERN} characters"
    named = node.get("patternProperties")
    if isinstance(named, Mapping):
        for regex in named:
            if isinstance(regex, str) and len(regex) > MAX_PATTERN:
                where = _pointer((*path, "patternProperties"))
                return f"{where}: a regex longer than {MAX_PATTERN} characters"
    return None


def _resolve(root: Mapping[str, Any], ref: str, anchors: Mapping[str, Any]) -> Any:
    """The node a local reference names, or ``None`` when it names nothing."""
    fragment = unquote(ref[1:])
    if fragment == "":
        return root
    if not fragment.startswith("/"):
        return anchors.get(fragment)
    node: Any = root
    for raw in fragment[1:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _expansion_fault(
    root: Mapping[str, Any], anchors: Mapping[str, Any], weights: list[int]
) -> str | None:
    """Walk the schema as a validator does, following every reference; stop at the budget.
    ``weights[d]`` counts the positions met at instance depth ``d``.

    A reference to a node already being expanded on the current path is a recursion (it
    consumes the instance, or the validator stops it): it counts once and is not followed.
    """
    visited = 0
    patterns = 0
    # (node, depth, path, instance depth) to expand; (None, 0, id, 0) leaves the
    # expansion of target ``id``.
    stack: list[tuple[Any, int, Any, int]] = [(root, 1, (), 0)]
    expanding: set[int] = set()
    while stack:
        node, depth, path, level = stack.pop()
        if node is None and depth == 0:
            expanding.discard(path)
            continue
        visited += 1
        while len(weights) <= level:
            weights.append(0)
        weights[level] += 1
        if visited > MAX_EXPANDED:
            return (
                f"/: with its references followed the schema has more than {MAX_EXPANDED} "
                "schema positions to compile and check values against"
            )
        if depth > MAX_CHAIN:
            return (
                f"{_pointer(path)}: with its references followed the schema is nested deeper "
                f"than {MAX_CHAIN} levels (a chain of references)"
            )
        if not isinstance(node, Mapping):
            continue
        fault = _node_fault(node, path, root=node is root)
        if fault is not None:
            return fault
        patterns += _regex_count(node)
        if patterns > MAX_PATTERNS:
            return (
                f"/: with its references followed the schema has more than {MAX_PATTERNS} "
                "regular expressions to compile"
            )
        for key in _REF_KEYS:
            ref = node.get(key)
            if not isinstance(ref, str):
                continue
            target = _resolve(root, ref, anchors)
            if target is None and key == "$ref":
                return f"{_pointer(path)}: $ref {_shown(ref)} names nothing in the schema"
            if target is None or id(target) in expanding or not isinstance(target, Mapping):
                continue
            expanding.add(id(target))
            stack.append((None, 0, id(target), 0))
            stack.append((target, depth + 1, (*path, key), level))
        for sub, where in _subschemas(node, path, definitions=False):
            below = level + 1 if where[len(path)] in _MEMBER_KEYWORDS else level
            stack.append((sub, depth + 1, where, below))
    return None


def _regex_count(node: Mapping[str, Any]) -> int:
    named = node.get("patternProperties")
    return int(isinstance(node.get("pattern"), str)) + (
        len(named) if isinstance(named, Mapping) else 0
    )
