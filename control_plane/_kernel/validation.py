"""Validation findings as data: aggregate status, the strict-mode threshold, bounded check lists."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from control_plane._kernel.bounds import MAX_CHECKS
from control_plane._kernel.outcome import CheckRecord
from control_plane._kernel.pack import Severity

__all__ = ["MORE_CHECKS", "SEVERITY_RANK", "FailOn", "check_records", "failing", "worst_of"]

#: The id of the check that sums up the checks beyond :data:`MAX_CHECKS`.
MORE_CHECKS = "more_checks"

FailOn: TypeAlias = Literal["fail", "warn"]
SEVERITY_RANK: Mapping[str, int] = MappingProxyType({"pass": 0, "warn": 1, "fail": 2})
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


def check_records(items: Sequence[Mapping[str, Any]]) -> list[CheckRecord]:
    """Scrubbed records of checked raw checks (``id``, ``severity``, ``message``, ...): the
    first :data:`MAX_CHECKS` one by one, the rest as one ``more_checks`` record."""
    records = [
        CheckRecord.build(
            item["id"],
            item["severity"],
            item["message"],
            item.get("expected"),
            item.get("actual"),
            item.get("location"),
        )
        for item in items[:MAX_CHECKS]
    ]
    rest = items[MAX_CHECKS:]
    if rest:
        counts = Counter(str(item.get("severity")) for item in rest)
        summary = ", ".join(f"{counts[s]} {s}" for s in ("fail", "warn", "pass") if counts[s])
        records.append(
            CheckRecord.build(
                MORE_CHECKS,
                worst_of(rest),
                f"{len(rest)} more checks not listed one by one ({summary}); "
                f"a validation lists at most {MAX_CHECKS}",
            )
        )
    return records
