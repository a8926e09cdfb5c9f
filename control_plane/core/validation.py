"""Validation findings are data: aggregate status, and the strict-mode threshold.

A pack returns checks of severity ``pass | warn | fail``; the call still succeeded. With
``strict`` the outcome becomes ``artifact_failed`` when any check reaches the ``fail_on``
threshold (``fail`` by default, ``warn`` to fail on warnings too). Severities are never
changed and warnings are never dropped. The invoke pipeline calls these two functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

from control_plane.core.outcome import CheckRecord
from control_plane.core.pack import Severity

__all__ = ["SEVERITY_RANK", "FailOn", "failing", "worst_of"]

FailOn: TypeAlias = Literal["fail", "warn"]
SEVERITY_RANK: Mapping[str, int] = {"pass": 0, "warn": 1, "fail": 2}
_BY_RANK: tuple[Severity, Severity, Severity] = ("pass", "warn", "fail")


def worst_of(items: Iterable[Mapping[str, Any]]) -> Severity:
    """The aggregate status of raw checks (``pass`` when there are none).

    An unknown severity ranks as ``fail`` here and is refused by the validation schema.
    """
    rank = 0
    for item in items:
        rank = max(rank, SEVERITY_RANK.get(str(item.get("severity")), 2))
    return _BY_RANK[rank]


def failing(records: Sequence[CheckRecord], fail_on: FailOn) -> list[CheckRecord]:
    """The records at or above the ``fail_on`` threshold, in their original order."""
    threshold = SEVERITY_RANK[fail_on]
    return [r for r in records if SEVERITY_RANK[r.severity] >= threshold]
