"""Packs as MCP tools, as plain data: names, schemas, descriptions, call results (docs/mcp.md)."""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from control_plane._features.grpc.client import PackDescription
from control_plane._kernel.errors import FieldViolation, RequestRejected
from control_plane._kernel.outcome import ErrorEnvelope, Outcome
from control_plane._kernel.redact import scrub
from control_plane._kernel.registry import validation_field_schema
from control_plane._kernel.rejection import REASONS, Rejection
from control_plane._kernel.vocabulary import CodeInfo

__all__ = [
    "REJECTION_REASONS",
    "ControlArgs",
    "ToolNaming",
    "ToolSpec",
    "action_line",
    "build_tools",
    "error_content",
    "malformed_call",
    "rejected_content",
    "success_content",
    "tool_name",
]

ToolNaming = Literal["dotted", "underscore"]

#: MCP tool names: 1-128 characters out of ``[A-Za-z0-9_.-]``.
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_NOT_TOOL_CHAR = re.compile(r"[^A-Za-z0-9_.-]")

#: Why a call never reached the pack: a closed set, outside the pack's vocabulary.
#: The control plane's own rejection vocabulary (``schemas/rejections.json``).
REJECTION_REASONS: tuple[str, ...] = tuple(REASONS)

#: Control arguments and the names tried, in order, when a pack already uses one.
_CONTROL_CANDIDATES: Mapping[str, tuple[str, ...]] = {
    "strict": ("strict", "_strict", "__strict", "mcp_strict"),
    "fail_on": ("fail_on", "_fail_on", "__fail_on", "mcp_fail_on"),
}

#: The URI base under which a pack's output schema is embedded (its local ``$ref``s keep
#: resolving against it rather than against the tool's output schema).
_EMBED_BASE = "urn:capability-packs:pack:"

#: Per baseline code: what an agent should do, in a few words, for tool descriptions.


@dataclass(frozen=True, slots=True)
class ControlArgs:
    """The names under which a tool accepts the control arguments (``None``: not offered)."""

    strict: str | None = None
    fail_on: str | None = None

    def names(self) -> tuple[str, ...]:
        return tuple(n for n in (self.strict, self.fail_on) if n is not None)


@dataclass(frozen=True)
class ToolSpec:
    """One pack exposed as one MCP tool."""

    name: str
    pack: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    vocabulary: Mapping[str, CodeInfo]
    control: ControlArgs = field(default_factory=ControlArgs)

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(self.vocabulary)

    def split_arguments(
        self, arguments: Mapping[str, Any] | None
    ) -> tuple[dict[str, Any], bool, Literal["fail", "warn"], list[FieldViolation]]:
        """The pack's input document, ``strict``, ``fail_on`` and control-argument faults."""
        doc = dict(arguments or {})
        faults: list[FieldViolation] = []
        strict = False
        fail_on: Literal["fail", "warn"] = "fail"
        if self.control.strict is not None and self.control.strict in doc:
            value = doc.pop(self.control.strict)
            if isinstance(value, bool):
                strict = value
            else:
                faults.append(FieldViolation(f"/{self.control.strict}", "must be a boolean"))
        if self.control.fail_on is not None and self.control.fail_on in doc:
            value = doc.pop(self.control.fail_on)
            if value in ("fail", "warn"):
                fail_on = value
            else:
                faults.append(
                    FieldViolation(f"/{self.control.fail_on}", 'must be "fail" or "warn"')
                )
        return doc, strict, fail_on, faults


# -- names -----------------------------------------------------------------------------


def tool_name(pack: str, naming: ToolNaming = "dotted") -> str:
    """The MCP tool name of ``pack``: the dotted name when valid, else sanitised."""
    name = pack.replace(".", "_") if naming == "underscore" else pack
    if _TOOL_NAME.match(name):
        return name
    return (_NOT_TOOL_CHAR.sub("_", name) or "pack")[:128]


def _unique_names(packs: Sequence[str], naming: ToolNaming) -> dict[str, str]:
    """Pack -> tool name, independent of the catalogue's order.

    A pack whose name is its tool name keeps it; packs whose names were mangled onto the
    same tool name (``a.b_c`` and ``a_b.c`` under underscore naming) each get a suffix made
    from their own pack name (``-`` and 8 hex digits of its SHA-256, longer should that be
    taken), so a suffixed name always stands for the same pack, whatever else is listed.
    """
    bases = {pack: tool_name(pack, naming) for pack in packs}
    claims: dict[str, int] = {}
    for base in bases.values():
        claims[base] = claims.get(base, 0) + 1
    names: dict[str, str] = {}
    taken: set[str] = set()
    later: list[str] = []
    for pack, base in bases.items():
        if claims[base] == 1 or base == pack:
            names[pack] = base
            taken.add(base)
        else:
            later.append(pack)
    for pack in sorted(later):
        base = bases[pack]
        digest = hashlib.sha256(pack.encode()).hexdigest()
        for width in range(8, len(digest) + 1, 4):
            suffix = f"-{digest[:width]}"
            name = base[: 128 - len(suffix)] + suffix
            if name not in taken:
                break
        names[pack] = name
        taken.add(name)
    return names


# -- schemas ---------------------------------------------------------------------------


def _props(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, Mapping) else {}


def _control_args(input_schema: Mapping[str, Any], validates: bool) -> ControlArgs:
    """Names for ``strict``/``fail_on`` that collide with nothing, or none at all.

    Not offered when the pack does not validate, nor when the root of its input schema
    delegates (``$ref``, ``allOf``...) without properties of its own: an extra argument
    could not be declared next to a closed object it cannot see.
    """
    if not validates:
        return ControlArgs()
    delegates = any(k in input_schema for k in ("$ref", "allOf", "anyOf", "oneOf"))
    if delegates and "properties" not in input_schema:
        return ControlArgs()
    used = set(_props(input_schema))
    chosen: dict[str, str | None] = {}
    for arg, candidates in _CONTROL_CANDIDATES.items():
        chosen[arg] = next((c for c in candidates if c not in used), None)
    return ControlArgs(strict=chosen["strict"], fail_on=chosen["fail_on"])


def _tool_input_schema(input_schema: Mapping[str, Any], control: ControlArgs) -> dict[str, Any]:
    schema = copy.deepcopy(dict(input_schema))
    schema.setdefault("type", "object")
    if control.names():
        props = dict(_props(schema))
        if control.strict is not None:
            props[control.strict] = {
                "type": "boolean",
                "default": False,
                "description": "Strict mode: fail findings of the pack's validation turn the "
                "call into the error artifact_failed (default false: findings are data).",
            }
        if control.fail_on is not None:
            props[control.fail_on] = {
                "enum": ["fail", "warn"],
                "default": "fail",
                "description": "With strict: the severity that fails the call (warn also "
                "fails on warnings).",
            }
        schema["properties"] = props
    return schema


def _result_schema(pack: str, output_schema: Mapping[str, Any]) -> dict[str, Any]:
    """The pack's output schema as the ``result`` of a success (no error, no validation)."""
    schema = copy.deepcopy(dict(output_schema))
    props = dict(_props(schema))
    props.pop("error", None)
    props.pop("validation", None)
    if "properties" in schema:
        schema["properties"] = props
    required = schema.get("required")
    if isinstance(required, list):
        schema["required"] = [r for r in required if r not in ("error", "validation")]
    # Local $refs ("#/$defs/...") must keep resolving inside the embedded copy.
    schema.setdefault("$id", f"{_EMBED_BASE}{pack}:output")
    return schema


def _violations_schema(field: dict[str, Any]) -> dict[str, Any]:
    """A list of ``{"field", "description"}`` violations, ``field`` described by ``field``."""
    return {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["field", "description"],
            "properties": {"field": field, "description": {"type": "string"}},
        },
    }


def _envelope_schema(vocabulary: Mapping[str, CodeInfo]) -> dict[str, Any]:
    codes = list(vocabulary)
    check = validation_field_schema()["properties"]["checks"]
    return {
        "type": "object",
        "description": "The typed error: branch on code (closed set), honour retryable and "
        "retry_after.",
        "required": ["code", "message", "retryable"],
        "properties": {
            "code": {
                "enum": codes,
                "description": "One of the pack's declared codes; never anything else. "
                + "; ".join(
                    f"{c}: {'retryable' if i.retryable else 'permanent'}"
                    for c, i in vocabulary.items()
                ),
            },
            "message": {"type": "string", "description": "Human-readable, scrubbed of secrets."},
            "retryable": {"type": "boolean"},
            "retry_after": {
                "type": "number",
                "minimum": 0,
                "description": "Seconds to wait before retrying (rate_limited).",
            },
            "reference_id": {
                "type": "string",
                "description": "Quote to the operator (internal_error); the detail stays "
                "server-side.",
            },
            "recovery_hint": {"type": "string"},
            "origin": {"type": "string"},
            "detail": {"type": "string"},
            "partial": {"const": True},
            "partial_result": {"type": "object"},
            "violations": _violations_schema({"type": "string"}),
            "checks": check,
        },
    }


def _rejection_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "The call never reached the pack.",
        "required": ["reason", "message", "retryable"],
        "properties": {
            "reason": {"enum": list(REJECTION_REASONS)},
            "message": {"type": "string"},
            "retryable": {"type": "boolean"},
            "recovery_hint": {"type": "string"},
            "retry_after": {"type": "number", "minimum": 0},
            "violations": _violations_schema(
                {"type": "string", "description": "JSON pointer into the input"}
            ),
        },
    }


def _tool_output_schema(desc: PackDescription) -> dict[str, Any]:
    props: dict[str, Any] = {
        "ok": {
            "type": "boolean",
            "description": "true: result is set; false: error (the pack failed) or rejected.",
        },
        "pack": {"type": "string"},
        "version": {"type": "string"},
        "request_id": {"type": "string"},
        "result": _result_schema(desc.name, desc.output_schema),
    }
    if desc.validates:
        props["validation"] = validation_field_schema()
    props["error"] = _envelope_schema(desc.vocabulary)
    props["rejected"] = _rejection_schema()
    return {"type": "object", "required": ["ok"], "properties": props, **_OK_TIES}


# ``ok`` decides which field is set: ``ok: true`` has ``result`` and neither ``error`` nor
# ``rejected``; ``ok: false`` has exactly one of ``error`` / ``rejected`` and no ``result``.
# (Without this, ``{"ok": false}`` alone validated.)
_OK_TIES: dict[str, Any] = {
    "if": {"properties": {"ok": {"const": True}}},
    "then": {
        "required": ["result"],
        "not": {"anyOf": [{"required": ["error"]}, {"required": ["rejected"]}]},
    },
    "else": {
        "oneOf": [{"required": ["error"]}, {"required": ["rejected"]}],
        "not": {"required": ["result"]},
    },
}


# -- descriptions ----------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _short(text: str, limit: int = 300) -> str:
    """One line of at most ``limit`` characters (validator messages may quote whole inputs)."""
    line = _one_line(text)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _code_line(info: CodeInfo) -> str:
    kind = "retryable" if info.retryable else "permanent"
    what = _one_line(info.description).rstrip(".")
    todo = _one_line(info.recovery_hint).rstrip(".")
    return f"- {info.code} ({kind}): {what}. Do: {todo}."


def _description(desc: PackDescription, control: ControlArgs) -> str:
    lines = [_one_line(desc.summary)]
    # The docs' first paragraph only: the rest (tables, links) is for humans, and the
    # codes follow below in a form an agent can act on.
    first = desc.docs.strip().split("\n\n", 1)[0].strip()
    if first:
        lines += ["", first]
    lines += [
        "",
        "On failure the result has isError true and structuredContent.error.code is one of:",
        *(_code_line(info) for info in desc.vocabulary.values()),
    ]
    if desc.validates:
        strict = control.strict or "strict"
        lines += [
            "",
            "Validation findings come back as data in structuredContent.validation "
            "(status pass|warn|fail)"
            + (
                f"; pass {strict}: true to turn fail findings into artifact_failed."
                if control.strict
                else "."
            ),
        ]
    return "\n".join(lines)


def build_tools(
    descriptions: Iterable[PackDescription], naming: ToolNaming = "dotted"
) -> dict[str, ToolSpec]:
    """Tool name -> :class:`ToolSpec` for every pack, in the order given."""
    descs = list(descriptions)
    names = _unique_names([d.name for d in descs], naming)
    tools: dict[str, ToolSpec] = {}
    for desc in descs:
        control = _control_args(desc.input_schema, desc.validates)
        spec = ToolSpec(
            name=names[desc.name],
            pack=desc.name,
            title=f"{desc.name} {desc.version}",
            description=_description(desc, control),
            input_schema=_tool_input_schema(desc.input_schema, control),
            output_schema=_tool_output_schema(desc),
            vocabulary=desc.vocabulary,
            control=control,
        )
        tools[spec.name] = spec
    return tools


# -- call results ----------------------------------------------------------------------


def _head(outcome: Outcome) -> dict[str, Any]:
    return {"pack": outcome.pack, "version": outcome.version, "request_id": outcome.request_id}


def success_content(outcome: Outcome) -> tuple[dict[str, Any], str]:
    """``structuredContent`` and the text item of a successful call."""
    data: dict[str, Any] = {"ok": True, **_head(outcome), "result": outcome.result or {}}
    if outcome.validation is not None:
        data["validation"] = outcome.validation.model_dump(mode="json", exclude_none=True)
    return data, orjson.dumps(data).decode()


def action_line(env: ErrorEnvelope, info: CodeInfo | None = None) -> str:
    """What to do next, in one line, from the envelope and the code's documentation."""
    code = env.code
    if code == "rate_limited" and env.retry_after is not None:
        return f"retry the same call after {env.retry_after:g} s"
    if code == "internal_error":
        ref = f" {env.reference_id}" if env.reference_id else ""
        return f"do not retry blindly; report reference{ref} to the operator"
    if code == "artifact_failed":
        ids = ", ".join(c.id for c in env.checks or ()) or "see error.checks"
        return f"fix the artifact so these checks pass: {ids} (or call without strict)"
    # The advice is the vocabulary's (schemas/vocabulary.json, or the pack's CodeDoc),
    # carried by the envelope: one source for every adapter.
    hint = env.recovery_hint or (info.recovery_hint if info is not None else "")
    hint = _one_line(hint).rstrip(".")
    if env.retry_after is not None and env.retryable:
        hint = (hint + "; " if hint else "") + f"retry after {env.retry_after:g} s"
    return hint or ("retry the call" if env.retryable else "do not retry unchanged")


def error_content(outcome: Outcome, spec: ToolSpec) -> tuple[dict[str, Any], str]:
    """``structuredContent`` and the one-line text of a failed call."""
    env = outcome.error
    assert env is not None
    data: dict[str, Any] = {
        "ok": False,
        **_head(outcome),
        "error": env.model_dump(mode="json", exclude_none=True),
    }
    if outcome.validation is not None:
        data["validation"] = outcome.validation.model_dump(mode="json", exclude_none=True)
    kind = "retryable" if env.retryable else "permanent"
    text = (
        f"error {env.code} ({kind}): {_one_line(env.message).rstrip('.')}. "
        f"Next: {action_line(env, spec.vocabulary.get(env.code))}."
    )
    return data, scrub(text)


_JSON_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "number"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (Mapping, "object"),
)


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    return next((kind for cls, kind in _JSON_KINDS if isinstance(value, cls)), "value")


def malformed_call(params: object) -> Rejection | None:
    """The ``invalid_input`` rejection of ``tools/call`` params the SDK would refuse as a
    JSON-RPC error (``name`` not a string, ``arguments`` not an object), else ``None``.

    Only the JSON kind of a wrong value is named, never the value itself.
    """
    if not isinstance(params, Mapping):
        faults = [FieldViolation("/name", "must be a string naming a tool (see tools/list)")]
        return Rejection.of(
            "invalid_input", "tools/call params must be an object", violations=faults
        )
    name = params.get("name")
    faults = []
    if not isinstance(name, str):
        what = "missing" if "name" not in params else f"got {_json_kind(name)}"
        faults.append(
            FieldViolation("/name", f"must be a string naming a tool (see tools/list); {what}")
        )
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, Mapping):
        faults.append(
            FieldViolation("/", f"the arguments must be a JSON object, got {_json_kind(arguments)}")
        )
    if not faults:
        return None
    pack = name if isinstance(name, str) else ""
    target = f" for {pack}" if pack else ""
    return Rejection.of(
        "invalid_input", f"invalid tools/call{target}", pack=pack, violations=faults
    )


def rejected_content(rejection: Rejection | RequestRejected) -> tuple[dict[str, Any], str]:
    """``structuredContent`` and the one-line text of a call that never reached the pack,
    rendered from its :class:`~control_plane._kernel.rejection.Rejection`."""
    if isinstance(rejection, RequestRejected):
        rejection = rejection.rejection
    rejected: dict[str, Any] = {
        "reason": rejection.reason,
        "message": _short(rejection.message),
        "retryable": rejection.retryable,
        "recovery_hint": rejection.recovery_hint,
    }
    if rejection.violations:
        rejected["violations"] = [
            {"field": v.field or "/", "description": _short(v.description)}
            for v in rejection.violations
        ]
    if rejection.retry_after is not None:
        rejected["retry_after"] = rejection.retry_after
    data = {"ok": False, "rejected": rejected}
    detail = rejected["message"]
    if rejection.reason == "invalid_input" and rejection.violations:
        detail = "; ".join(f"{v['field']}: {v['description']}" for v in rejected["violations"])
    label = rejection.reason.replace("_", " ")
    return data, f"{label}: {detail}. Next: {rejection.recovery_hint}"
