"""Where an adapter's calls go: the packs of this process or a control plane over gRPC,
behind one interface (as httpx's transports: the adapter's code is the same for both).

The MCP bridge awaits a :class:`Backend`; the CLI's ``list``/``describe``/``call`` and the
gate's worker threads call the same backend through :class:`Blocking`, which runs it on an
event loop thread of its own.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Literal, Protocol, TypeVar

from control_plane._features.grpc.client import (
    AsyncClient,
    PackCallError,
    PackDescription,
    PackListing,
)
from control_plane._kernel.errors import RequestRejected
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.registry import LoadFailure
from control_plane._kernel.rejection import Rejection
from control_plane._runtime.runtime import Runtime

__all__ = ["QUERY_DEADLINE", "Backend", "Blocking", "LocalBackend", "RemoteBackend", "catalogue"]

#: Deadline of ``list``/``describe`` against a control plane, in seconds.
QUERY_DEADLINE = 10.0

FailOn = Literal["fail", "warn"]
Input = Mapping[str, Any] | bytes
_T = TypeVar("_T")


class Backend(Protocol):
    """What an adapter needs from a control plane; failures of ``invoke`` come back as
    outcomes, refusals (an unknown pack, bad input) raise ``RequestRejected``."""

    #: Shown in logs: ``local`` or the gRPC target.
    where: str

    async def list_packs(self) -> PackListing: ...

    async def describe(self, name: str) -> PackDescription: ...

    async def invoke(
        self, name: str, doc: Input, *, strict: bool, fail_on: FailOn, deadline: float | None
    ) -> Outcome: ...

    def refused(self, rejection: Rejection | RequestRejected) -> None:
        """Tell the control plane's ``request_refused`` hook of a refusal the adapter made
        (or met): the local runtime's invoker reports it once; a remote control plane saw
        what reached it and nothing else."""
        ...

    async def close(self) -> None: ...


async def catalogue(backend: Backend) -> tuple[list[PackDescription], list[LoadFailure]]:
    """Every loaded pack's description, and the plugins that failed to load."""
    listing = await backend.list_packs()
    descriptions = await asyncio.gather(*(backend.describe(n) for n in listing.names()))
    return list(descriptions), list(listing.failures)


class LocalBackend:
    """Packs in this process (``--local``), on the same runtime as ``packctl serve``."""

    where = "local"

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def list_packs(self) -> PackListing:
        return PackListing.from_registry(self.runtime.registry)

    async def describe(self, name: str) -> PackDescription:
        return PackDescription.from_loaded(self.runtime.registry.get(name))

    async def invoke(
        self, name: str, doc: Input, *, strict: bool, fail_on: FailOn, deadline: float | None
    ) -> Outcome:
        return await self.runtime.invoker.invoke(
            name, doc, strict=strict, fail_on=fail_on, timeout=deadline
        )

    def refused(self, rejection: Rejection | RequestRejected) -> None:
        self.runtime.invoker.report_refusal(rejection)

    async def close(self) -> None:
        self.runtime.close()


class RemoteBackend:
    """A control plane at ``target`` (``--target HOST:PORT``), over ``grpc.aio``.

    ``client_kwargs`` go to :class:`~control_plane._features.grpc.client.AsyncClient` (``token``,
    ``tls``). Create it inside the running event loop that will use it.
    """

    def __init__(self, target: str, **client_kwargs: Any) -> None:
        self.where = target
        self.client = AsyncClient(target, **client_kwargs)

    async def list_packs(self) -> PackListing:
        return await self.client.list_packs(timeout=QUERY_DEADLINE)

    async def describe(self, name: str) -> PackDescription:
        return await self.client.describe(name, timeout=QUERY_DEADLINE)

    async def invoke(
        self, name: str, doc: Input, *, strict: bool, fail_on: FailOn, deadline: float | None
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


class Blocking:
    """A :class:`Backend` for synchronous callers (the CLI, the gate's threads): each call
    runs on one event loop thread of its own and its result (or exception) comes back.
    ``make`` builds the backend on that loop (a gRPC channel belongs to its loop)."""

    def __init__(self, make: Callable[[], Backend]) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="backend", daemon=True)
        self._thread.start()

        async def made() -> Backend:
            return make()

        try:
            self.backend = self._run(made())
        except BaseException:
            self._stop()
            raise
        self.where = self.backend.where

    def _run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def _stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def list_packs(self) -> PackListing:
        return self._run(self.backend.list_packs())

    def describe(self, name: str) -> PackDescription:
        return self._run(self.backend.describe(name))

    def invoke(
        self, name: str, doc: Input, *, strict: bool, fail_on: FailOn, deadline: float | None
    ) -> Outcome:
        return self._run(
            self.backend.invoke(name, doc, strict=strict, fail_on=fail_on, deadline=deadline)
        )

    def close(self) -> None:
        try:
            self._run(self.backend.close())
        finally:
            self._stop()
