""":class:`TemporalPackClient`: run a pack through Temporal, same outcome and typed errors as over
gRPC.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from typing import Any, NoReturn

import orjson
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle

from control_plane._features.grpc.client import error_from_outcome
from control_plane._features.temporal.bridge import recover_outcome, recover_rejection
from control_plane._features.temporal.messages import (
    CODE_SEARCH_ATTRIBUTE,
    DEFAULT_HEARTBEAT_TIMEOUT,
    WORKFLOW_NAME,
    InvokePackRequest,
    PackCall,
    RetrySettings,
)
from control_plane._features.temporal.search import code_attribute_registered
from control_plane._features.temporal.worker import DEFAULT_NAMESPACE, connect
from control_plane._kernel.errors import FieldViolation, InvalidInput
from control_plane._kernel.invoke import parse_input
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.validation import FailOn

__all__ = ["TemporalPackClient", "invoke", "raise_for_failure"]

Payload = bytes | str | Mapping[str, Any]


def _input_json(name: str, payload: Payload) -> str:
    """The input as JSON text; the worker parses it (and refuses it) as the server does."""
    if isinstance(payload, Mapping):
        try:
            return orjson.dumps(dict(payload)).decode()
        except TypeError as exc:
            raise InvalidInput(
                name, [FieldViolation("", f"input is not JSON data: {exc}")]
            ) from None
    if isinstance(payload, bytes):
        try:
            return payload.decode()
        except UnicodeDecodeError:
            parse_input(name, payload)  # raises the control plane's InvalidInput
            raise InvalidInput(name, [FieldViolation("", "input is not UTF-8")]) from None
    return payload


def raise_for_failure(exc: BaseException, *, pack: str = "", request_id: str = "") -> NoReturn:
    """Raise the typed exception for a Temporal failure (the gRPC client's classes)."""
    rejected = recover_rejection(exc)
    if rejected is not None:
        raise rejected from exc
    raise error_from_outcome(recover_outcome(exc, pack=pack, request_id=request_id)) from exc


class TemporalPackClient:
    """Start ``InvokePackWorkflow`` runs on ``task_queue`` and await their outcomes."""

    def __init__(
        self,
        client: Client,
        task_queue: str,
        *,
        retry: RetrySettings | None = None,
        activity_task_queue: str | None = None,
        heartbeat_timeout: float | None = DEFAULT_HEARTBEAT_TIMEOUT,
        start_to_close_timeout: float | None = None,
        code_search_attribute: str | None = CODE_SEARCH_ATTRIBUTE,
    ) -> None:
        self.client = client
        #: The Keyword search attribute the workflow sets to its failure's code, used when
        #: the namespace has it registered (checked once); ``None`` never sets one.
        self.code_search_attribute = code_search_attribute
        self._attribute_checked = code_search_attribute is None
        self.task_queue = task_queue
        self.retry = retry if retry is not None else RetrySettings()
        self.activity_task_queue = activity_task_queue
        self.heartbeat_timeout = heartbeat_timeout
        self.start_to_close_timeout = start_to_close_timeout

    @classmethod
    async def connect(
        cls, target: str, task_queue: str, *, namespace: str = DEFAULT_NAMESPACE, **options: Any
    ) -> TemporalPackClient:
        """Connect to Temporal at ``target``; ``options`` as for the constructor."""
        return cls(await connect(target, namespace), task_queue, **options)

    def request(
        self,
        name: str,
        payload: Payload,
        *,
        strict: bool = False,
        fail_on: FailOn = "fail",
        request_id: str | None = None,
        timeout: float | None = None,
        retry: RetrySettings | None = None,
    ) -> InvokePackRequest:
        """The workflow argument for one call (a request id is fixed here if none)."""
        call = PackCall(
            name=name,
            input_json=_input_json(name, payload),
            strict=strict,
            fail_on=fail_on,
            request_id=request_id or uuid.uuid4().hex,
            timeout=timeout,
        )
        return InvokePackRequest(
            call=call,
            retry=retry if retry is not None else self.retry,
            activity_task_queue=self.activity_task_queue,
            start_to_close_timeout=self.start_to_close_timeout,
            heartbeat_timeout=self.heartbeat_timeout,
        )

    async def start(
        self, request: InvokePackRequest, *, workflow_id: str | None = None
    ) -> WorkflowHandle[Any, dict[str, Any]]:
        """Start the workflow for ``request``; await :meth:`outcome` on the handle."""
        if not self._attribute_checked:
            name = self.code_search_attribute
            if name is not None and not await code_attribute_registered(self.client, name):
                self.code_search_attribute = None
            self._attribute_checked = True
        if request.code_search_attribute is None and self.code_search_attribute is not None:
            request = dataclasses.replace(request, code_search_attribute=self.code_search_attribute)
        call = request.call
        return await self.client.start_workflow(
            WORKFLOW_NAME,
            request,
            id=workflow_id or f"pack-{call.name}-{call.request_id}",
            task_queue=self.task_queue,
            result_type=dict,
        )

    @staticmethod
    async def outcome(
        handle: WorkflowHandle[Any, dict[str, Any]], *, pack: str = "", request_id: str = ""
    ) -> Outcome:
        """The run's :class:`Outcome`, or the typed exception of its failure."""
        try:
            data = await handle.result()
        except WorkflowFailureError as exc:
            raise_for_failure(exc, pack=pack, request_id=request_id)
        return Outcome.from_dict(data)

    async def invoke(
        self,
        name: str,
        payload: Payload,
        *,
        strict: bool = False,
        fail_on: FailOn = "fail",
        request_id: str | None = None,
        timeout: float | None = None,
        retry: RetrySettings | None = None,
        workflow_id: str | None = None,
    ) -> Outcome:
        """Invoke pack ``name`` durably; same result or typed error as over gRPC."""
        request = self.request(
            name,
            payload,
            strict=strict,
            fail_on=fail_on,
            request_id=request_id,
            timeout=timeout,
            retry=retry,
        )
        handle = await self.start(request, workflow_id=workflow_id)
        return await self.outcome(handle, pack=name, request_id=request.call.request_id or "")


async def invoke(
    client: Client, name: str, payload: Payload, *, task_queue: str, **options: Any
) -> Outcome:
    """One call through ``client`` on ``task_queue``; ``options`` as for ``invoke``."""
    return await TemporalPackClient(client, task_queue).invoke(name, payload, **options)
