"""Run a pack under full enforcement with faults injected at its seams (or its boundary), and judge
it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import inspect
import threading
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from control_plane._kernel.classify import classify
from control_plane._kernel.enforce import nearest_code
from control_plane._kernel.errors import InvalidInput
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.pack import Context, Result
from control_plane._kernel.registry import LoadedPack, Registry
from control_plane._kernel.returned import copy_returned
from control_plane._kernel.schema import json_pointer
from control_plane._kernel.validation import SEVERITY_RANK, worst_of
from control_plane._kernel.vocabulary import BASELINE, INTERNAL_ERROR
from control_plane._runtime.plugins import LoadResult
from control_plane._runtime.runtime import RuntimeConfig, build_runtime

from .faults import FAULTS, KIT_UNDECLARED_CODE, Fault, Secrets, fault
from .grant import KitRoots
from .loopback import LoopbackOnly, refusal_message
from .seams import Seam, constant, patch_seams, resolve_seam
from .static import PackReport, check_loaded
from .target import ConformanceError, PackTarget, load_target

__all__ = ["FaultReport", "FaultResult", "GeneratedReport", "PackKit"]

T = TypeVar("T")
_MISSING: Any = object()

#: The deadline of a ``hang`` fault's call, and how long the seam hangs.
DEADLINE_S = 0.3
HANG_S = 1.0
#: The cancellation check: how long a sync handler may keep its thread once its call
#: ended, and how long each seam call of its slow, failing downstream takes.
CANCEL_GRACE_S = 2.0
PROBE_SEAM_S = 0.05


@dataclass
class _Call:
    """What one call's handler did, recorded by the wrapper around it."""

    fault: Fault | None
    secrets: Secrets
    boundary: bool = False
    handler_ran: bool = False
    raised: BaseException | None = None
    returned: Any = _MISSING
    seam_calls: int = 0
    #: The cancellation check: seams answer slowly with a retryable network failure.
    probe: bool = False


@dataclass(frozen=True)
class FaultResult:
    """One injected fault: what was injected, what the caller got, what went wrong."""

    fault: str
    injected: str
    #: Where it was injected: ``seam``, ``handler call`` or ``return``.
    where: str
    #: The code a caller would see had the handler let the fault propagate (``None`` for
    #: faults that replace the output).
    propagated: str | None
    #: The code the caller received (``None``: the call succeeded).
    code: str | None
    outcome: Outcome
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class FaultReport:
    """Every injected fault of one run, and the table of what each mapped to."""

    pack: str
    version: str
    mode: str
    results: list[FaultResult] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return [f"{r.fault}: {p}" for r in self.results for p in r.problems]

    @property
    def ok(self) -> bool:
        return not self.problems

    def mapped(self, name: str) -> str | None:
        """The code the caller received for fault ``name`` (``None``: success)."""
        return self.result(name).code

    def result(self, name: str) -> FaultResult:
        for result in self.results:
            if result.fault == name:
                return result
        raise KeyError(name)

    def render(self) -> str:
        """The fault map: one row per fault."""
        rows = [("fault", "injected at", "if propagated", "caller got", "")]
        for r in self.results:
            got = r.code or "ok (handled)"
            note = "FAIL" if r.problems else ("" if r.propagated in (None, r.code) else "handled")
            rows.append((r.fault, r.where, r.propagated or "-", got, note))
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        lines = [f"fault map of {self.pack} {self.version} ({self.mode})"]
        for row in rows:
            cells = [row[i].ljust(widths[i]) for i in range(4)]
            lines.append(("  " + "  ".join(cells) + "  " + row[4]).rstrip())
        return "\n".join(lines)


@dataclass
class GeneratedReport:
    """What generated inputs did: examples run, codes seen, inputs the runtime refused."""

    pack: str
    examples: int = 0
    refused: int = 0
    codes: Counter[str] = field(default_factory=Counter)

    def render(self) -> str:
        seen = ", ".join(f"{code} x{n}" for code, n in sorted(self.codes.items()))
        return (
            f"generated inputs for {self.pack}: {self.examples} example(s), "
            f"{self.refused} refused by the input check; outcomes: {seen or 'none'}"
        )


def _leaks(data: Any, values: Mapping[str, str], path: tuple[str | int, ...] = ()) -> list[str]:
    """Where (JSON pointer) each secret value appears in ``data``."""
    found: list[str] = []
    if isinstance(data, str):
        for kind, value in values.items():
            if value in data:
                found.append(f"{kind} at {json_pointer(path) or '/'}")
    elif isinstance(data, Mapping):
        for key, item in data.items():
            found.extend(_leaks(str(key), values, (*path, str(key))))
            found.extend(_leaks(item, values, (*path, str(key))))
    elif isinstance(data, list | tuple):
        for index, item in enumerate(data):
            found.extend(_leaks(item, values, (*path, index)))
    return found


class _Loop:
    """An event loop of the kit's own, on a daemon thread: usable from sync and async tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="kit")
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        if not self.loop.is_running():
            self.loop.close()


class PackKit:
    """The conformance kit for one pack (see the module docs for how faults are injected).

    :param target: the pack under test.
    :param timeout: the deadline of each call (the ``deadline`` fault uses a short one).
    """

    def __init__(self, target: PackTarget, *, timeout: float = 10.0) -> None:
        self.target = target
        self.timeout = timeout
        self.loaded_target = load_target(target)
        self.original: LoadedPack = self.loaded_target.loaded
        self.secrets = Secrets.plant()
        self.stubs = target.seam_stubs()
        for spec in self.stubs:
            try:
                resolve_seam(spec)
            except (ImportError, LookupError) as exc:
                raise ConformanceError(f"pack {target.name!r}: {exc}") from exc
        self._call: _Call | None = None
        handler = self.original.pack.handler
        wrapped = self._wrap_async(handler) if self.original.pack.is_async else self._wrap(handler)
        registry = Registry()
        # Faults are injected inside the handler, so the harness runs it in this process
        # (isolated=False); `pack_grpc` serves the pack on the real runtime, isolation and all.
        self.loaded = registry.register(
            dataclasses.replace(self.original.pack, handler=wrapped, isolated=False),
            self.original.plugin,
        )
        load = LoadResult(
            registry, self.loaded_target.load.classifiers, self.loaded_target.load.plugin_manager
        )
        #: The directories standing for ``$CWD`` and ``$TMP`` in this kit's runs.
        self.roots = KitRoots()
        grant = self.roots.runtime_options(self.name, self.original.pack.reach, target.grant)
        try:
            self.runtime = build_runtime(
                RuntimeConfig(builtins=False, entry_points=False, handler_threads=4, **grant),
                load=load,
            )
        except BaseException:
            self.roots.close()
            raise
        self.invoker = self.runtime.invoker
        self._loop = _Loop()
        #: Refuses traffic beyond loopback during calls, unless the target allows it.
        self.loopback = LoopbackOnly()
        #: Fault reports of this kit, for the pytest terminal summary.
        self.reports: list[FaultReport] = []

    @property
    def name(self) -> str:
        return self.loaded.name

    @property
    def mode(self) -> str:
        if self.stubs:
            return "seam mode: " + ", ".join(self.stubs)
        return "boundary mode: no seams declared, faults raised at the handler call"

    def root(self, name: str) -> Path:
        """The directory standing for ``name`` (``"$CWD"``, ``"$TMP"``) in this kit's
        runs: where a test puts the files the pack reads under its grant."""
        return self.roots.root(name)

    def close(self) -> None:
        self.runtime.close()
        self._loop.close()
        self.roots.close()

    def __enter__(self) -> PackKit:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the handler wrapper ---------------------------------------------------------

    def _boundary(self, call: _Call) -> tuple[bool, Any]:
        """For a boundary-injected fault: (True, exception or output); else (False, None)."""
        f = call.fault
        if f is None or not (call.boundary or f.kind == "return"):
            return False, None
        return True, f.build(call.secrets)

    def _wrap(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        def handle(doc: dict[str, Any], ctx: Context) -> Any:
            call = self._call
            if call is None:
                return handler(doc, ctx)
            injected, value = self._boundary(call)
            if injected:
                assert call.fault is not None
                if call.fault.kind == "hang":
                    time.sleep(HANG_S)
                if isinstance(value, BaseException):
                    raise value
                return value
            call.handler_ran = True
            try:
                returned = handler(doc, ctx)
            except BaseException as exc:
                call.raised = exc
                raise
            call.returned = returned
            return returned

        return handle

    def _wrap_async(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        async def handle(doc: dict[str, Any], ctx: Context) -> Any:
            call = self._call
            if call is None:
                return await handler(doc, ctx)
            injected, value = self._boundary(call)
            if injected:
                assert call.fault is not None
                if call.fault.kind == "hang":
                    await asyncio.sleep(HANG_S)
                if isinstance(value, BaseException):
                    raise value
                return value
            call.handler_ran = True
            try:
                returned = await handler(doc, ctx)
            except BaseException as exc:
                call.raised = exc
                raise
            call.returned = returned
            return returned

        return handle

    # -- seams -----------------------------------------------------------------------

    @staticmethod
    def faulty(call: _Call, f: Fault) -> Callable[[Seam], Any]:
        """A factory of seam replacements that raise (or hang, then raise) ``f``."""

        def reached() -> None:
            call.seam_calls += 1

        delay = HANG_S if f.kind == "hang" else 0.0
        return lambda seam: _stand_in(seam, delay, lambda: f.build(call.secrets), reached)

    @staticmethod
    def slow_failing(call: _Call) -> Callable[[Seam], Any]:
        """Seam replacements for the cancellation check: each call takes
        :data:`PROBE_SEAM_S`, then fails as a reset connection would (retryable)."""

        def reset() -> ConnectionResetError:
            call.seam_calls += 1
            return ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")

        return lambda seam: _stand_in(seam, PROBE_SEAM_S, reset)

    @contextmanager
    def _seams(self, call: _Call) -> Iterator[None]:
        f = call.fault
        replacements: dict[str, Callable[[Seam], Any] | None] = {}
        for spec, stub in self.stubs.items():
            if call.probe:
                replacements[spec] = self.slow_failing(call)
            elif f is not None and f.kind != "return":
                replacements[spec] = self.faulty(call, f)
            elif stub is not None:
                replacements[spec] = constant(stub)
            else:
                replacements[spec] = None
        with patch_seams(replacements):
            yield

    # -- running ---------------------------------------------------------------------

    @contextmanager
    def _network(self) -> Iterator[None]:
        if self.target.network:
            yield
        else:
            with self.loopback.active():
                yield

    def _sample_inputs(self) -> list[dict[str, Any]]:
        if self.target.sample_inputs:
            return [dict(doc) for doc in self.target.sample_inputs]
        from .generate import minimal_input

        return [minimal_input(self.loaded.input_schema)]

    def _execute(
        self, doc: Mapping[str, Any], call: _Call, *, strict: bool, fail_on: str, timeout: float
    ) -> Outcome:
        """One call under enforcement; :class:`InvalidInput` when the input is refused."""
        self._call = call
        try:
            with self._seams(call), self._network():
                coro = self.invoker.invoke(
                    self.name,
                    dict(doc),
                    strict=strict,
                    fail_on=fail_on,  # type: ignore[arg-type]
                    timeout=timeout,
                )
                return self._loop.run(coro, timeout + HANG_S + 10)
        finally:
            self._call = None

    def _execute_checked(
        self, doc: Mapping[str, Any], call: _Call, *, strict: bool, fail_on: str, timeout: float
    ) -> Outcome:
        try:
            return self._execute(doc, call, strict=strict, fail_on=fail_on, timeout=timeout)
        except InvalidInput as exc:
            raise ConformanceError(f"pack {self.name!r}: input refused: {exc}") from exc

    def _judge(self, call: _Call, outcome: Outcome, *, require_seam: bool = True) -> list[str]:
        """Everything wrong with one call (empty when it conformed).

        A handler still running (cancelled at the deadline) is judged by its outcome only.
        """
        problems: list[str] = []
        refused = self.loopback.take()
        if refused:
            problems.append(refusal_message(self.name, refused))
        code = outcome.code
        if code is not None and code not in self.loaded.vocabulary:
            problems.append(
                f"the caller received {code!r}, outside the vocabulary "
                f"{sorted(self.loaded.vocabulary)}"
            )
        leaks = _leaks(outcome.to_dict(), self.secrets.named())
        if leaks:
            problems.append(
                "secret leaked to the caller: planted "
                + "; ".join(leaks)
                + " (never copy downstream error text or credentials into the output)"
            )
        finished = call.raised is not None or call.returned is not _MISSING
        if call.handler_ran and finished:
            problems.extend(self._judge_handler(call))
        f = call.fault
        if (
            require_seam
            and f is not None
            and f.kind != "return"
            and not call.boundary
            and call.seam_calls == 0
            and call.handler_ran
        ):
            problems.append(
                f"fault not exercised: the handler called none of the seams "
                f"{', '.join(self.stubs)}; give sample_inputs that reach the downstream"
            )
        return problems

    def _undeclared(self, code: object) -> bool:
        return (
            isinstance(code, str)
            and code != KIT_UNDECLARED_CODE
            and code not in BASELINE
            and code not in self.loaded.vocabulary
        ) or not isinstance(code, str)

    def _judge_handler(self, call: _Call) -> list[str]:
        problems: list[str] = []
        fix = "declare it in the output schema's error.code enum and document it in codes="
        if call.raised is not None:
            cls = classify(call.raised, self.invoker.classifiers)
            if cls is not None and self._undeclared(cls.code):
                problems.append(
                    f"the pack raised undeclared code {cls.code!r} (callers get "
                    f"internal_error and a contract violation is counted); {fix}"
                )
            return problems
        returned = call.returned
        output = returned.output if isinstance(returned, Result) else returned
        if not isinstance(output, Mapping):
            problems.append(f"the pack returned {type(output).__name__}, not a JSON object")
            return problems
        error = output.get("error")
        if isinstance(error, Mapping):
            if self._undeclared(error.get("code")):
                problems.append(f"the pack returned undeclared code {error.get('code')!r}; {fix}")
            return problems
        # The boundary's own copy: what it refuses (bytes, inf, NaN...) is named by path.
        copied = copy_returned(dict(output))
        if copied.problem is not None:
            problems.append(f"the pack's output is not JSON data: {copied.problem}")
            return problems
        data = copied.output
        if isinstance(returned, Result):
            data.pop("validation", None)
        else:
            problems.extend(_validation_status(data.get("validation")))
        violations = self.loaded.output_validator.violations(data)
        if violations:
            where = "; ".join(f"{v.field or '/'}: {v.description}" for v in violations[:3])
            problems.append(f"the pack's output breaks its output schema: {where}")
        return problems

    def _propagated(self, f: Fault) -> str | None:
        """The code a caller sees when the handler lets ``f`` propagate."""
        if f.kind == "return":
            return None
        if f.kind == "hang":
            return nearest_code(self.loaded, "timeout")
        cls = classify(f.build(self.secrets), self.invoker.classifiers)
        if cls is None or cls.code not in BASELINE:
            return INTERNAL_ERROR
        return nearest_code(self.loaded, cls.code)

    # -- the public checks -----------------------------------------------------------

    def check_static(self) -> PackReport:
        """Static conformance of the pack; :class:`ConformanceError` on any error finding."""
        report = check_loaded(self.original)
        errors = [f for f in report.findings if f.severity == "error"]
        if errors:
            raise ConformanceError(
                f"pack {self.name!r} failed static conformance:\n"
                + "\n".join(f"  - {f.fault}" for f in errors)
            )
        return report

    def invoke(
        self,
        doc: Mapping[str, Any],
        *,
        strict: bool = False,
        fail_on: str = "fail",
        timeout: float | None = None,
    ) -> Outcome:
        """Call the pack (seams stubbed, no fault) under full enforcement and check the call.

        :class:`ConformanceError` if the handler raised or returned an undeclared code,
        returned output that breaks its schema, or a secret reached the caller.
        """
        call = _Call(None, self.secrets)
        outcome = self._execute_checked(
            doc, call, strict=strict, fail_on=fail_on, timeout=timeout or self.timeout
        )
        problems = self._judge(call, outcome)
        if problems:
            raise ConformanceError(
                f"pack {self.name!r} with input {dict(doc)!r}:\n" + _bullets(problems)
            )
        return outcome

    def run_fault(self, f: Fault | str, doc: Mapping[str, Any] | None = None) -> FaultResult:
        """Inject one fault into one call; the result (problems listed, not raised)."""
        f = fault(f) if isinstance(f, str) else f
        doc = doc if doc is not None else self._sample_inputs()[0]
        boundary = not self.stubs and f.kind != "return"
        call = _Call(f, self.secrets, boundary=boundary)
        timeout = DEADLINE_S if f.kind == "hang" else self.timeout
        outcome = self._execute_checked(doc, call, strict=False, fail_on="fail", timeout=timeout)
        problems = self._judge(call, outcome)
        expected = self.target.expect.get(f.name)
        if expected is not None and outcome.code != expected:
            problems.append(f"expected {expected!r}, the caller got {outcome.code or 'success'!r}")
        if f.kind == "return":
            where = "return"
        else:
            where = "handler call" if boundary else f"seam x{call.seam_calls}"
        return FaultResult(
            fault=f.name,
            injected=f.description,
            where=where,
            propagated=self._propagated(f),
            code=outcome.code,
            outcome=outcome,
            problems=tuple(problems),
        )

    def check_cancellation(
        self, doc: Mapping[str, Any] | None = None, *, grace: float = CANCEL_GRACE_S
    ) -> float:
        """A sync handler stops once the control plane gives up on its call.

        The call gets a short deadline (:data:`DEADLINE_S`); in seam mode each seam call
        takes :data:`PROBE_SEAM_S` and then fails with a reset connection, so a handler
        that retries keeps going until it looks at ``ctx.cancelled`` (or
        ``ctx.remaining()``). The handler's thread must be free again within ``grace``
        seconds of the call's end: a thread it keeps is taken from the pack's share of the
        pool until it returns (docs/authoring.md, "Cancellation"). Returns the seconds
        the thread was kept past the call's end; raises :class:`ConformanceError` past
        ``grace``. An async handler is cancelled by the event loop: 0.0 at once.
        """
        if self.loaded.pack.is_async:
            return 0.0
        doc = doc if doc is not None else self._sample_inputs()[0]
        call = _Call(None, self.secrets, probe=True)
        threads = self.invoker.threads
        self._call = call
        try:
            with self._seams(call), self._network():
                coro = self.invoker.invoke(self.name, dict(doc), timeout=DEADLINE_S)
                self._loop.run(coro, DEADLINE_S + grace + 10)
                ended = time.monotonic()
                while threads.held(self.name) and time.monotonic() - ended < grace:
                    time.sleep(0.01)
                kept = time.monotonic() - ended
                still = threads.held(self.name)
        except InvalidInput as exc:
            raise ConformanceError(f"pack {self.name!r}: input refused: {exc}") from exc
        finally:
            self._call = None
        if still:
            where = f" ({call.seam_calls} seam calls so far)" if self.stubs else ""
            raise ConformanceError(
                f"pack {self.name!r}: its handler kept running {grace:g}s after its call "
                f"ended{where}: it ignores ctx.cancelled, so every cancelled or expired "
                "call keeps a thread of the pack's share until the handler returns; poll "
                "ctx.cancelled between slow steps and stop (docs/authoring.md, "
                "'Cancellation')"
            )
        return kept

    def inject_faults(
        self,
        faults: Sequence[Fault | str] | None = None,
        *,
        inputs: Sequence[Mapping[str, Any]] | None = None,
    ) -> FaultReport:
        """Inject every fault (default: the whole catalogue) with each sample input.

        Returns the :class:`FaultReport` (its :meth:`~FaultReport.render` is the fault
        map); raises :class:`ConformanceError` listing every problem, map included.
        """
        chosen = [fault(f) if isinstance(f, str) else f for f in (faults or FAULTS)]
        docs = [dict(d) for d in inputs] if inputs else self._sample_inputs()
        known = {f.name for f in chosen}
        for name in self.target.expect:
            if name not in known:
                fault(name)  # a typo in expect= must not pass silently
        report = FaultReport(self.name, self.loaded.version, self.mode)
        for doc in docs:
            for f in chosen:
                report.results.append(self.run_fault(f, doc))
        self.reports.append(report)
        if not report.ok:
            raise ConformanceError(
                f"pack {self.name!r} failed fault injection:\n"
                + _bullets(report.problems)
                + "\n"
                + report.render()
            )
        return report

    def check_generated_inputs(
        self, max_examples: int = 25, *, faults: bool | Sequence[str] = True
    ) -> GeneratedReport:
        """Inputs drawn from the input schema (``hypothesis-jsonschema``), each run with no
        fault or with an injected one, never escape the vocabulary nor break the checks of
        :meth:`invoke`. Seams without stubs always get a fault: no real downstream is
        called by surprise."""
        from .generate import run_generated

        if faults is True:
            names = [f.name for f in FAULTS if f.kind == "raise"]
        elif faults is False:
            names = []
        else:
            names = [fault(n).name for n in faults]
        stubbed = all(stub is not None for stub in self.stubs.values())
        choices: list[str | None] = [None] if stubbed or not self.stubs else []
        if self.stubs:
            choices.extend(names)
        if not choices:
            raise ConformanceError(
                f"pack {self.name!r}: seams without stubs and no faults to inject; "
                "give the seams stubs or allow faults"
            )
        report = GeneratedReport(self.name)

        def one(doc: dict[str, Any], name: str | None) -> None:
            f = fault(name) if name is not None else None
            call = _Call(f, self.secrets)
            try:
                outcome = self._execute(
                    doc, call, strict=False, fail_on="fail", timeout=self.timeout
                )
            except InvalidInput:
                report.refused += 1
                return
            report.examples += 1
            report.codes[outcome.code or "ok"] += 1
            problems = self._judge(call, outcome, require_seam=False)
            if problems:
                label = f" under fault {name!r}" if name else ""
                raise ConformanceError(
                    f"pack {self.name!r} with generated input {doc!r}{label}:\n"
                    + _bullets(problems)
                )

        run_generated(self.loaded.input_schema, choices, one, max_examples)
        return report


def _validation_status(validation: object) -> list[str]:
    """A hand-written ``validation`` whose ``status`` its checks contradict.

    The control plane derives ``status`` from the checks (the worst severity) and ignores
    the pack's own, so ``status: fail`` over checks that do not fail passes strict mode
    and ``packctl gate``. (A malformed field is the runtime's ``schema_mismatch``.)
    """
    if not isinstance(validation, Mapping):
        return []
    status, checks = validation.get("status"), validation.get("checks", [])
    if status not in SEVERITY_RANK or not isinstance(checks, list):
        return []
    if not all(isinstance(c, Mapping) and c.get("severity") in SEVERITY_RANK for c in checks):
        return []
    worst = worst_of(checks)
    if status == worst:
        return []
    return [
        f"the pack's validation.status is {status!r} but the worst severity of its checks is "
        f"{worst!r}: the control plane derives status from the checks, so callers (strict "
        f"mode, packctl gate) see {worst!r}; report each finding as a check (or return "
        "Result(output, checks=[Check(...)]) and let the runtime write validation)"
    ]


def _stand_in(
    seam: Seam,
    delay: float,
    fail: Callable[[], BaseException],
    reached: Callable[[], None] = lambda: None,
) -> Any:
    """A replacement of ``seam``'s callable (a coroutine function for a coroutine one): on
    each call ``reached()``, then ``delay`` seconds' wait (none for 0), then ``fail()``
    raised."""
    if inspect.iscoroutinefunction(seam.current):

        async def afailing(*args: Any, **kwargs: Any) -> Any:
            reached()
            if delay:
                await asyncio.sleep(delay)
            raise fail()

        return afailing

    def failing(*args: Any, **kwargs: Any) -> Any:
        reached()
        if delay:
            time.sleep(delay)
        raise fail()

    return failing


def _bullets(items: Sequence[str]) -> str:
    return "\n".join(f"  - {item}" for item in items)
