"""The invoke pipeline, one direction:

request -> input check -> handler under a deadline -> classification -> output check ->
enforcement -> redaction -> :class:`~control_plane._kernel.outcome.Outcome`.

Requests the control plane refuses before a handler runs (unknown pack, invalid input)
raise :class:`~control_plane._kernel.errors.RequestRejected`; every other failure becomes an
outcome whose code is inside the pack's effective vocabulary.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import math
import time
import types
import uuid
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from typing import Any, Protocol

import orjson
import pluggy

from control_plane._kernel.bounds import safe_text
from control_plane._kernel.call_hooks import CallHooks
from control_plane._kernel.classify import Classification, Classifier, classify
from control_plane._kernel.enforce import Enforcer
from control_plane._kernel.error_event import (
    ErrorEvent,
    correlation_from_metadata,
    reset_correlation,
    set_correlation,
)
from control_plane._kernel.errors import FieldViolation, InvalidInput, RequestRejected
from control_plane._kernel.incidents import Incidents
from control_plane._kernel.limits import (
    MAX_INPUT_DEPTH,
    MAX_REQUEST_ID,
    check_depth,
    check_request_id,
    describe_json_error,
    refine_unknown_pack,
)
from control_plane._kernel.outcome import ErrorEnvelope, Outcome, ValidationRecord
from control_plane._kernel.pack import Context
from control_plane._kernel.reach import Reaches
from control_plane._kernel.redact import scrub, scrub_data
from control_plane._kernel.registry import LoadedPack, Registry, validation_field_schema
from control_plane._kernel.rejection import Rejection
from control_plane._kernel.returned import Returned, copy_returned
from control_plane._kernel.schema import CompiledSchema
from control_plane._kernel.threads import PackThreads
from control_plane._kernel.validation import FailOn, check_records, failing, worst_of

__all__ = ["Invoker", "IsolatedHandlers"]


class IsolatedHandlers(Protocol):
    """Handlers that run outside this process (``_features.isolation.isolation.Isolation``)."""

    def __contains__(self, pack: object) -> bool: ...

    async def call(self, pack: str, doc: Any, ctx: Context) -> Any: ...

    def close(self) -> None: ...


_VALIDATION = CompiledSchema(validation_field_schema())


def parse_input(pack: str, payload: bytes | str | Mapping[str, Any]) -> dict[str, Any]:
    """The input document as a dict, or :class:`InvalidInput` saying why not."""
    if isinstance(payload, Mapping):
        return dict(payload)
    try:
        doc = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(pack, [FieldViolation("", describe_json_error(exc))]) from None
    if not isinstance(doc, dict):
        kind = type(doc).__name__.replace("NoneType", "null")
        raise InvalidInput(pack, [FieldViolation("", f"input must be a JSON object, got {kind}")])
    if len(payload) > MAX_INPUT_DEPTH:
        check_depth(pack, payload, doc)
    return doc


class Invoker:
    """Runs packs from a :class:`Registry` under full enforcement."""

    def __init__(
        self,
        registry: Registry,
        *,
        classifiers: Sequence[Classifier] = (),
        incidents: Incidents | None = None,
        max_workers: int | None = None,
        default_timeout: float | None = None,
        pack_threads: int | None = None,
        plugins: pluggy.PluginManager | None = None,
        reaches: Reaches | None = None,
    ) -> None:
        self.registry = registry
        #: The registry's packs by name (its live, read-only view: one lookup per call).
        self._packs = registry.packs
        #: What each pack may reach (``ctx.reach``): the runtime's grants over the packs'
        #: declarations (by default the declarations alone, and no program runner).
        self.reaches = reaches if reaches is not None else Reaches(None, registry.declared_reach)
        self.classifiers = tuple(classifiers)
        self.incidents = incidents if incidents is not None else Incidents()
        self.enforcer = Enforcer(self.incidents)
        self.default_timeout = default_timeout
        #: Sync handlers' threads, each pack up to its share (``pack_threads``).
        self.threads = PackThreads(max_workers, pack_threads)
        #: The call hooks (``call_started``, ``call_finished``, ``incident_recorded``,
        #: ``request_refused``) of ``plugins`` (by default a manager of its own);
        #: register observers with ``invoker.hooks.register(plugin)``.
        self.hooks = CallHooks(plugins)
        if self.incidents.hooks is None:
            self.incidents.hooks = self.hooks
        #: Packs whose handlers run in worker processes (``None``: none do).
        self.isolation: IsolatedHandlers | None = None

    @property
    def contract_violations(self) -> Mapping[str, int]:
        return self.enforcer.contract_violations

    def close(self) -> None:
        self.threads.shutdown()
        if self.isolation is not None:
            self.isolation.close()
        self.reaches.close()

    # -- the pipeline ------------------------------------------------------------

    async def invoke(
        self,
        name: str,
        payload: bytes | str | Mapping[str, Any],
        *,
        strict: bool = False,
        fail_on: FailOn = "fail",
        request_id: str | None = None,
        timeout: float | None = None,
        metadata: Iterable[tuple[str, str | bytes]] | None = None,
    ) -> Outcome:
        """Invoke pack ``name`` with ``payload`` (JSON bytes/str or a dict).

        ``metadata``: the caller's request metadata (gRPC invocation metadata): its
        correlation ids (:func:`~control_plane._kernel.error_event.correlation_from_metadata`)
        go on every event of the call, read only when a plugin listens for them."""
        hooks = self.hooks
        token = None
        if metadata and (hooks.finished or hooks.refused):
            ids = correlation_from_metadata(metadata)
            if ids:
                token = set_correlation(ids)
        try:
            started = time.perf_counter()
            try:
                loaded, doc = self._admit(name, payload, request_id)
            except RequestRejected as exc:
                self.report_refusal(exc, request_id=request_id)
                raise
            rid = request_id or uuid.uuid4().hex
            budget = timeout if timeout is not None else self.default_timeout
            deadline = None if budget is None else time.monotonic() + budget
            ctx = Context(name, rid, deadline, self.reaches)
            if hooks.started:
                ends = hooks.started_call(loaded)
                try:
                    outcome = await self._run(loaded, doc, ctx, rid, budget, strict, fail_on)
                finally:
                    hooks.ended(ends)
            else:
                outcome = await self._run(loaded, doc, ctx, rid, budget, strict, fail_on)
            elapsed = time.perf_counter() - started
            if hooks.finished:
                hooks.notify(hooks.finished, loaded, outcome, elapsed)
            return outcome
        finally:
            if token is not None:
                reset_correlation(token)

    def _admit(
        self, name: str, payload: bytes | str | Mapping[str, Any], request_id: str | None
    ) -> tuple[LoadedPack, dict[str, Any]]:
        """The input check: the pack and its input, or :class:`RequestRejected`."""
        loaded = self._packs.get(name)
        if loaded is None:
            raise refine_unknown_pack(self.registry.unknown(name))
        doc = parse_input(name, payload)
        # The check holds the GIL (and this event loop) throughout: bounded before it runs.
        check = loaded.input_validator
        if not check.cheap:
            raw = payload if isinstance(payload, bytes | str) else None
            costly = check.check_fault(doc, raw)
            if costly is not None:
                raise InvalidInput(name, [FieldViolation("", costly)])
        try:
            valid = check.is_valid(doc)
        except (ValueError, TypeError, OverflowError) as exc:  # a dict payload of non-JSON data
            raise InvalidInput(
                name, [FieldViolation("", f"input is not JSON data: {exc}")]
            ) from None
        if not valid:
            raise InvalidInput(name, check.violations(doc))
        if request_id is not None and len(request_id) > MAX_REQUEST_ID:
            check_request_id(name, request_id)
        return loaded, doc

    def report_refusal(
        self, rejection: Rejection | RequestRejected, *, request_id: str | None = None
    ) -> None:
        """Tell ``request_refused`` of a refusal, once. The invoker does so for every
        refusal of its input check, whatever adapter took the request (gRPC, MCP,
        ``--local``, the kit, the gate, Temporal); an adapter calls it for a refusal it
        makes itself (the MCP bridge's unknown tool)."""
        if isinstance(rejection, RequestRejected):
            if rejection.reported:
                return
            rejection.reported = True
        hooks = self.hooks
        if not hooks.refused:
            return
        event = ErrorEvent.rejection(rejection, request_id=request_id)
        registry = self.registry
        if event.pack in registry:
            event = dataclasses.replace(event, version=registry.get(event.pack).version)
        hooks.notify(hooks.refused, event)

    def invoke_sync(
        self, name: str, payload: bytes | str | Mapping[str, Any], **kwargs: Any
    ) -> Outcome:
        """:meth:`invoke` from synchronous code (CLI ``--local``, tests)."""
        return asyncio.run(self.invoke(name, payload, **kwargs))

    async def _run(
        self,
        loaded: LoadedPack,
        doc: dict[str, Any],
        ctx: Context,
        rid: str,
        budget: float | None,
        strict: bool,
        fail_on: FailOn,
    ) -> Outcome:
        try:
            return await self._guarded_run(loaded, doc, ctx, rid, budget, strict, fail_on)
        # The closed-set guarantee's last line: a bug of the runtime itself (or anything a
        # pack's object raised while it was classified -- SystemExit included) still ends as
        # internal_error, never as a stray raise. Only the caller's own cancellation passes.
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError) and _caller_cancelled():
                raise
            return self._broken(loaded, rid, exc)

    def _broken(self, loaded: LoadedPack, rid: str, bug: BaseException) -> Outcome:
        """``internal_error`` for a failure of the pipeline itself (see :meth:`_run`)."""
        summary = f"enforcement failed: {safe_text(type(bug).__name__, 200)}"
        try:
            envelope = self.enforcer.internal(loaded, bug, rid, "runtime", summary)
        # The incident of ``bug`` could not be written either (its text is the pack's
        # when it is the pack's exception): one without it.
        except BaseException:  # noqa: BLE001
            envelope = self.enforcer.internal(loaded, None, rid, "runtime", summary)
        return _outcome(loaded, rid, error=envelope)

    async def _guarded_run(
        self,
        loaded: LoadedPack,
        doc: dict[str, Any],
        ctx: Context,
        rid: str,
        budget: float | None,
        strict: bool,
        fail_on: FailOn,
    ) -> Outcome:
        origin = f"pack:{loaded.name}"
        scope: asyncio.Timeout | None = None
        own: _OwnCancels | None = None
        isolation = self.isolation
        if isolation is not None and loaded.name not in isolation:
            isolation = None
        try:
            if isolation is None and loaded.pack.is_async:
                # Run the coroutine's first step before arming the deadline timer: most
                # handlers finish (or raise) without ever suspending, and a timer cannot fire
                # while code runs synchronously anyway, so the outcome is the same without
                # the timer's cost (~6 us). One that suspends finishes under the deadline,
                # counted from before its first step.
                loop = asyncio.get_running_loop()
                when = None if budget is None else loop.time() + budget
                own = _OwnCancels()
                coro = loaded.pack.handler(doc, ctx)
                try:
                    pending = own.step(coro.send, None)  # type: ignore[union-attr]
                except StopIteration as done:
                    returned = done.value
                else:
                    async with asyncio.timeout_at(when) as scope:
                        returned = await _resume(coro, pending, own)
                if inspect.isawaitable(returned):  # an awaitable returned: awaited too
                    async with asyncio.timeout_at(when) as scope:
                        returned = await _await_relayed(returned)
            elif isolation is not None:
                async with asyncio.timeout(budget) as scope:
                    returned = await isolation.call(loaded.name, doc, ctx)
            else:
                # A sync handler: its whole outcome is made in the pack's thread, under the
                # call's deadline (:func:`_call_and_finish`). The copy to plain data, the
                # output's checks and the enforcement of a failure cost time in proportion
                # to what the pack hands back -- a huge result, an exception whose
                # attributes or text are slow -- and that time is the pack's thread's,
                # never the event loop's.
                finish = functools.partial(self._finish_guarded, loaded, rid, strict, fail_on)
                settle = functools.partial(self._settle, loaded, rid)
                async with asyncio.timeout(budget) as scope:
                    returned = await self.threads.run(
                        loaded.name,
                        _call_and_finish,
                        loaded.pack.handler,
                        doc,
                        ctx,
                        settle,
                        finish,
                    )
                    if type(returned) is _Settled:  # the outcome, made in the pack's thread
                        return returned.outcome
                    if inspect.isawaitable(returned):  # a sync callable returning a coroutine
                        returned = await _await_relayed(returned)
            # Still inside the boundary: what the handler returned becomes plain JSON data
            # before anything else touches it (its methods may raise anything).
            copied = copy_returned(returned)
        except TimeoutError as exc:
            if scope is not None and scope.expired():
                ctx.cancel()
                cls = Classification(
                    code="timeout",
                    message=f"the call's deadline of {budget:g}s passed before the pack finished",
                    rule="deadline",
                )
                return self._failed(loaded, rid, cls, exc, "control_plane")
            return self._failed(loaded, rid, classify(exc, self.classifiers), exc, origin)
        # The pack boundary: a handler may raise anything -- KeyboardInterrupt, SystemExit,
        # GeneratorExit, a cancellation of its own (awaiting a cancelled task, a
        # concurrent.futures.CancelledError from a thread) -- and every failure is
        # classified. Only the caller's own cancellation (this task being cancelled) passes.
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError) and _caller_cancelled(own):
                # The caller gave up (an MCP client's notifications/cancelled, a gRPC
                # client gone): a sync handler still running in its thread must learn it
                # now, not only at the deadline.
                ctx.cancel()
                raise
            if own is not None and own.count:
                await own.settle()
            return self._failed(loaded, rid, classify(exc, self.classifiers), exc, origin)
        if own is not None and own.count:
            await own.settle()
        return self._finish(loaded, rid, copied, strict, fail_on)

    def _settle(self, loaded: LoadedPack, rid: str, exc: BaseException) -> _Settled:
        """A sync handler's failure made an outcome in the pack's own thread, under the
        call's deadline: classification (the ``classify_exception`` hooks included),
        the enforcement and the incident (formatting the exception) all read the
        exception's attributes and texts, which the pack controls. Never raises: a
        failure while settling is an ``internal_error`` as in :meth:`_run`."""
        try:
            classification = classify(exc, self.classifiers)
            return _Settled(self._failed(loaded, rid, classification, exc, f"pack:{loaded.name}"))
        # The pack boundary, in the pack's thread: reading the exception may raise anything.
        except BaseException as bug:  # noqa: BLE001
            return _Settled(self._broken(loaded, rid, bug))

    def _finish_guarded(
        self, loaded: LoadedPack, rid: str, strict: bool, fail_on: FailOn, copied: Returned
    ) -> _Settled:
        """A sync handler's copied return value made an outcome in the pack's own thread
        (:meth:`_finish`, the same checks as on the loop). Never raises: a bug there is an
        ``internal_error`` as in :meth:`_run`."""
        try:
            return _Settled(self._finish(loaded, rid, copied, strict, fail_on))
        # The runtime's own last line, in the pack's thread (as _run's on the loop).
        except BaseException as bug:  # noqa: BLE001
            return _Settled(self._broken(loaded, rid, bug))

    def _failed(
        self,
        loaded: LoadedPack,
        rid: str,
        classification: Classification | None,
        exc: BaseException | None,
        origin: str,
        validation: ValidationRecord | None = None,
    ) -> Outcome:
        envelope = self.enforcer.error(loaded, classification, exc, request_id=rid, origin=origin)
        return _outcome(loaded, rid, error=envelope, validation=validation)

    def _mismatch(
        self,
        loaded: LoadedPack,
        rid: str,
        message: str,
        partial: Mapping[str, Any] | None = None,
        violations: Sequence[FieldViolation] = (),
        exc: BaseException | None = None,
    ) -> Outcome:
        """The pack's output broke its schema: ``schema_mismatch`` (or its nearest code)."""
        cls = Classification(
            code="schema_mismatch",
            message=message,
            partial_result=partial if partial is not None else {},
            violations=tuple(violations),
            rule="output",
        )
        return self._failed(loaded, rid, cls, exc, f"pack:{loaded.name}")

    def _finish(
        self, loaded: LoadedPack, rid: str, copied: Returned, strict: bool, fail_on: FailOn
    ) -> Outcome:
        """Check what the handler returned (already plain data, see :func:`copy_returned`);
        findings travel as data unless ``strict``."""
        if copied.kind is not None:
            return self._mismatch(loaded, rid, f"pack returned {copied.kind}")
        output = copied.output
        if copied.checks is not None:  # a Result
            if copied.checks and not loaded.validates:
                summary = "pack returned validation checks but does not declare validation"
                envelope = self.enforcer.contract_violation(loaded, None, rid, summary)
                return _outcome(loaded, rid, error=envelope)
            if loaded.validates:
                if not copied.all_checks:
                    return self._mismatch(loaded, rid, "pack returned checks that are not Check")
                output["validation"] = {
                    "status": worst_of(copied.checks),
                    "checks": copied.checks,
                }
        if isinstance(output.get("error"), dict):
            error = output["error"]
            code = error.get("code")
            partial = error.get("partial_result")
            cls = Classification(
                code=code if isinstance(code, str) else f"<non-string code {code!r}>",
                message=str(error.get("message", code)),
                retry_after=_number(error.get("retry_after")),
                partial_result=partial if isinstance(partial, dict) else None,
                rule="returned_error",
                typed=True,
            )
            return self._failed(loaded, rid, cls, None, f"pack:{loaded.name}")
        if copied.problem is not None:
            reason = scrub(copied.problem)
            return self._mismatch(
                loaded, rid, f"pack output is not JSON data: {reason}", exc=copied.exc
            )
        check = loaded.output_validator
        if not check.cheap:
            costly = check.check_fault(output)
            if costly is not None:
                return self._mismatch(loaded, rid, f"pack output cannot be checked: {costly}")
        if not check.is_valid(output):
            partial, violations = check.partial(output)
            message = "pack output did not match its output schema"
            return self._mismatch(loaded, rid, message, partial, violations)

        validation: ValidationRecord | None = None
        raw_validation = output.pop("validation", None) if loaded.validates else None
        if raw_validation is not None:
            if not _VALIDATION.is_valid(raw_validation):
                message = "pack returned a malformed validation field"
                violations = _VALIDATION.violations(raw_validation)
                return self._mismatch(loaded, rid, message, output, violations)
            # Straight from the checked data to scrubbed records (no intermediate Check).
            records = check_records(raw_validation.get("checks", ()))
            validation = ValidationRecord.build(
                status=worst_of(raw_validation.get("checks", ())), checks=records
            )
            if strict:
                failed = failing(records, fail_on)
                if failed:
                    # The envelope lists the validation's own (scrubbed) records.
                    envelope = self.enforcer.artifact_failed(loaded, failed, fail_on)
                    return _outcome(loaded, rid, error=envelope, validation=validation)
        if loaded.pack.scrub_output:  # the pack opted in: its result is scrubbed too
            output = scrub_data(output)
        return _outcome(loaded, rid, result=output, validation=validation)


def _outcome(
    loaded: LoadedPack,
    rid: str,
    *,
    result: dict[str, Any] | None = None,
    validation: ValidationRecord | None = None,
    error: ErrorEnvelope | None = None,
) -> Outcome:
    return Outcome.build(
        loaded.name, loaded.version, rid, result=result, validation=validation, error=error
    )


@types.coroutine
def _resume(coro: Any, pending: Any, own: _OwnCancels | None = None) -> Generator[Any, Any, Any]:
    """Await ``coro`` whose first step already ran and yielded ``pending``: what
    ``yield from`` would do from there (values and exceptions, cancellation included, are
    passed through to it) -- except that the asyncio futures the pack awaits are relayed
    (:func:`_relay`): the task never throws a future's exception into the call's chain of
    coroutines, the pack's own ``await`` raises it inside the pack."""
    while True:
        waiter = _relay(pending)
        try:
            if waiter is None:
                value = yield pending
            else:  # the task waits on the relay through the public ``await`` protocol
                yield from waiter.__await__()  # done, never failed: nothing to read
                value = None
        except GeneratorExit:
            close = getattr(coro, "close", None)
            if close is not None:
                close()
            raise
        except BaseException as exc:  # noqa: BLE001 - handed to the coroutine, as yield from does
            if waiter is not None and isinstance(exc, asyncio.CancelledError):
                pending.cancel(*exc.args[:1])  # as the task would have cancelled it
            try:
                pending = coro.throw(exc) if own is None else own.step(coro.throw, exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                pending = coro.send(value) if own is None else own.step(coro.send, value)
            except StopIteration as done:
                return done.value


class _OwnCancels:
    """Tells a pack's cancellation of its own task from the caller's.

    An in-process async pack runs in the call's own task, so ``current_task().cancel()`` in
    the pack cancels the caller's task -- and a task cannot tell who cancelled it. But the
    loop runs one thing at a time: a cancellation requested *during* one of the pack's steps
    (:meth:`step`) is the pack's own; the caller's (the client went away, the server is
    stopping) arrives while the pack is suspended. The pack's own count as its failure, and
    :meth:`settle` takes them back off the caller's task so that nothing of them is left to
    cancel the rest of the call.
    """

    __slots__ = ("count", "task")

    def __init__(self) -> None:
        self.task = asyncio.current_task()
        self.count = 0

    def step(self, advance: Callable[[Any], Any], value: Any) -> Any:
        """One step of the pack's coroutine (``send`` or ``throw`` of ``value``)."""
        task = self.task
        if task is None:
            return advance(value)
        before = task.cancelling()
        try:
            return advance(value)
        finally:
            added = task.cancelling() - before
            if added > 0:
                self.count += added

    async def settle(self) -> None:
        """Undo the pack's own cancellations of the task (the caller's are not touched)."""
        task = self.task
        if task is None:
            return
        for _ in range(min(self.count, task.cancelling())):
            task.uncancel()
        self.count = 0
        if task.cancelling() == 0:
            # A cancellation the pack requested in its last step and never received is
            # still pending on the task: it would cancel the task's next await. Take it
            # here, where it is known to be the pack's: one step of the loop delivers it
            # (or nothing, when the pack already took it). A cancellation that arrives
            # meanwhile is the caller's (counted by ``cancelling()``) and passes; with the
            # caller's cancellation already pending, it is left to cancel the call.
            try:
                await asyncio.sleep(0)
            except asyncio.CancelledError:
                if task.cancelling():
                    raise


def _relay(pending: Any) -> asyncio.Future[None] | None:
    """For an asyncio future a pack's coroutine yielded to wait on: a future of the
    invoker's for the task to wait on instead, done (never failed) once ``pending`` is done;
    ``None`` for anything else, which is yielded as it is.

    Resuming a coroutine after its future failed, the task *throws* the future's exception
    into the call's whole chain of coroutines; a thrown ``GeneratorExit`` closes every
    coroutine of the chain instead of failing the pack (gRPC's frames included: the call
    never got an answer). Relayed, the task resumes the chain by sending ``None``, and the
    pack's ``await`` (``Future.__await__``) reads the future's outcome and raises it inside
    the pack, where the boundary classifies it like any other exception.
    """
    if not asyncio.isfuture(pending):
        return None  # a bare yield (``sleep(0)``) or a bad yield: the task's own rules
    try:
        loop = pending.get_loop()
    except (AttributeError, RuntimeError):
        return None
    if loop is not asyncio.get_running_loop():
        return None  # the task reports a future of another loop, as it always did
    waiter: asyncio.Future[None] = loop.create_future()
    pending.add_done_callback(functools.partial(_wake, waiter))
    return waiter


def _wake(waiter: asyncio.Future[None], _: object) -> None:
    if not waiter.done():
        waiter.set_result(None)


async def _await_relayed(awaitable: Any) -> Any:
    """``await awaitable`` with its futures relayed (:func:`_resume`)."""
    steps = awaitable.__await__()
    try:
        pending = steps.send(None)
    except StopIteration as done:
        return done.value
    return await _resume(steps, pending)


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


class _Settled:
    """A sync handler's outcome, already made in its thread (:meth:`Invoker._settle`,
    :meth:`Invoker._finish_guarded`)."""

    __slots__ = ("outcome",)

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome


_Finish = Callable[[Returned], _Settled]


def _call_and_finish(
    handler: Any,
    doc: dict[str, Any],
    ctx: Context,
    settle: Callable[[BaseException], _Settled],
    finish: _Finish,
) -> Any:
    """A sync handler's call and its outcome (in its pool thread): what it returned,
    copied and finished, or its failure settled."""
    try:
        returned = handler(doc, ctx)
        if inspect.isawaitable(returned):  # a sync callable returning a coroutine: on the loop
            return returned
        copied = copy_returned(returned)
    # The pack boundary (a thread): whatever the handler (or its returned object, read by
    # the copy) raises is settled here.
    except BaseException as exc:  # noqa: BLE001
        return settle(exc)
    return finish(copied)


def _caller_cancelled(own: _OwnCancels | None = None) -> bool:
    """True when the running task itself is being cancelled (the caller went away or the
    server is stopping), as opposed to a cancellation a pack raised on its own or requested
    of its task (``own``: counted during the pack's steps)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > (own.count if own is not None else 0)
