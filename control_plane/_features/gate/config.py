"""The gate file (``packctl-gate.toml`` or ``[tool.packctl.gate]``), validated into a
:class:`GateConfig`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema

from control_plane._kernel.limits import MAX_INPUT_DEPTH, nests_deeper_than
from control_plane._resources import load_schema_file
from control_plane._runtime.tomlfile import (
    MAX_TOML_BYTES,
    TomlFileError,
    read_toml,
    schema_problem,
    where,
)
from control_plane._runtime.tomlfile import TomlLocator as _Locator

__all__ = [
    "ARTIFACT_PLACEHOLDER",
    "DEFAULT_DEADLINE",
    "DEFAULT_FILE",
    "GateConfig",
    "GateFileError",
    "Step",
    "find_gate_file",
    "load_gate",
]

DEFAULT_FILE = "packctl-gate.toml"
PYPROJECT = "pyproject.toml"
PYPROJECT_TABLE: tuple[str, ...] = ("tool", "packctl", "gate")
#: The deadline (seconds) of a call whose step sets none: the server's own default
#: (``packctl serve --default-timeout``). Every call carries one, so a control plane that
#: stops answering (stalled, or its host gone without a reset) cannot hang the gate.
DEFAULT_DEADLINE = 300.0
#: The largest gate file read (a ``pyproject.toml`` included): far beyond any real one.
MAX_FILE_BYTES = MAX_TOML_BYTES
#: In ``input``, every string value containing this gets the artifact's absolute path.
ARTIFACT_PLACEHOLDER = "{artifact}"

FailOn = Literal["fail", "warn"]


class GateFileError(Exception):
    """A gate file that cannot be used; the message is one line naming file, line, key."""


@dataclass(frozen=True)
class Step:
    """One step: a pack called over the artifacts its globs match (or once)."""

    index: int
    name: str
    pack: str
    input: Mapping[str, Any]
    artifacts: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    artifact_field: str | None = None
    strict: bool = True
    fail_on: FailOn = "fail"
    deadline: float | None = None
    allow_empty: bool = False
    line: int | None = None


@dataclass(frozen=True)
class GateConfig:
    """A validated gate file."""

    path: Path
    base_dir: Path
    steps: tuple[Step, ...]
    raw: Mapping[str, Any] = field(repr=False, default_factory=dict)


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = load_schema_file("gate.schema.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def find_gate_file(start: Path) -> Path:
    """``packctl-gate.toml`` in ``start``, else its ``pyproject.toml`` with the table."""
    candidate = start / DEFAULT_FILE
    if candidate.is_file():
        return candidate
    pyproject = start / PYPROJECT
    if pyproject.is_file():
        try:
            _, data = read_toml(pyproject)
        except TomlFileError:
            data = {}
        if _dig(data, PYPROJECT_TABLE) is not None:
            return pyproject
    raise GateFileError(
        f"no gate file: neither {DEFAULT_FILE} nor a [tool.packctl.gate] table in "
        f"{PYPROJECT} in {start} (pass the file as an argument)"
    )


def load_gate(path: Path) -> GateConfig:
    """Read and validate the gate file at ``path``; :class:`GateFileError` if unusable."""
    try:
        text, data = read_toml(path, what="gate file", max_bytes=MAX_FILE_BYTES)
    except TomlFileError as exc:
        raise GateFileError(str(exc)) from None
    root: tuple[str, ...] = ()
    if path.name == PYPROJECT:
        root = PYPROJECT_TABLE
        table = _dig(data, root)
        if table is None:
            raise GateFileError(f"{path}: no [tool.packctl.gate] table")
        if not isinstance(table, dict):
            raise GateFileError(f"{path}: tool.packctl.gate must be a table")
        data = table
    locator = _Locator(text, root)
    _check_schema(path, data, locator)
    steps = _steps(path, data, locator)
    return GateConfig(path=path, base_dir=path.resolve().parent, steps=steps, raw=data)


# -- validation ----------------------------------------------------------------------


def _check_schema(path: Path, data: dict[str, Any], locator: _Locator) -> None:
    def explain(error: jsonschema.exceptions.ValidationError) -> str | None:
        if error.validator == "anyOf" and error.context:
            return f"{_short(error.instance)} is neither a glob string nor a list of globs"
        return None

    problem = schema_problem(_validator(), data, path, locator, explain)
    if problem is not None:
        raise GateFileError(problem)


def _steps(path: Path, data: Mapping[str, Any], locator: _Locator) -> tuple[Step, ...]:
    defaults: Mapping[str, Any] = data.get("defaults", {})
    raw_steps: Sequence[Mapping[str, Any]] = data["steps"]
    packs = [str(s["pack"]) for s in raw_steps]
    steps: list[Step] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_steps):
        name = raw.get("name") or _default_name(packs, index)
        if name in seen:
            raise GateFileError(
                _where(path, locator, ["steps", index, "name"])
                + f"step name {name!r} is already used by steps[{seen[name]}]"
            )
        seen[name] = index
        artifacts = raw.get("artifacts", ())
        globs = (artifacts,) if isinstance(artifacts, str) else tuple(artifacts)
        doc: Mapping[str, Any] = raw.get("input", {})
        if nests_deeper_than(doc, MAX_INPUT_DEPTH):
            raise GateFileError(
                _where(path, locator, ["steps", index, "input"])
                + f"input nests deeper than {MAX_INPUT_DEPTH} levels (the control plane "
                "refuses it)"
            )
        artifact_field = raw.get("artifact_field")
        has_placeholder = any(ARTIFACT_PLACEHOLDER in s for s in _strings(doc))
        if globs and artifact_field is None and not has_placeholder:
            raise GateFileError(
                _where(path, locator, ["steps", index, "artifacts"])
                + "artifacts given but the input never receives them: set artifact_field "
                f'(e.g. artifact_field = "path") or put "{ARTIFACT_PLACEHOLDER}" in input'
            )
        if has_placeholder and not globs:
            raise GateFileError(
                _where(path, locator, ["steps", index, "input"])
                + f'input uses "{ARTIFACT_PLACEHOLDER}" but the step has no artifacts'
            )
        if artifact_field is not None and artifact_field in doc:
            raise GateFileError(
                _where(path, locator, ["steps", index, "input", artifact_field])
                + f"input.{artifact_field} is also set by artifact_field; keep one"
            )
        steps.append(
            Step(
                index=index,
                name=name,
                pack=str(raw["pack"]),
                input=doc,
                artifacts=globs,
                exclude=tuple(raw.get("exclude", ())),
                artifact_field=artifact_field,
                strict=bool(raw.get("strict", defaults.get("strict", True))),
                fail_on=raw.get("fail_on", defaults.get("fail_on", "fail")),
                deadline=_deadline(path, locator, raw, defaults, index),
                allow_empty=bool(raw.get("allow_empty", False)),
                line=locator.line(["steps", index]),
            )
        )
    return tuple(steps)


def _default_name(packs: Sequence[str], index: int) -> str:
    pack = packs[index]
    if packs.count(pack) == 1:
        return pack
    return f"{pack} #{packs[: index + 1].count(pack)}"


def _deadline(
    path: Path, locator: _Locator, raw: Mapping[str, Any], defaults: Mapping[str, Any], index: int
) -> float | None:
    """The step's deadline, else the defaults'; finite (TOML has ``nan`` and ``inf``, which
    the schema's ``exclusiveMinimum`` lets by)."""
    keys: list[str | int] = ["steps", index, "deadline"]
    value = raw.get("deadline")
    if value is None:
        keys, value = ["defaults", "deadline"], defaults.get("deadline")
    if value is None:
        return None
    seconds = float(value)
    if not math.isfinite(seconds):
        raise GateFileError(
            _where(path, locator, keys) + f"{value!r} is not a finite number of seconds"
        )
    return seconds


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _dig(data: Mapping[str, Any], keys: Sequence[str]) -> Any:
    node: Any = data
    for key in keys:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _where(path: Path, locator: _Locator, keys: Sequence[str | int]) -> str:
    return where(path, locator, keys)
