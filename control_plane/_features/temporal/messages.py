"""The plain, JSON-friendly dataclasses that cross the Temporal boundary (standard library only)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "ACTIVITY_NAME",
    "CODE_SEARCH_ATTRIBUTE",
    "DEFAULT_HEARTBEAT_TIMEOUT",
    "DEFAULT_START_TO_CLOSE",
    "WORKFLOW_NAME",
    "InvokePackRequest",
    "PackCall",
    "RetrySettings",
]

#: Registered name of the pack invocation activity.
ACTIVITY_NAME = "capability_packs.invoke"
#: Registered name of :class:`~control_plane._features.temporal.workflows.InvokePackWorkflow`.
WORKFLOW_NAME = "InvokePackWorkflow"
#: Keyword search attribute set to the code a failed ``InvokePackWorkflow`` ended with.
CODE_SEARCH_ATTRIBUTE = "CapabilityPacksCode"
#: Seconds without a heartbeat after which an attempt counts as lost (worker died).
DEFAULT_HEARTBEAT_TIMEOUT = 30.0
#: Seconds one attempt may run when the call carries no deadline (packctl serve's default
#: call deadline plus a margin for the worker to report).
DEFAULT_START_TO_CLOSE = 310.0


@dataclass
class PackCall:
    """One pack invocation, as ``Invoker.invoke`` takes it.

    ``input_json`` is the input document as JSON text: the worker parses it, so a
    malformed document is refused exactly as the control plane refuses it. ``request_id``
    is fixed by the caller and shared by every attempt (an idempotency key for packs).
    ``timeout`` is the per-attempt deadline of the pack, in seconds.
    """

    name: str
    input_json: str = "{}"
    strict: bool = False
    fail_on: str = "fail"
    request_id: str | None = None
    timeout: float | None = None


@dataclass
class RetrySettings:
    """The activity retry policy, in seconds; ``maximum_attempts=0`` means unlimited.

    Only retryable codes are ever retried: permanent codes are non-retryable
    ``ApplicationError`` s and also listed in ``non_retryable_error_types``. A
    ``rate_limited`` attempt waits ``max(backoff, retry_after)``.
    """

    maximum_attempts: int = 5
    initial_interval: float = 1.0
    backoff_coefficient: float = 2.0
    maximum_interval: float = 60.0


@dataclass
class InvokePackRequest:
    """The argument of ``InvokePackWorkflow``.

    ``activity_task_queue`` routes the pack activity to another queue than the workflow's
    (e.g. workers on machines with ffprobe); ``None`` uses the workflow's queue.
    ``start_to_close_timeout`` bounds one attempt (default: the call's ``timeout`` plus a
    margin, else :data:`DEFAULT_START_TO_CLOSE`); ``heartbeat_timeout`` is how fast a dead
    worker is noticed. ``code_search_attribute`` names the Keyword search attribute the
    workflow sets to its failure's code (``None``: none; it must be registered in the
    namespace, see :mod:`control_plane._features.temporal.search`).
    """

    call: PackCall
    retry: RetrySettings = field(default_factory=RetrySettings)
    activity_task_queue: str | None = None
    start_to_close_timeout: float | None = None
    heartbeat_timeout: float | None = DEFAULT_HEARTBEAT_TIMEOUT
    code_search_attribute: str | None = None
