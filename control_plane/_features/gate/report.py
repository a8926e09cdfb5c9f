"""What a gate run produced: one :class:`JobResult` per step x artifact, its status, and the exit
code.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from control_plane._kernel.outcome import CheckRecord, Outcome

if TYPE_CHECKING:
    from control_plane._features.gate.config import GateConfig, Step

__all__ = [
    "EXIT_COULD_NOT_RUN",
    "EXIT_FINDINGS",
    "EXIT_PASSED",
    "Artifact",
    "GateReport",
    "Invocation",
    "JobResult",
    "Status",
    "status_of",
]

EXIT_PASSED = 0
EXIT_FINDINGS = 1
EXIT_COULD_NOT_RUN = 2

Status = Literal["pass", "warn", "advisory", "fail", "error"]
STATUSES: tuple[Status, ...] = ("pass", "warn", "advisory", "fail", "error")
ARTIFACT_FAILED = "artifact_failed"


@dataclass(frozen=True)
class Artifact:
    """A matched file: absolute ``path`` (sent to the pack) and ``display`` (reports).

    A file whose name is not UTF-8 cannot be sent in a JSON input: it is not
    ``encodable``, its ``path`` and ``display`` show the other bytes as ``\\xNN``, and the
    step could not run on it.
    """

    path: str
    display: str
    encodable: bool = True


@dataclass(frozen=True)
class Invocation:
    """One call: a step, the artifact (``None`` for a step without artifacts), the input."""

    step: Step
    artifact: Artifact | None
    payload: Mapping[str, Any]

    @property
    def label(self) -> str:
        """The artifact's display path, or the step name for a step without artifacts."""
        return self.artifact.display if self.artifact is not None else self.step.name


@dataclass(frozen=True)
class JobResult:
    """The result of one invocation."""

    invocation: Invocation
    status: Status
    outcome: Outcome | None
    problem_kind: str | None
    problem: str | None
    elapsed: float

    @classmethod
    def could_not_run(
        cls, invocation: Invocation, kind: str, message: str, started: float | None = None
    ) -> JobResult:
        elapsed = time.perf_counter() - started if started is not None else 0.0
        return cls(invocation, "error", None, kind, " ".join(message.split()), elapsed)

    @property
    def checks(self) -> list[CheckRecord]:
        """Every check of the outcome (from ``validation``, else the error's checks)."""
        if self.outcome is None:
            return []
        if self.outcome.validation is not None:
            return list(self.outcome.validation.checks)
        if self.outcome.error is not None and self.outcome.error.checks:
            return list(self.outcome.error.checks)
        return []

    @property
    def findings(self) -> list[CheckRecord]:
        """The checks that are not ``pass``: warnings and failures, in order."""
        return [c for c in self.checks if c.severity != "pass"]

    @property
    def reason(self) -> str:
        """One line: why the step could not run, or why it failed."""
        if self.problem is not None:
            return self.problem
        if self.outcome is not None and self.outcome.error is not None:
            return f"{self.outcome.error.code}: {self.outcome.error.message}"
        return ""

    def severity_counts(self) -> dict[str, int]:
        counts = Counter(c.severity for c in self.checks)
        return {s: counts.get(s, 0) for s in ("fail", "warn", "pass")}


def status_of(step: Step, outcome: Outcome) -> Status:
    """The status of a call that ran (the statuses: docs/gate.md)."""
    if outcome.error is not None:
        return "fail" if outcome.error.code == ARTIFACT_FAILED else "error"
    severities = {c.severity for c in outcome.validation.checks} if outcome.validation else set()
    if "fail" in severities:
        return "advisory"
    if "warn" in severities:
        return "warn"
    return "pass"


@dataclass(frozen=True)
class GateReport:
    """Every result of a gate run, in declaration order."""

    config: GateConfig
    target: str
    results: tuple[JobResult, ...]
    elapsed: float
    #: Pack name -> (version, one-line summary), as the backend described them.
    packs: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        counts = Counter(r.status for r in self.results)
        return {s: counts.get(s, 0) for s in STATUSES}

    @property
    def exit_code(self) -> int:
        statuses = {r.status for r in self.results}
        if "error" in statuses:
            return EXIT_COULD_NOT_RUN
        if "fail" in statuses:
            return EXIT_FINDINGS
        return EXIT_PASSED

    @property
    def verdict(self) -> str:
        return {
            EXIT_PASSED: "passed",
            EXIT_FINDINGS: "failed",
            EXIT_COULD_NOT_RUN: "could not run",
        }[self.exit_code]

    def by_step(self) -> list[tuple[Step, Sequence[JobResult]]]:
        """Results grouped by step, in declaration order (steps with none included)."""
        groups: dict[int, list[JobResult]] = {s.index: [] for s in self.config.steps}
        for result in self.results:
            groups[result.invocation.step.index].append(result)
        return [(step, groups[step.index]) for step in self.config.steps]
