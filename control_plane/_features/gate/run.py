"""Expand a gate into step x artifact invocations and run them on a backend, ``jobs`` at a time."""

from __future__ import annotations

import copy
import glob
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import grpc
import orjson

from control_plane._features.gate.config import (
    ARTIFACT_PLACEHOLDER,
    DEFAULT_DEADLINE,
    GateConfig,
    Step,
)
from control_plane._features.gate.formats import printable
from control_plane._features.gate.report import (
    Artifact,
    GateReport,
    Invocation,
    JobResult,
    status_of,
)
from control_plane._features.grpc.client import DeadlineExceeded, PackCallError, TransportError
from control_plane._kernel.errors import RequestRejected

__all__ = ["Progress", "expand", "run_gate"]

if TYPE_CHECKING:
    from control_plane._features.cli.backends import Blocking


def expand(config: GateConfig) -> tuple[list[Invocation], list[JobResult]]:
    """Invocations to run, plus results for steps that cannot run (no artifact matched)."""
    invocations: list[Invocation] = []
    problems: list[JobResult] = []
    for step in config.steps:
        if not step.artifacts:
            invocations.append(Invocation(step, None, dict(step.input)))
            continue
        artifacts = _match(config.base_dir, step)
        if not artifacts:
            if not step.allow_empty:
                globs = ", ".join(step.artifacts)
                problems.append(
                    JobResult.could_not_run(
                        Invocation(step, None, dict(step.input)),
                        "no_artifacts",
                        f"no file matches {globs} (relative to {config.base_dir}); "
                        "set allow_empty = true if that is expected",
                    )
                )
            continue
        for artifact in artifacts:
            if not artifact.encodable:
                problems.append(
                    JobResult.could_not_run(
                        Invocation(step, artifact, dict(step.input)),
                        "unencodable_path",
                        "the file name is not UTF-8: a pack's input is JSON text and cannot "
                        "carry it; rename the file (or exclude it)",
                    )
                )
                continue
            invocations.append(Invocation(step, artifact, _payload(step, artifact)))
    return invocations, problems


def _encodable(path: str) -> bool:
    """Whether ``path`` is UTF-8 text (a file name of other bytes reaches Python as lone
    surrogates, which no JSON input and no report can carry)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(path: str) -> str:
    """``path`` as reports show it: a byte that is not UTF-8 as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _match(base: Path, step: Step) -> list[Artifact]:
    def run(patterns: Sequence[str]) -> list[str]:
        found: list[str] = []
        for pattern in patterns:
            if os.path.isabs(pattern):
                found.extend(glob.glob(pattern, recursive=True))
            else:
                found.extend(
                    str(base / p) for p in glob.glob(pattern, root_dir=base, recursive=True)
                )
        return found

    excluded = {os.path.realpath(p) for p in run(step.exclude)}
    seen: set[str] = set()
    artifacts: list[Artifact] = []
    for found in sorted(run(step.artifacts)):
        real = os.path.realpath(found)
        if real in seen or real in excluded or os.path.isdir(found):
            continue
        seen.add(real)
        absolute = os.path.abspath(found)
        try:
            display = Path(absolute).relative_to(base).as_posix()
        except ValueError:
            display = Path(absolute).as_posix()
        if _encodable(absolute):
            artifacts.append(Artifact(path=absolute, display=display))
        else:  # never sent: the step could not run on it (see expand)
            artifacts.append(Artifact(_shown(absolute), _shown(display), encodable=False))
    return artifacts


def _payload(step: Step, artifact: Artifact) -> dict[str, Any]:
    doc = _substitute(copy.deepcopy(dict(step.input)), artifact.path)
    if step.artifact_field is not None:
        doc[step.artifact_field] = artifact.path
    return dict(doc)


def _substitute(value: Any, path: str) -> Any:
    if isinstance(value, str):
        return value.replace(ARTIFACT_PLACEHOLDER, path)
    if isinstance(value, Mapping):
        return {k: _substitute(v, path) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, path) for v in value]
    return value


# -- running -------------------------------------------------------------------------


class Progress:
    """``[3/10] step artifact STATUS`` on one rewritten line, only on a terminal."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        self.enabled = total > 0 and self.stream.isatty()

    def update(self, result: JobResult) -> None:
        self.done += 1
        if not self.enabled:
            return
        what = result.invocation.step.name
        if result.invocation.artifact is not None:
            what += f" {result.invocation.artifact.display}"
        line = printable(f"[{self.done}/{self.total}] {result.status.upper():<5} {what}")
        self.stream.write("\r\x1b[K" + line[:200])
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


_UNREACHABLE = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNKNOWN}
)


def run_one(
    backend: Blocking, invocation: Invocation, default_deadline: float = DEFAULT_DEADLINE
) -> JobResult:
    """Run one invocation; a call that could not run becomes a result, never a raise.

    The call's deadline is the step's, else ``default_deadline``: never none.
    """
    step = invocation.step
    started = time.perf_counter()
    try:
        outcome = backend.invoke(
            step.pack,
            orjson.dumps(invocation.payload),
            strict=step.strict,
            fail_on=step.fail_on,
            deadline=step.deadline if step.deadline is not None else default_deadline,
        )
    except RequestRejected as exc:
        rejection = exc.rejection
        message = rejection.message
        if rejection.violations:
            details = "; ".join(f"{v.field or '/'}: {v.description}" for v in rejection.violations)
            message = f"{step.pack} rejected the input: {details}"
        return JobResult.could_not_run(invocation, rejection.reason, message, started)
    except TransportError as exc:
        kind = "unreachable" if exc.status in _UNREACHABLE else "transport"
        message = f"control plane {exc.status.name}: {exc.details}"
        if isinstance(exc, DeadlineExceeded):  # no pack answered: not the pack's code
            kind, message = "deadline", exc.details
        return JobResult.could_not_run(invocation, kind, message, started)
    except PackCallError as exc:
        return JobResult.could_not_run(invocation, "transport", exc.message, started)
    elapsed = time.perf_counter() - started
    return JobResult(invocation, status_of(step, outcome), outcome, None, None, elapsed)


def _declaration_order(result: JobResult) -> tuple[int, str]:
    """Steps in declaration order, each step's artifacts in path order."""
    artifact = result.invocation.artifact
    return result.invocation.step.index, artifact.path if artifact is not None else ""


def run_gate(
    config: GateConfig,
    backend: Blocking,
    *,
    target: str,
    jobs: int = 1,
    progress: Progress | None = None,
    on_result: Callable[[JobResult], None] | None = None,
    packs: Mapping[str, tuple[str, str]] | None = None,
    deadline: float = DEFAULT_DEADLINE,
) -> GateReport:
    """Run every invocation of ``config`` on ``backend`` with ``jobs`` workers; a step
    without a ``deadline`` of its own gets ``deadline``."""
    started = time.perf_counter()
    invocations, problems = expand(config)
    results: dict[int, JobResult] = {}
    progress = progress if progress is not None else Progress(len(invocations))
    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="gate") as pool:
            futures = {
                pool.submit(run_one, backend, inv, deadline): i for i, inv in enumerate(invocations)
            }
            for future in as_completed(futures):
                result = future.result()
                results[futures[future]] = result
                progress.update(result)
                if on_result is not None:
                    on_result(result)
    finally:
        progress.close()
    ordered = problems + [results[i] for i in range(len(invocations))]
    ordered.sort(key=_declaration_order)
    return GateReport(
        config=config,
        target=target,
        results=tuple(ordered),
        elapsed=time.perf_counter() - started,
        packs=dict(packs or {}),
    )
