"""The baseline error vocabulary, read from ``schemas/vocabulary.json`` (its one source)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

import jsonschema

from control_plane._resources import load_schema_file

__all__ = [
    "ARTIFACT_FAILED",
    "BASELINE",
    "DEPENDENCY_MISSING",
    "EVERY_PACK_CODES",
    "INTERNAL_ERROR",
    "NOT_PERMITTED",
    "SNAKE_CASE",
    "WELL_KNOWN_PACK_CODES",
    "CodeInfo",
    "baseline_code",
    "is_baseline",
]

SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
INTERNAL_ERROR = "internal_error"
ARTIFACT_FAILED = "artifact_failed"
DEPENDENCY_MISSING = "dependency_missing"
#: A refusal by grant (control_plane._kernel.reach): every pack's, declared or not.
NOT_PERMITTED = "not_permitted"


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """Everything a caller needs to branch on one code."""

    code: str
    title: str
    description: str
    retryable: bool
    recovery_hint: str
    grpc_status: str
    baseline: bool
    fallback: str | None = None
    absorbs: tuple[str, ...] = ()
    payload: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The code's documentation as plain JSON data."""
        found = {f.name: getattr(self, f.name) for f in fields(self)}
        return found | {"absorbs": list(self.absorbs), "payload": dict(self.payload)}


def _load_well_known() -> Mapping[str, Mapping[str, Any]]:
    data = load_schema_file("vocabulary.json")
    return MappingProxyType(
        {entry["code"]: MappingProxyType(dict(entry)) for entry in data["well_known_pack_codes"]}
    )


def _load_baseline() -> tuple[Mapping[str, CodeInfo], Mapping[str, str]]:
    data = load_schema_file("vocabulary.json")
    jsonschema.validate(data, load_schema_file("vocabulary.schema.json"))
    codes: dict[str, CodeInfo] = {}
    for entry in data["codes"]:
        codes[entry["code"]] = CodeInfo(
            code=entry["code"],
            title=entry["title"],
            description=entry["description"],
            retryable=entry["retryable"],
            recovery_hint=entry["recovery_hint"],
            grpc_status=entry["grpc_status"],
            baseline=True,
            fallback=entry["fallback"],
            payload=MappingProxyType(dict(entry["payload"])),
        )
    for info in codes.values():
        if info.fallback is not None and info.fallback not in codes:
            raise ValueError(f"vocabulary: fallback {info.fallback!r} of {info.code} unknown")
    return MappingProxyType(codes), MappingProxyType(dict(data.get("pack_code_defaults", {})))


BASELINE, PACK_CODE_DEFAULTS = _load_baseline()

#: Pack codes with one documented meaning that classification may produce
#: (``dependency_missing``). A pack that does not declare one gets ``internal_error``:
#: producing it is not the pack breaking its contract.
WELL_KNOWN_PACK_CODES: Mapping[str, Mapping[str, Any]] = _load_well_known()


def is_baseline(code: str) -> bool:
    """True for the baseline codes (``schemas/vocabulary.json``)."""
    return code in BASELINE


def baseline_code(code: str) -> CodeInfo:
    """Documentation of one baseline code; ``KeyError`` for others."""
    return BASELINE[code]


def pack_code_status(retryable: bool) -> str:
    """gRPC status name for a pack-specific code (documented default)."""
    key = "grpc_status_retryable" if retryable else "grpc_status_permanent"
    return str(PACK_CODE_DEFAULTS.get(key, "FAILED_PRECONDITION"))


#: Well-known codes in every pack's effective vocabulary, declared or not
#: (``every_pack``: ``not_permitted``, the refusal by grant), as a pack code's docs.
EVERY_PACK_CODES: Mapping[str, CodeInfo] = MappingProxyType(
    {
        code: CodeInfo(
            code=code,
            title=str(entry.get("title", code)),
            description=str(entry["description"]),
            retryable=bool(entry["retryable"]),
            recovery_hint=str(entry["recovery_hint"]),
            grpc_status=str(entry.get("grpc_status") or pack_code_status(bool(entry["retryable"]))),
            baseline=False,
        )
        for code, entry in WELL_KNOWN_PACK_CODES.items()
        if entry.get("every_pack")
    }
)
