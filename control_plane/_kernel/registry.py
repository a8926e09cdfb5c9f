"""The registry: packs checked at load time, compiled once, looked up per call."""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import jsonschema

from control_plane._kernel.errors import PluginLoadError, UnknownPack
from control_plane._kernel.outside_schema import outside_schema_fault
from control_plane._kernel.pack import CodeDoc, Pack, error_schema, schema_of
from control_plane._kernel.reach import Reach
from control_plane._kernel.redact import scrub
from control_plane._kernel.schema import CompiledSchema, check_schema, json_pointer
from control_plane._kernel.vocabulary import (
    ARTIFACT_FAILED,
    BASELINE,
    EVERY_PACK_CODES,
    INTERNAL_ERROR,
    SNAKE_CASE,
    CodeInfo,
    pack_code_status,
)
from control_plane._resources import load_schema_file

__all__ = ["LoadFailure", "LoadedPack", "Registry", "validation_field_schema"]

logger = logging.getLogger("capability_packs.registry")


#: Longest plugin name, pack name or reason a load failure carries (cut after scrubbing).
_MAX_FAILURE_TEXT = 2000


@dataclass(frozen=True, slots=True)
class LoadFailure:
    """A plugin or pack that was rejected, and why."""

    plugin: str
    reason: str
    pack: str | None = None

    def __post_init__(self) -> None:
        # The load-failure channel (ListPacks, health, the CLI, the log line): a reason
        # quotes the plugin's exception, which may quote its configuration.
        _set = object.__setattr__
        _set(self, "plugin", scrub(str(self.plugin), _MAX_FAILURE_TEXT))
        _set(self, "reason", scrub(str(self.reason), _MAX_FAILURE_TEXT))
        if self.pack is not None:
            _set(self, "pack", scrub(str(self.pack), _MAX_FAILURE_TEXT))

    def __str__(self) -> str:
        subject = f"plugin {self.plugin!r}" + (f", pack {self.pack!r}" if self.pack else "")
        return f"{subject}: {self.reason}"


@dataclass(frozen=True)
class LoadedPack:
    """A pack that passed every load-time check, with its compiled validators."""

    pack: Pack
    plugin: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    input_validator: CompiledSchema
    output_validator: CompiledSchema
    #: The effective vocabulary, in declaration order, baseline extras last.
    vocabulary: Mapping[str, CodeInfo]
    #: Codes the author declared (before ``internal_error``/``artifact_failed`` were added).
    declared: frozenset[str]
    validates: bool
    #: baseline code -> the first declared pack code that absorbs it.
    absorbed_by: Mapping[str, str] = field(default_factory=dict)
    #: The pack's name and version, read once at load (every call reads them).
    name: str = field(init=False)
    version: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.pack.name)
        object.__setattr__(self, "version", self.pack.version)


def validation_field_schema() -> dict[str, Any]:
    """The ``validation`` field's schema, self-contained (no ``$ref``) for embedding."""
    schema = load_schema_file("validation.schema.json")
    check = schema["$defs"]["check"]
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["status", "checks"],
        "properties": {
            "status": schema["properties"]["status"],
            "checks": {"type": "array", "items": check},
        },
    }


_MANIFEST = load_schema_file("pack-manifest.schema.json")
_MANIFEST_VALIDATOR = jsonschema.Draft202012Validator(_MANIFEST)


def _resolve(root: Mapping[str, Any], node: Any) -> Any:
    """Follow local ``$ref`` and unwrap ``anyOf``/``oneOf`` with one non-null branch."""
    for _ in range(16):
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = root
            for raw in ref[2:].split("/"):
                part = raw.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, Mapping) or part not in target:
                    return None
                target = target[part]
            node = target
            continue
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list):
                real = [
                    b for b in branches if not (isinstance(b, Mapping) and b.get("type") == "null")
                ]
                if len(real) == 1:
                    node = real[0]
                    break
        else:
            return node
    return node


def _code_node(output_schema: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The schema node of ``properties.error.properties.code``, or the fault."""
    props = output_schema.get("properties")
    if not isinstance(props, Mapping) or "error" not in props:
        return None, "output schema has no properties.error (the vocabulary lives there)"
    error = _resolve(output_schema, props["error"])
    error_props = error.get("properties") if isinstance(error, Mapping) else None
    if not isinstance(error_props, Mapping) or "code" not in error_props:
        return None, "output schema has no properties.error.properties.code"
    code = _resolve(output_schema, error_props["code"])
    if not isinstance(code, dict):
        return None, "properties.error.properties.code is not a schema object"
    return code, None


def _vocabulary(code_node: Mapping[str, Any]) -> tuple[list[str], str | None]:
    if "enum" in code_node:
        codes = code_node["enum"]
    elif "const" in code_node:
        codes = [code_node["const"]]
    elif "pattern" in code_node:
        return [], "open vocabulary: error code is a pattern, not a closed enum"
    else:
        return [], "open vocabulary: error code has no enum (a plain string admits any code)"
    if not isinstance(codes, list) or not codes:
        return [], "empty vocabulary: the error code enum lists no codes"
    for code in codes:
        if not isinstance(code, str) or not SNAKE_CASE.match(code):
            return [], f"error code {code!r} is not snake_case"
    dupes = sorted({c for c in codes if codes.count(c) > 1})
    if dupes:
        return [], f"duplicated error codes in the enum: {', '.join(dupes)}"
    return list(codes), None


def _pack_code_info(code: str, doc: CodeDoc) -> CodeInfo:
    return CodeInfo(
        code=code,
        title=code.replace("_", " ").capitalize(),
        description=doc.description,
        retryable=doc.retryable,
        recovery_hint=doc.recovery_hint,
        # A well-known every-pack code (not_permitted) keeps its one status, declared or not.
        grpc_status=(
            EVERY_PACK_CODES[code].grpc_status
            if code in EVERY_PACK_CODES
            else pack_code_status(doc.retryable)
        ),
        baseline=False,
        absorbs=tuple(doc.absorbs),
    )


def _with_error(output_schema: dict[str, Any], pack: Pack) -> dict[str, Any]:
    """``output_schema`` with the ``error`` object derived from ``pack.codes`` when it has
    none (the codes table is then the one declaration of the vocabulary)."""
    props = output_schema.get("properties")
    if not pack.codes or (isinstance(props, Mapping) and "error" in props):
        return output_schema
    derived = dict(output_schema)
    derived["properties"] = {
        **(props if isinstance(props, Mapping) else {}),
        "error": error_schema(pack.codes, retry_after={"type": "number", "minimum": 0}),
    }
    return derived


def _baseline_docs(pack: Pack) -> dict[str, CodeDoc]:
    """``pack.code_docs()`` with the gaps of baseline codes filled from the vocabulary: a
    plain string gives a baseline code's description only, an empty hint keeps its hint."""
    docs = pack.code_docs()
    for code, doc in docs.items():
        base = BASELINE.get(code)
        if base is None:
            continue
        if not isinstance(pack.codes[code], CodeDoc):
            docs[code] = CodeDoc(doc.description, base.retryable, base.recovery_hint)
        elif not doc.recovery_hint:
            docs[code] = dataclasses.replace(doc, recovery_hint=base.recovery_hint)
    return docs


def _baseline_in_pack(code: str, doc: CodeDoc, fault: Callable[[str], PluginLoadError]) -> CodeInfo:
    """A baseline code the pack describes in its own words (``codes={"not_found": ...}``).

    The description and recovery hint become the pack's; everything a caller branches on
    stays the vocabulary's: retryability, gRPC status, payload, fallback. A
    :class:`CodeDoc` that says otherwise, or absorbs codes, is a load fault.
    """
    base = BASELINE[code]
    if doc.retryable != base.retryable:
        kind = "retryable" if base.retryable else "permanent"
        raise fault(
            f"baseline code {code!r} is {kind} for every pack: its CodeDoc may change "
            f"the description and recovery_hint, not retryable={doc.retryable}"
        )
    if doc.absorbs:
        raise fault(f"baseline code {code!r} cannot absorb other codes")
    return dataclasses.replace(base, description=doc.description, recovery_hint=doc.recovery_hint)


class Registry:
    """Loaded packs by name, and the failures met while loading."""

    def __init__(self) -> None:
        self._packs: dict[str, LoadedPack] = {}
        #: The loaded packs by name, read-only (a live view: packs registered later show).
        self.packs: Mapping[str, LoadedPack] = MappingProxyType(self._packs)
        self.failures: list[LoadFailure] = []

    # -- registration -------------------------------------------------------------

    def register(self, pack: Pack, plugin: str = "<direct>") -> LoadedPack:
        """Check ``pack`` and add it; raises :class:`PluginLoadError` naming ``plugin``."""
        loaded = self._check(pack, plugin)
        existing = self._packs.get(loaded.name)
        if existing is not None:
            raise PluginLoadError(
                plugin,
                f"duplicate pack name {loaded.name!r}: already registered by plugin "
                f"{existing.plugin!r}",
                pack=loaded.name,
            )
        self._packs[loaded.name] = loaded
        return loaded

    def record_failure(self, failure: LoadFailure) -> None:
        self.failures.append(failure)
        logger.error("load failure: %s", failure)

    def _check(self, pack: Pack, plugin: str) -> LoadedPack:
        name = getattr(pack, "name", None)
        if not isinstance(pack, Pack):
            raise PluginLoadError(plugin, f"register() expects a Pack, got {type(pack).__name__}")

        def fault(reason: str) -> PluginLoadError:
            return PluginLoadError(plugin, reason, pack=name)

        if not callable(pack.handler):
            raise fault("handler is not callable")
        try:
            input_schema = schema_of(pack.input_schema)
            output_schema = _with_error(schema_of(pack.output_schema), pack)
        except (TypeError, ValueError) as exc:
            raise fault(f"schemas could not be built: {exc}") from exc
        for label, schema in (("input", input_schema), ("output", output_schema)):
            # Before any library reads it (the manifest check, deep copies, jsonschema-rs).
            problem = outside_schema_fault(schema)
            if problem:
                raise fault(f"{label} schema: {problem}")
        try:
            docs = _baseline_docs(pack)
        except (AttributeError, TypeError) as exc:
            raise fault(f"codes= must map code names to CodeDoc: {exc}") from exc
        manifest: dict[str, Any] = {
            "name": pack.name,
            "version": pack.version,
            "summary": pack.summary,
            "input_schema": input_schema,
            "output_schema": output_schema,
            "codes": {code: doc.to_dict() for code, doc in docs.items()},
        }
        if pack.validates is not None:
            manifest["validates"] = pack.validates
        errors = sorted(_MANIFEST_VALIDATOR.iter_errors(manifest), key=lambda e: list(e.path))
        if errors:
            first = errors[0]
            where = json_pointer(first.absolute_path) or "/"
            raise fault(f"manifest invalid at {where}: {first.message}")
        for key in ("name", "version", "summary"):
            # Python's ``$`` matches before a trailing newline; the patterns alone let it by.
            if any(c in manifest[key] for c in "\r\n"):
                raise fault(f"manifest invalid at /{key}: {manifest[key]!r} is not one line")
        for label, schema in (("input", input_schema), ("output", output_schema)):
            problem = check_schema(schema)
            if problem:
                raise fault(f"{label} schema: {problem}")

        code_node, problem = _code_node(output_schema)
        if problem or code_node is None:
            raise fault(problem or "no vocabulary")
        declared, problem = _vocabulary(code_node)
        if problem:
            raise fault(problem)

        vocabulary: dict[str, CodeInfo] = {}
        absorbed_by: dict[str, str] = {}
        for code in declared:
            if code in docs and code in BASELINE:
                vocabulary[code] = _baseline_in_pack(code, docs[code], fault)
            elif code in docs:
                doc = docs[code]
                if not doc.recovery_hint:
                    raise fault(f"code {code!r} has no recovery_hint")
                for absorbed in doc.absorbs:
                    if absorbed not in BASELINE:
                        raise fault(
                            f"code {code!r} absorbs {absorbed!r}, which is not a baseline code"
                        )
                    absorbed_by.setdefault(absorbed, code)
                vocabulary[code] = _pack_code_info(code, doc)
            elif code in BASELINE:
                vocabulary[code] = BASELINE[code]
            else:
                raise fault(
                    f"code {code!r} is not documented: add it to codes= with a "
                    "description, retryable and recovery_hint"
                )
        stray = sorted({*docs, *pack.codes} - set(declared))
        if stray:
            raise fault(
                f"codes= documents {', '.join(stray)}, which the output schema's "
                "enum does not declare"
            )

        props = output_schema.get("properties", {})
        validates = pack.validates if pack.validates is not None else "validation" in props
        effective = copy.deepcopy(output_schema)
        eff_code, _ = _code_node(effective)
        assert eff_code is not None
        # internal_error and not_permitted (a refusal by grant) are every pack's.
        extras = [INTERNAL_ERROR, *EVERY_PACK_CODES] + ([ARTIFACT_FAILED] if validates else [])
        eff_codes = list(declared) + [c for c in extras if c not in declared]
        eff_code.pop("const", None)
        eff_code["enum"] = eff_codes
        for code in extras:
            vocabulary.setdefault(code, BASELINE.get(code) or EVERY_PACK_CODES[code])
        if validates and "validation" not in props:
            effective.setdefault("properties", {})["validation"] = validation_field_schema()

        try:
            input_validator = CompiledSchema(input_schema)
            output_validator = CompiledSchema(effective)
        except ValueError as exc:
            raise fault(f"schema does not compile: {exc}") from exc
        return LoadedPack(
            pack=pack,
            plugin=plugin,
            input_schema=input_schema,
            output_schema=effective,
            input_validator=input_validator,
            output_validator=output_validator,
            vocabulary=vocabulary,
            declared=frozenset(declared),
            validates=bool(validates),
            absorbed_by=absorbed_by,
        )

    # -- lookup -------------------------------------------------------------------

    def get(self, name: str) -> LoadedPack:
        """The loaded pack, or :class:`UnknownPack`."""
        try:
            return self._packs[name]
        except KeyError:
            raise self.unknown(name) from None

    def unknown(self, name: str) -> UnknownPack:
        """The refusal of pack ``name``, which is not loaded: the packs there are, and why
        ``name`` failed to load when it did."""
        failed = next((f.reason for f in self.failures if f.pack == name), None)
        return UnknownPack(name, list(self._packs), failed=failed)

    def __contains__(self, name: object) -> bool:
        return name in self._packs

    def declared_reach(self, name: str) -> Reach | None:
        """What pack ``name`` declares it reaches (``None``: nothing, or no such pack): read
        from the pack itself, for the runtime's :class:`~control_plane._kernel.reach.Reaches`."""
        loaded = self._packs.get(name)
        reach = getattr(loaded.pack, "reach", None) if loaded is not None else None
        return reach if isinstance(reach, Reach) else None

    def __iter__(self) -> Iterator[LoadedPack]:
        return iter(sorted(self._packs.values(), key=lambda p: p.name))

    def __len__(self) -> int:
        return len(self._packs)

    def names(self) -> list[str]:
        return sorted(self._packs)
