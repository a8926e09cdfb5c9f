"""The invoke pipeline, one direction:

request -> input check -> handler under a deadline -> classification -> output check ->
enforcement -> redaction -> :class:`~control_plane.outcome.Outcome`.

Requests the control plane refuses before a handler runs (unknown pack, invalid input)
raise :class:`~control_plane.errors.RequestRejected`; every other failure becomes an
outcome whose code is inside the pack's effective vocabulary.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson

from control_plane.classify import Classification, Classifier, classify
from control_plane.enforce import Enforcer
from control_plane.errors import FieldViolation, InvalidInput
from control_plane.outcome import CheckRecord, ErrorEnvelope, Outcome, ValidationRecord
from control_plane.pack import Check, Context, Result
from control_plane.redact import Incidents, scrub
from control_plane.registry import LoadedPack, Registry, validation_field_schema
from control_plane.schema import CompiledSchema
from control_plane.validation import FailOn, checks_from_data, failing_checks, worst

__all__ = ["Invoker"]

_VALIDATION = CompiledSchema(validation_field_schema())
OutcomeListener = Callable[[LoadedPack, Outcome, float], None]


def parse_input(pack: str, payload: bytes | str | Mapping[str, Any]) -> dict[str, Any]:
    """The input document as a dict, or :class:`InvalidInput` saying why not."""
    if isinstance(payload, Mapping):
        return dict(payload)
    try:
        doc = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(pack, [FieldViolation("", f"input is not valid JSON: {exc}")]) from None
    if not isinstance(doc, dict):
        kind = type(doc).__name__.replace("NoneType", "null")
        raise InvalidInput(pack, [FieldViolation("", f"input must be a JSON object, got {kind}")])
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
    ) -> None:
        self.registry = registry
        self.classifiers = tuple(classifiers)
        self.incidents = incidents if incidents is not None else Incidents()
        self.enforcer = Enforcer(self.incidents)
        self.default_timeout = default_timeout
        self._executor = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="pack")
        self.listeners: list[OutcomeListener] = []

    @property
    def contract_violations(self) -> Mapping[str, int]:
        return self.enforcer.contract_violations

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

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
    ) -> Outcome:
        """Invoke pack ``name`` with ``payload`` (JSON bytes/str or a dict)."""
        started = time.perf_counter()
        loaded = self.registry.get(name)
        doc = parse_input(name, payload)
        if not loaded.input_validator.is_valid(doc):
            raise InvalidInput(name, loaded.input_validator.violations(doc))
        rid = request_id or uuid.uuid4().hex
        budget = timeout if timeout is not None else self.default_timeout
        ctx = Context(name, rid, None if budget is None else time.monotonic() + budget)
        outcome = await self._run(loaded, doc, ctx, budget, strict, fail_on)
        elapsed = time.perf_counter() - started
        for listener in self.listeners:
            listener(loaded, outcome, elapsed)
        return outcome

    def invoke_sync(
        self, name: str, payload: bytes | str | Mapping[str, Any], **kwargs: Any
    ) -> Outcome:
        """:meth:`invoke` from synchronous code (CLI ``--local``, tests)."""
        return asyncio.run(self.invoke(name, payload, **kwargs))

    async def _call_handler(self, loaded: LoadedPack, doc: dict[str, Any], ctx: Context) -> Any:
        handler = loaded.pack.handler
        if loaded.pack.is_async:
            return await handler(doc, ctx)  # type: ignore[misc]
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, handler, doc, ctx)

    async def _run(
        self,
        loaded: LoadedPack,
        doc: dict[str, Any],
        ctx: Context,
        budget: float | None,
        strict: bool,
        fail_on: FailOn,
    ) -> Outcome:
        origin = f"pack:{loaded.name}"
        try:
            async with asyncio.timeout(budget) as scope:
                returned = await self._call_handler(loaded, doc, ctx)
        except TimeoutError as exc:
            if scope.expired():
                ctx.cancel()
                cls = Classification(
                    code="timeout",
                    message=f"the call's deadline of {budget:g}s passed before the pack finished",
                    rule="deadline",
                )
                return self._failed(loaded, ctx, cls, exc, "control_plane")
            return self._failed(loaded, ctx, classify(exc, self.classifiers), exc, origin)
        # The pack boundary: a handler may raise anything, and every failure is classified.
        except (Exception, SystemExit) as exc:  # noqa: BLE001
            return self._failed(loaded, ctx, classify(exc, self.classifiers), exc, origin)
        return self._finish(loaded, ctx, returned, strict, fail_on)

    def _failed(
        self,
        loaded: LoadedPack,
        ctx: Context,
        classification: Classification | None,
        exc: BaseException | None,
        origin: str,
        validation: ValidationRecord | None = None,
    ) -> Outcome:
        envelope = self.enforcer.error(
            loaded, classification, exc, request_id=ctx.request_id, origin=origin
        )
        return self._outcome(loaded, ctx, error=envelope, validation=validation)

    def _finish(
        self, loaded: LoadedPack, ctx: Context, returned: Any, strict: bool, fail_on: FailOn
    ) -> Outcome:
        checks: list[Check] | None = None
        if isinstance(returned, Result):
            output: Any = dict(returned.output)
            if returned.checks or loaded.validates:
                checks = list(returned.checks)
                output["validation"] = {
                    "status": worst(checks),
                    "checks": [c.to_dict() for c in checks],
                }
        else:
            output = returned
        origin = f"pack:{loaded.name}"
        if isinstance(output, Mapping) and isinstance(output.get("error"), Mapping):
            error = output["error"]
            code = error.get("code")
            partial = error.get("partial_result")
            cls = Classification(
                code=code if isinstance(code, str) else f"<non-string code {code!r}>",
                message=str(error.get("message", code)),
                retry_after=_number(error.get("retry_after")),
                partial_result=partial if isinstance(partial, Mapping) else None,
                rule="returned_error",
                typed=True,
            )
            return self._failed(loaded, ctx, cls, None, origin)
        if not isinstance(output, Mapping):
            cls = Classification(
                code="schema_mismatch",
                message=f"pack returned {type(output).__name__}, not a JSON object",
                partial_result={},
                rule="output",
            )
            return self._failed(loaded, ctx, cls, None, origin)
        output = dict(output)
        try:
            valid = loaded.output_validator.is_valid(output)
        except (ValueError, TypeError, OverflowError) as exc:
            cls = Classification(
                code="schema_mismatch",
                message=f"pack output is not JSON data: {type(exc).__name__}",
                partial_result={},
                rule="output",
            )
            return self._failed(loaded, ctx, cls, exc, origin)
        if not valid:
            partial, violations = loaded.output_validator.partial(output)
            cls = Classification(
                code="schema_mismatch",
                message="pack output did not match its output schema",
                partial_result=partial,
                violations=tuple(violations),
                rule="output",
            )
            return self._failed(loaded, ctx, cls, None, origin)

        validation: ValidationRecord | None = None
        raw_validation = output.pop("validation", None)
        if raw_validation is not None:
            if checks is None:
                if not _VALIDATION.is_valid(raw_validation):
                    cls = Classification(
                        code="schema_mismatch",
                        message="pack returned a malformed validation field",
                        partial_result=output,
                        violations=tuple(_VALIDATION.violations(raw_validation)),
                        rule="output",
                    )
                    return self._failed(loaded, ctx, cls, None, origin)
                checks = checks_from_data(raw_validation)
            validation = ValidationRecord.model_construct(
                status=worst(checks),
                checks=[
                    CheckRecord.of(
                        Check(c.id, c.severity, scrub(c.message), c.expected, c.actual, c.location)
                    )
                    for c in checks
                ],
            )
            if strict:
                failing = failing_checks(checks, fail_on)
                if failing:
                    envelope = self.enforcer.artifact_failed(loaded, failing, fail_on)
                    return self._outcome(loaded, ctx, error=envelope, validation=validation)
        return self._outcome(loaded, ctx, result=output, validation=validation)

    @staticmethod
    def _outcome(
        loaded: LoadedPack,
        ctx: Context,
        *,
        result: dict[str, Any] | None = None,
        validation: ValidationRecord | None = None,
        error: ErrorEnvelope | None = None,
    ) -> Outcome:
        return Outcome.model_construct(
            pack=loaded.name,
            version=loaded.version,
            request_id=ctx.request_id,
            result=result,
            validation=validation,
            error=error,
        )


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None
