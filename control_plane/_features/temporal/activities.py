"""The pack invocation activity: the full :class:`~control_plane._kernel.invoke.Invoker` pipeline,
heartbeating.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from datetime import timedelta
from typing import Any, TypeVar

import orjson
from temporalio import activity
from temporalio.converter import value_to_type

from control_plane._features.temporal.bridge import (
    MAX_PAYLOAD_BYTES,
    backoff_delay,
    outcome_to_application_error,
    rejection_to_application_error,
)
from control_plane._features.temporal.messages import ACTIVITY_NAME, InvokePackRequest, PackCall
from control_plane._kernel.errors import FieldViolation, InvalidInput, RequestRejected
from control_plane._kernel.rejection import Rejection
from control_plane._kernel.validation import FailOn
from control_plane._runtime.runtime import Runtime

__all__ = [
    "MAX_RESULT_BYTES",
    "MAX_SECONDS",
    "PackActivities",
    "check_call",
    "check_request",
    "decode_message",
]

_FAIL_ON: dict[str, FailOn] = {"fail": "fail", "warn": "warn"}

#: Largest success (``Outcome.to_dict()`` as JSON) an activity returns: Temporal's default
#: payload limit (2 MiB) less room for the payload's metadata. Larger is ``result_too_large``
#: (a failure's details over it are cut to fit: ``bridge.fit_failure``).
MAX_RESULT_BYTES = MAX_PAYLOAD_BYTES

#: Longest duration (timeout, interval) a request may ask for: ten years, in seconds. Past
#: it (or not finite) Temporal's durations overflow and the workflow task fails forever.
MAX_SECONDS = 10 * 365 * 86400.0

_M = TypeVar("_M")


def decode_message(cls: type[_M], value: object, pack: str = "") -> _M:
    """``value`` (what the payload converter decoded without a type) as ``cls``.

    A value that does not fit is ``InvalidInput`` at ``/``: the SDK's own decoding error
    would fail a workflow task forever, or an activity attempt retryably, forever under
    Temporal's default policy.
    """
    if isinstance(value, cls):
        return value
    try:
        decoded: _M = value_to_type(cls, value, [])
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        why = str(exc.__cause__ or exc)
        raise InvalidInput(
            pack, [FieldViolation("/", f"not a {cls.__name__} ({type(exc).__name__}): {why}")]
        ) from None
    return decoded


def _duration_fault(
    field: str, value: float | None, *, zero: bool = False
) -> FieldViolation | None:
    """A violation unless ``value`` is None or a finite number of seconds in range."""
    if value is None:
        return None
    low_ok = value >= 0 if zero else value > 0
    if isinstance(value, bool) or not (math.isfinite(value) and low_ok and value <= MAX_SECONDS):
        low = ">= 0" if zero else "> 0"
        return FieldViolation(field, f"must be a number of seconds {low} and <= {MAX_SECONDS:g}")
    return None


def check_call(call: PackCall) -> FailOn:
    """Refuse a malformed call as the control plane would (``InvalidInput``)."""
    fail_on = _FAIL_ON.get(call.fail_on)
    if fail_on is None:
        raise InvalidInput(
            call.name,
            [FieldViolation("/fail_on", f"must be 'fail' or 'warn', got {call.fail_on!r}")],
        )
    fault = _duration_fault("/timeout", call.timeout)
    if fault is not None:
        raise InvalidInput(call.name, [fault])
    return fail_on


def check_request(request: InvokePackRequest) -> None:
    """Refuse a request whose settings Temporal could not take (``InvalidInput``).

    The call's faults are reported as :func:`check_call` does (``/timeout``); the
    request's at their place in it (``/start_to_close_timeout``, ``/retry/...``).
    """
    check_call(request.call)
    retry = request.retry
    faults = [
        _duration_fault("/start_to_close_timeout", request.start_to_close_timeout),
        _duration_fault("/heartbeat_timeout", request.heartbeat_timeout, zero=True),
        _duration_fault("/retry/initial_interval", retry.initial_interval),
        _duration_fault("/retry/maximum_interval", retry.maximum_interval),
    ]
    if isinstance(retry.maximum_attempts, bool) or not retry.maximum_attempts >= 0:
        faults.append(FieldViolation("/retry/maximum_attempts", "must be >= 0 (0: unlimited)"))
    coefficient = retry.backoff_coefficient
    if not (math.isfinite(coefficient) and 1 <= coefficient <= 1000):
        faults.append(FieldViolation("/retry/backoff_coefficient", "must be between 1 and 1000"))
    if not faults[2] and not faults[3] and retry.maximum_interval < retry.initial_interval:
        faults.append(FieldViolation("/retry/maximum_interval", "must be >= initial_interval"))
    found = [f for f in faults if f is not None]
    if found:
        raise InvalidInput(request.call.name, found)


class PackActivities:
    """Activities over one :class:`Runtime` (register ``[acts.invoke]`` on a worker).

    With the runtime's observability attached (``runtime.observe``), a request refused
    before any pack ran is counted and emitted as a ``request_rejected`` event, as
    ``packctl serve`` does.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    @activity.defn(name=ACTIVITY_NAME)
    async def invoke(self, call: Any) -> dict[str, Any]:
        """Invoke ``call.name`` under full enforcement; raise the bridged error on failure.

        ``call`` is a :class:`PackCall` (decoded here: anything else is ``InvalidInput``).
        """
        info = activity.info()
        beat = _heartbeat_interval(info.heartbeat_timeout)
        beating = asyncio.create_task(_heartbeat(beat)) if beat is not None else None
        request_id: str | None = None
        try:
            call = decode_message(PackCall, call)
            request_id = call.request_id
            fail_on = check_call(call)
            outcome = await self.runtime.invoker.invoke(
                call.name,
                call.input_json,
                strict=call.strict,
                fail_on=fail_on,
                request_id=call.request_id,
                timeout=call.timeout,
            )
        except RequestRejected as exc:
            obs = self.runtime.observability
            if obs is not None:
                obs.emit_rejection(exc, request_id=request_id)
            raise rejection_to_application_error(exc) from None
        finally:
            if beating is not None:
                beating.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await beating
        if outcome.error is not None:
            backoff = backoff_delay(info.retry_policy, info.attempt)
            raise outcome_to_application_error(outcome, backoff=backoff)
        data = outcome.to_dict()
        size = len(orjson.dumps(data))
        if size > MAX_RESULT_BYTES:
            # Temporal refuses the completion: the attempt would just be lost, untyped.
            message = (
                f"the result of {outcome.pack} is {size} bytes, over the {MAX_RESULT_BYTES} "
                "bytes a Temporal payload may carry"
            )
            rejection = Rejection.of(
                "result_too_large", message, pack=outcome.pack, request_id=outcome.request_id
            )
            raise rejection_to_application_error(RequestRejected.of(rejection))
        return data


def _heartbeat_interval(timeout: timedelta | None) -> float | None:
    if timeout is None:
        return None
    seconds = timeout.total_seconds()
    return max(seconds / 3, 0.05) if seconds > 0 else None


async def _heartbeat(interval: float) -> None:
    """Report liveness until cancelled (the SDK throttles what reaches the server)."""
    while True:
        activity.heartbeat()
        await asyncio.sleep(interval)
