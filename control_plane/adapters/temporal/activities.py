"""The pack invocation activity: :class:`~control_plane.core.invoke.Invoker` behind Temporal.

Every attempt runs the control plane's whole pipeline (input check, handler under the
call's deadline, classification, output check, strict mode, redaction), so a pack behaves
on a worker exactly as behind ``packctl serve``. A success returns ``Outcome.to_dict()``;
a failure raises the bridge's ``ApplicationError`` (see :mod:`.bridge`). While the handler
runs, the activity heartbeats so a worker that dies mid-call is noticed after the
heartbeat timeout and the attempt is retried on another worker.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta
from typing import Any

from temporalio import activity

from control_plane.adapters.temporal.bridge import (
    backoff_delay,
    outcome_to_application_error,
    rejection_to_application_error,
)
from control_plane.adapters.temporal.messages import ACTIVITY_NAME, PackCall
from control_plane.core.errors import FieldViolation, InvalidInput, RequestRejected
from control_plane.core.validation import FailOn
from control_plane.runtime.runtime import Runtime

__all__ = ["PackActivities", "check_call"]

_FAIL_ON: dict[str, FailOn] = {"fail": "fail", "warn": "warn"}


def check_call(call: PackCall) -> FailOn:
    """Refuse a malformed call as the control plane would (``InvalidInput``)."""
    fail_on = _FAIL_ON.get(call.fail_on)
    if fail_on is None:
        raise InvalidInput(
            call.name,
            [FieldViolation("/fail_on", f"must be 'fail' or 'warn', got {call.fail_on!r}")],
        )
    if call.timeout is not None and not call.timeout > 0:
        raise InvalidInput(
            call.name, [FieldViolation("/timeout", f"must be > 0 seconds, got {call.timeout!r}")]
        )
    return fail_on


class PackActivities:
    """Activities over one :class:`Runtime` (register ``[acts.invoke]`` on a worker).

    With the runtime's observability attached (``runtime.observe``), a request refused
    before any pack ran is counted and emitted as a ``request_rejected`` event, as
    ``packctl serve`` does.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    @activity.defn(name=ACTIVITY_NAME)
    async def invoke(self, call: PackCall) -> dict[str, Any]:
        """Invoke ``call.name`` under full enforcement; raise the bridged error on failure."""
        info = activity.info()
        beat = _heartbeat_interval(info.heartbeat_timeout)
        beating = asyncio.create_task(_heartbeat(beat)) if beat is not None else None
        try:
            fail_on = check_call(call)
            outcome = await self.runtime.invoke(
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
                obs.emit_rejection(exc, request_id=call.request_id)
            raise rejection_to_application_error(exc) from None
        finally:
            if beating is not None:
                beating.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await beating
        if outcome.error is not None:
            backoff = backoff_delay(info.retry_policy, info.attempt)
            raise outcome_to_application_error(outcome, backoff=backoff)
        return outcome.to_dict()


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
