"""``InvokePackWorkflow`` and :class:`FailSafeInterceptor`: our errors fail a workflow, never loop
its task.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeKey
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.worker import (
    ExecuteWorkflowInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

with workflow.unsafe.imports_passed_through():
    from control_plane._features.temporal.activities import check_request, decode_message
    from control_plane._features.temporal.bridge import (
        OUTCOME_KEY,
        REJECTION_KEY,
        domain_error_to_application_error,
        failure_code,
        retry_policy,
    )
    from control_plane._features.temporal.messages import (
        ACTIVITY_NAME,
        DEFAULT_START_TO_CLOSE,
        WORKFLOW_NAME,
        InvokePackRequest,
    )
    from control_plane._kernel.errors import CapabilityPackError

__all__ = ["FailSafeInterceptor", "InvokePackWorkflow", "start_to_close"]

#: Seconds an attempt gets beyond the call's own deadline to report its outcome.
DEADLINE_MARGIN = 10.0


def start_to_close(request: InvokePackRequest) -> float:
    """Seconds one attempt may run (see :class:`InvokePackRequest`)."""
    if request.start_to_close_timeout is not None:
        return request.start_to_close_timeout
    if request.call.timeout is not None:
        return request.call.timeout + DEADLINE_MARGIN
    return DEFAULT_START_TO_CLOSE


@workflow.defn(name=WORKFLOW_NAME, failure_exception_types=[CapabilityPackError])
class InvokePackWorkflow:
    """Run one pack call durably; the result is ``Outcome.to_dict()``."""

    @workflow.run
    async def run(self, request: Any) -> dict[str, Any]:
        """``request`` is an :class:`InvokePackRequest`; one that does not decode, or whose
        settings Temporal could not take, fails the workflow as ``InvalidInput``."""
        try:
            request = decode_message(InvokePackRequest, request)
        except CapabilityPackError as exc:
            raise domain_error_to_application_error(exc) from None
        return await self._run(request)

    async def _run(self, request: InvokePackRequest) -> dict[str, Any]:
        call = request.call
        try:
            check_request(request)
            heartbeat = request.heartbeat_timeout
            result: dict[str, Any] = await workflow.execute_activity(
                ACTIVITY_NAME,
                call,
                result_type=dict,
                task_queue=request.activity_task_queue,
                start_to_close_timeout=timedelta(seconds=start_to_close(request)),
                heartbeat_timeout=timedelta(seconds=heartbeat) if heartbeat else None,
                retry_policy=retry_policy(request.retry),
            )
            return result
        except CapabilityPackError as exc:
            failure = domain_error_to_application_error(
                exc, pack=call.name, request_id=call.request_id or ""
            )
            _tag(request, failure)
            raise failure from None
        except ActivityError as err:
            final = _workflow_failure(err)
            if final is None:
                raise  # a lost attempt (timeout...): the caller synthesizes internal_error
            _tag(request, final)
            raise final from err


def _tag(request: InvokePackRequest, failure: ApplicationError) -> None:
    """Set the code search attribute (when the request names one) before failing."""
    name = request.code_search_attribute
    code = failure_code(failure)
    if name and code:
        workflow.upsert_search_attributes([SearchAttributeKey.for_keyword(name).value_set(code)])


def _workflow_failure(err: ActivityError) -> ApplicationError | None:
    """The workflow's failure with the code as its type (visible in the UI), if typed.

    Message, type (the code), details, ``non_retryable`` and category are the activity's:
    a retryable code stays retryable (see ``bridge.outcome_to_application_error``).
    """
    cause = err.cause
    if isinstance(cause, ApplicationError) and any(
        isinstance(d, dict) and (OUTCOME_KEY in d or REJECTION_KEY in d) for d in cause.details
    ):
        return ApplicationError(
            cause.message,
            *cause.details,
            type=cause.type,
            non_retryable=cause.non_retryable,
            category=cause.category,
        )
    return None


class FailSafeInterceptor(Interceptor):
    """Fail a workflow whose code raised a domain error, with that error's envelope."""

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor] | None:
        return _FailSafeInbound


class _FailSafeInbound(WorkflowInboundInterceptor):
    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        try:
            return await super().execute_workflow(input)
        except CapabilityPackError as exc:
            raise domain_error_to_application_error(exc) from None
