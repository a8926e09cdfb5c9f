"""Where the bridge's calls go: packs in this process, or a control plane over gRPC."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from control_plane.core.errors import RequestRejected
from control_plane.core.outcome import Outcome
from control_plane.core.registry import LoadFailure
from control_plane.core.rejection import Rejection
from control_plane.runtime.runtime import Runtime
from control_plane.wire.client import AsyncClient, PackCallError, PackDescription

__all__ = ["BridgeBackend", "LocalBridgeBackend", "RemoteBridgeBackend"]

#: Deadline of ``list``/``describe`` against a control plane, in seconds.
QUERY_DEADLINE = 10.0


class BridgeBackend(Protocol):
    """What the MCP bridge needs from a control plane."""

    #: Shown in logs: ``local`` or the gRPC target.
    where: str

    async def catalogue(self) -> tuple[list[PackDescription], list[LoadFailure]]:
        """Every loaded pack's description, and the plugins that failed to load."""
        ...

    async def invoke(
        self,
        name: str,
        doc: Mapping[str, Any],
        *,
        strict: bool,
        fail_on: Literal["fail", "warn"],
        deadline: float | None,
    ) -> Outcome: ...

    def refused(self, rejection: Rejection | RequestRejected) -> None:
        """Tell the control plane's ``request_refused`` hook of a refusal the bridge made
        (or met): the local runtime's invoker reports it once; a remote control plane saw
        what reached it and nothing else."""
        ...

    async def close(self) -> None: ...


class LocalBridgeBackend:
    """Packs in this process (``--local``), on the same runtime as ``packctl serve``."""

    where = "local"

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def catalogue(self) -> tuple[list[PackDescription], list[LoadFailure]]:
        registry = self.runtime.registry
        return [PackDescription.from_loaded(p) for p in registry], list(registry.failures)

    async def invoke(
        self,
        name: str,
        doc: Mapping[str, Any],
        *,
        strict: bool,
        fail_on: Literal["fail", "warn"],
        deadline: float | None,
    ) -> Outcome:
        return await self.runtime.invoker.invoke(
            name, doc, strict=strict, fail_on=fail_on, timeout=deadline
        )

    def refused(self, rejection: Rejection | RequestRejected) -> None:
        self.runtime.invoker.report_refusal(rejection)

    async def close(self) -> None:
        self.runtime.close()


class RemoteBridgeBackend:
    """A control plane at ``target`` (``--target HOST:PORT``), over ``grpc.aio``.

    ``client_kwargs`` go to :class:`~control_plane.wire.client.AsyncClient` (``token``, ``tls``).
    Create it inside the running event loop that will use it.
    """

    def __init__(self, target: str, **client_kwargs: Any) -> None:
        self.where = target
        self.client = AsyncClient(target, **client_kwargs)

    async def catalogue(self) -> tuple[list[PackDescription], list[LoadFailure]]:
        listing = await self.client.list_packs(timeout=QUERY_DEADLINE)
        descriptions = await asyncio.gather(
            *(self.client.describe(name, timeout=QUERY_DEADLINE) for name in listing.names())
        )
        return list(descriptions), list(listing.failures)

    async def invoke(
        self,
        name: str,
        doc: Mapping[str, Any],
        *,
        strict: bool,
        fail_on: Literal["fail", "warn"],
        deadline: float | None,
    ) -> Outcome:
        try:
            return await self.client.invoke(
                name, doc, strict=strict, fail_on=fail_on, timeout=deadline
            )
        except PackCallError as exc:
            return exc.outcome

    def refused(self, rejection: Rejection | RequestRejected) -> None:
        """The control plane at ``where`` saw what reached it; nothing more to tell."""

    async def close(self) -> None:
        await self.client.close()
