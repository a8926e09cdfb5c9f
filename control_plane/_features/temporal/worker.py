"""A Temporal worker running pack invocations as activities, with the server's enforcement."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from temporalio.client import Client
from temporalio.worker import Interceptor, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from control_plane._features.temporal.activities import PackActivities
from control_plane._features.temporal.bridge import DATA_CONVERTER, OrderedPayloadConverter
from control_plane._features.temporal.search import ensure_code_attribute
from control_plane._features.temporal.workflows import FailSafeInterceptor, InvokePackWorkflow
from control_plane._kernel.errors import CapabilityPackError
from control_plane._runtime.runtime import Runtime

__all__ = ["DEFAULT_NAMESPACE", "connect", "create_worker", "run_worker", "sandbox_runner"]

DEFAULT_NAMESPACE = "default"


def sandbox_runner() -> SandboxedWorkflowRunner:
    """The workflow sandbox with ``control_plane`` passed through.

    The runtime is imported once, outside the sandbox (the package ``__init__`` loads
    schemas from files, which the sandbox forbids); workflow code only uses its pure,
    deterministic parts (the dataclasses, the bridge, the vocabulary).
    """
    restrictions = SandboxRestrictions.default.with_passthrough_modules("control_plane")
    return SandboxedWorkflowRunner(restrictions=restrictions)


async def connect(target: str, namespace: str = DEFAULT_NAMESPACE) -> Client:
    """A Temporal client for ``target`` (``HOST:PORT``), with :data:`DATA_CONVERTER`."""
    return await Client.connect(target, namespace=namespace, data_converter=DATA_CONVERTER)


def _ordered(client: Client) -> Client:
    """``client``, or a client on its connection with :data:`DATA_CONVERTER`: the worker
    encodes results, and Temporal's default converter sorts their keys."""
    config = client.config()
    if config["data_converter"].payload_converter_class is not OrderedPayloadConverter:
        config["data_converter"] = dataclasses.replace(
            config["data_converter"], payload_converter_class=OrderedPayloadConverter
        )
        return Client(**config)
    return client


def create_worker(
    client: Client,
    task_queue: str,
    *,
    runtime: Runtime,
    workflows: Sequence[type] = (),
    activities: Sequence[Callable[..., Any]] = (),
    interceptors: Sequence[Interceptor] = (),
    **options: Any,
) -> Worker:
    """A worker serving ``InvokePackWorkflow`` and the pack activity on ``task_queue``.

    ``workflows`` / ``activities`` add your own; every workflow on the worker gets the
    fail-safe floor (:class:`FailSafeInterceptor` and ``workflow_failure_exception_types``).
    ``options`` go to :class:`temporalio.worker.Worker` (``max_concurrent_activities``...);
    the workflow runner defaults to :func:`sandbox_runner`. With ``runtime.observe()``
    attached, refused requests are ``request_rejected`` events, as in ``packctl serve``.
    """
    acts = PackActivities(runtime)
    options.setdefault("workflow_runner", sandbox_runner())
    return Worker(
        _ordered(client),
        task_queue=task_queue,
        activities=[acts.invoke, *activities],
        workflows=[InvokePackWorkflow, *workflows],
        interceptors=[FailSafeInterceptor(), *interceptors],
        workflow_failure_exception_types=[CapabilityPackError],
        **options,
    )


async def run_worker(
    target: str,
    task_queue: str,
    *,
    runtime: Runtime,
    namespace: str = DEFAULT_NAMESPACE,
    stop: asyncio.Event | None = None,
    ready: Callable[[Worker], None] | None = None,
    max_concurrent_activities: int | None = None,
    grace: float = 10.0,
    register_search_attribute: bool = True,
) -> None:
    """Serve ``runtime``'s packs on ``task_queue`` until ``stop`` is set.

    ``grace`` is how long running activities get to finish on shutdown; those that do not
    are cancelled and retried elsewhere per the retry policy. The caller owns ``runtime``.
    ``register_search_attribute``: register the code search attribute in the namespace
    when missing and permitted (:mod:`~control_plane._features.temporal.search`).
    """
    client = await connect(target, namespace)
    if register_search_attribute:
        await ensure_code_attribute(client)
    stop = stop if stop is not None else asyncio.Event()
    worker = create_worker(
        client,
        task_queue,
        runtime=runtime,
        max_concurrent_activities=max_concurrent_activities,
        graceful_shutdown_timeout=timedelta(seconds=grace),
    )
    async with worker:
        if ready is not None:
            ready(worker)
        await stop.wait()
