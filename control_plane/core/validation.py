"""Validation findings are data: aggregate status, and the strict-mode bridge to errors.

A pack returns checks of severity ``pass | warn | fail``; the call still succeeded. With
``strict`` the outcome becomes ``artifact_failed`` when any check reaches the ``fail_on``
threshold (``fail`` by default, ``warn`` to fail on warnings too). Severities are never
changed and warnings are never dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

from control_plane.core.pack import Check, Severity

__all__ = [
    "SEVERITY_RANK",
    "FailOn",
    "checks_from_data",
    "failing_checks",
    "validation_data",
    "worst",
]

FailOn: TypeAlias = Literal["fail", "warn"]
SEVERITY_RANK: Mapping[str, int] = {"pass": 0, "warn": 1, "fail": 2}


def worst(checks: Iterable[Check]) -> Severity:
    """The worst severity among ``checks`` (``pass`` when there are none)."""
    rank = 0
    for check in checks:
        rank = max(rank, SEVERITY_RANK[check.severity])
    return ("pass", "warn", "fail")[rank]


def validation_data(checks: Sequence[Check]) -> dict[str, Any]:
    """The ``validation`` field: ``{"status": worst, "checks": [...]}``."""
    return {"status": worst(checks), "checks": [c.to_dict() for c in checks]}


def checks_from_data(data: Mapping[str, Any]) -> list[Check]:
    """Checks from a ``validation`` field (already schema-checked)."""
    return [
        Check(
            id=str(item["id"]),
            severity=item["severity"],
            message=str(item["message"]),
            expected=item.get("expected"),
            actual=item.get("actual"),
            location=item.get("location"),
        )
        for item in data.get("checks", ())
    ]


def failing_checks(checks: Iterable[Check], fail_on: FailOn = "fail") -> list[Check]:
    """The checks at or above the ``fail_on`` threshold, in their original order."""
    threshold = SEVERITY_RANK[fail_on]
    return [c for c in checks if SEVERITY_RANK[c.severity] >= threshold]
