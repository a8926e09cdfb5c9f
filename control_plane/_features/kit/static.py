"""Static conformance: what can be known about a pack without running it, and its effective
contract.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema

from control_plane._kernel.enforce import nearest_code
from control_plane._kernel.registry import LoadedPack, LoadFailure, _code_node
from control_plane._kernel.vocabulary import ARTIFACT_FAILED, BASELINE
from control_plane._runtime.plugins import PLUGIN_FAULTS, LoadResult, load_registry
from control_plane._runtime.tomlfile import TomlFileError, read_toml

from .target import PackTarget, load_plugin, unfiltered

__all__ = [
    "CHECK_COVERS",
    "RUNTIME_ONLY",
    "Finding",
    "KitUsageError",
    "PackReport",
    "StaticReport",
    "check_installed",
    "check_load",
    "check_loaded",
    "check_path",
    "check_target",
    "declares_packs",
]

Severity = Literal["error", "warning"]

#: What ``packctl check`` knows without running a pack, and what it cannot know: said with
#: every verdict, so "ok" is never read as "the pack keeps its contract at run time".
CHECK_COVERS = (
    "the vocabulary is closed, snake_case and documented; schemas are valid; input "
    "examples fit; the effective contract and nearest-code mapping"
)
RUNTIME_ONLY = (
    "codes a handler raises or returns, output that breaks its schema or is not JSON, "
    "secrets reaching the caller, faults of its downstreams -- run the kit "
    "(PackKit.invoke, inject_faults, check_generated_inputs; docs/authoring.md"
    "#testing-with-the-kit)"
)


class KitUsageError(Exception):
    """What to check could not be found (no such path, pack, or entry point)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One conformance fault (``error``) or hint (``warning``), naming its subject."""

    plugin: str
    fault: str
    pack: str | None = None
    severity: Severity = "error"

    def __str__(self) -> str:
        subject = f"plugin {self.plugin!r}" + (f", pack {self.pack!r}" if self.pack else "")
        return f"{self.severity.upper()} {subject}: {self.fault}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "plugin": self.plugin,
            "pack": self.pack,
            "fault": self.fault,
        }


@dataclass(frozen=True)
class PackReport:
    """One loaded pack's effective contract and its lint findings."""

    loaded: LoadedPack
    findings: list[Finding] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.loaded.name

    @property
    def vocabulary(self) -> list[str]:
        """The effective vocabulary, in order (what callers may receive)."""
        return list(self.loaded.vocabulary)

    @property
    def effective_output_schema(self) -> dict[str, Any]:
        return self.loaded.output_schema

    def nearest(self) -> dict[str, str]:
        """Baseline code -> the code a caller of this pack receives for it."""
        codes = [c for c in BASELINE if c != ARTIFACT_FAILED or self.loaded.validates]
        return {code: nearest_code(self.loaded, code) for code in codes}

    def to_dict(self) -> dict[str, Any]:
        return {
            "pack": self.name,
            "version": self.loaded.version,
            "plugin": self.loaded.plugin,
            "vocabulary": {code: info.to_dict() for code, info in self.loaded.vocabulary.items()},
            "nearest": self.nearest(),
            "effective_output_schema": self.effective_output_schema,
            "input_schema": self.loaded.input_schema,
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass
class StaticReport:
    """The outcome of a static check: packs that loaded, and every finding."""

    packs: list[PackReport] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.all_findings() if f.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors and bool(self.packs or self.findings)

    def all_findings(self) -> list[Finding]:
        return [*self.findings, *(f for p in self.packs for f in p.findings)]

    def pack(self, name: str) -> PackReport:
        for report in self.packs:
            if report.name == name:
                return report
        raise KeyError(name)

    def render(self) -> str:
        """Human-readable text: each pack's contract, then the findings."""
        lines: list[str] = []
        for report in self.packs:
            loaded = report.loaded
            lines.append(f"{loaded.name} {loaded.version} (plugin {loaded.plugin})")
            for code, info in loaded.vocabulary.items():
                origin = "baseline" if info.baseline else "pack"
                kind = "retryable" if info.retryable else "permanent"
                extra = f", absorbs {', '.join(info.absorbs)}" if info.absorbs else ""
                added = "" if code in loaded.declared else ", added by the control plane"
                lines.append(
                    f"  {code:<22} {origin}, {kind}, gRPC {info.grpc_status}{extra}{added}"
                )
            mapped = [f"{b}->{c}" for b, c in report.nearest().items() if b != c]
            if mapped:
                lines.append(f"  nearest-code mapping: {', '.join(mapped)}")
        findings = self.all_findings()
        for finding in findings:
            lines.append(str(finding))
        errors = len(self.errors)
        verdict = "FAILED" if errors else ("ok" if self.packs else "nothing checked")
        lines.append(
            f"static conformance {verdict}: {len(self.packs)} pack(s), {errors} error(s), "
            f"{len(findings) - errors} warning(s)"
        )
        if self.packs:
            lines.append(f"checked (declarations only): {CHECK_COVERS}")
            lines.append(f"not checked (only the kit's runtime tests reach it): {RUNTIME_ONLY}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "scope": "static",
            "covers": CHECK_COVERS,
            "runtime_only": RUNTIME_ONLY,
            "packs": [p.to_dict() for p in self.packs],
            "findings": [f.to_dict() for f in self.all_findings()],
        }


def _lint(loaded: LoadedPack) -> list[Finding]:
    out: list[Finding] = []

    def finding(fault: str, severity: Severity = "error") -> None:
        out.append(Finding(loaded.plugin, fault, loaded.name, severity))

    handler = getattr(loaded.pack, "handler", None)
    if loaded.pack.reach is None and not isinstance(getattr(handler, "out_of_process", None), str):
        finding(
            "declares no reach: `packctl serve` runs it in an isolated worker under an empty "
            "grant (no file, program or network) unless the operator trusts it (--trust "
            f"{loaded.name}); declare the least it needs, reach=Reach(...) (docs/grants.md)",
            "warning",
        )
    input_schema = loaded.input_schema
    kind = input_schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else ["object"]
    if "object" not in kinds:
        finding(f"input schema must describe a JSON object, but its type is {kind!r}")
    examples = input_schema.get("examples")
    if isinstance(examples, list):
        validator = jsonschema.Draft202012Validator(input_schema)
        for index, example in enumerate(examples):
            error = jsonschema.exceptions.best_match(validator.iter_errors(example))
            if error is not None:
                finding(f"input schema example #{index} does not validate: {error.message}")
    for code in loaded.declared:
        info = loaded.vocabulary[code]
        for absorbed in info.absorbs:
            if absorbed in loaded.declared:
                finding(
                    f"code {code!r} absorbs {absorbed!r}, which the pack declares itself: "
                    "the absorb never applies",
                    "warning",
                )
    error_node = loaded.output_schema.get("properties", {}).get("error")
    required = error_node.get("required", []) if isinstance(error_node, Mapping) else []
    code_node, _ = _code_node(loaded.output_schema)
    if isinstance(error_node, Mapping) and "code" not in required and code_node is not None:
        finding("properties.error does not require 'code' (add it to error.required)", "warning")
    return out


def check_loaded(loaded: LoadedPack) -> PackReport:
    """The static report of one pack that passed the registry's checks."""
    return PackReport(loaded, _lint(loaded))


def check_load(
    load: LoadResult,
    *,
    plugins: Iterable[str] | None = None,
    packs: Iterable[str] | None = None,
) -> StaticReport:
    """Report the packs (and load failures) of ``load``, optionally only some."""
    plugin_set = set(plugins) if plugins is not None else None
    pack_set = set(packs) if packs is not None else None

    def wanted(plugin: str, pack: str | None) -> bool:
        if pack_set is not None:
            return pack in pack_set or (pack is None and plugin_set is not None)
        return plugin_set is None or plugin in plugin_set

    report = StaticReport()
    for failure in load.registry.failures:
        if wanted(failure.plugin, failure.pack):
            report.findings.append(_failure_finding(failure))
    for loaded in load.registry:
        if wanted(loaded.plugin, loaded.name):
            report.packs.append(check_loaded(loaded))
    return report


def _failure_finding(failure: LoadFailure) -> Finding:
    return Finding(failure.plugin, f"rejected at load time: {failure.reason}", failure.pack)


def check_target(target: PackTarget) -> StaticReport:
    """Static conformance of the pack a :class:`PackTarget` names."""
    load = load_plugin(target.plugin)
    report = check_load(load, packs=[target.name])
    if not report.packs and not report.findings:
        # Rejected packs that the registry could not name, or a pack that is not there.
        report = check_load(load)
        report.packs = []
        if not report.findings:
            report.findings.append(
                Finding(str(target.plugin or "entry points"), "pack is not registered", target.name)
            )
    return report


def check_installed(name: str | None = None) -> StaticReport:
    """Built-in and installed packs: one by name, or every entry-point plugin's."""
    with unfiltered():
        load = load_registry(builtins=name is not None, entry_points_=True)
    if name is None:
        from control_plane._runtime.plugins import DEFAULT_PLUGINS

        others = {p.plugin for p in load.registry} | {f.plugin for f in load.registry.failures}
        return check_load(load, plugins=others - set(DEFAULT_PLUGINS))
    if name not in load.registry and not any(f.pack == name for f in load.registry.failures):
        known = ", ".join(load.registry.names()) or "none"
        raise KitUsageError(f"no pack named {name!r} is installed (loaded: {known})")
    return check_load(load, packs=[name])


def _entry_points(pyproject: Path) -> dict[str, str]:
    try:
        _, data = read_toml(pyproject)
    except TomlFileError as exc:  # missing, unreadable, huge, not UTF-8, not TOML, too deep
        raise KitUsageError(str(exc)) from None
    group = data.get("project", {}).get("entry-points", {}).get("capability_packs")
    if not isinstance(group, dict) or not group:
        raise KitUsageError(
            f"{pyproject} declares no [project.entry-points.capability_packs] entry point"
        )
    return {str(k): str(v) for k, v in group.items()}


def declares_packs(directory: Path) -> bool:
    """Whether ``directory`` holds a pack repository (capability_packs entry points)."""
    pyproject = directory / "pyproject.toml"
    if not pyproject.is_file():
        return False
    try:
        _entry_points(pyproject)
    except KitUsageError:
        return False
    return True


def _import_plugin(spec: str) -> object:
    module_name, _, attr = spec.partition(":")
    obj: object = importlib.import_module(module_name.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def check_path(path: str | Path) -> StaticReport:
    """Static conformance of a pack repository (its ``pyproject.toml`` entry points) or a
    plugin module file, without installing it."""
    where = Path(path).resolve()
    if where.is_file() and where.suffix == ".py":
        roots, plugins = [where.parent], {where.stem: where.stem}
    elif where.is_dir() and (where / "pyproject.toml").is_file():
        plugins = _entry_points(where / "pyproject.toml")
        roots = [p for p in (where / "src", where) if p.is_dir()]
    elif where.exists():
        raise KitUsageError(f"{where} is neither a pack repository (pyproject.toml) nor a .py file")
    else:
        raise KitUsageError(f"{where} does not exist")
    for root in reversed(roots):
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
    report = StaticReport()
    extra: list[tuple[str, object]] = []
    for name, spec in plugins.items():
        try:
            extra.append((name, _import_plugin(spec)))
        # Plugin boundary: importing a pack's module may raise anything (SystemExit too).
        except PLUGIN_FAULTS as exc:
            report.findings.append(
                Finding(name, f"plugin {spec!r} does not import: {type(exc).__name__}: {exc}")
            )
    if extra:
        with unfiltered():
            load = load_registry(builtins=False, entry_points_=False, extra=extra)
        found = check_load(load, plugins=[name for name, _ in extra])
        report.packs.extend(found.packs)
        report.findings.extend(found.findings)
        for name, _ in extra:
            if not any(p.loaded.plugin == name for p in found.packs) and not any(
                f.plugin == name for f in found.findings
            ):
                report.findings.append(Finding(name, "the plugin registered no pack"))
    return report
