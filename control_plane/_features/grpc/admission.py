"""Admission: per-pack and global in-flight limits; a call over one is refused at once, never
queued.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import grpc

from control_plane._features.grpc import status as wire
from control_plane._kernel.limits import MAX_REQUEST_ID, ConfigError, clip, input_too_large
from control_plane._kernel.rejection import Rejection

__all__ = [
    "DEFAULT_RETRY_AFTER",
    "Admission",
    "AdmissionLimits",
    "GuardedServicer",
    "overloaded_status",
    "parse_pack_limit",
]

logger = logging.getLogger("capability_packs.admission")

#: Seconds a refused caller is told to wait (``RetryInfo``).
DEFAULT_RETRY_AFTER = 0.5


@dataclass(frozen=True, slots=True)
class AdmissionLimits:
    """In-flight limits: ``max_in_flight`` over all packs, ``per_pack`` by name, and
    ``default_per_pack`` for packs not named. ``None`` means unlimited."""

    max_in_flight: int | None = None
    per_pack: Mapping[str, int] = field(default_factory=dict)
    default_per_pack: int | None = None
    retry_after: float = DEFAULT_RETRY_AFTER

    @property
    def enabled(self) -> bool:
        return (
            self.max_in_flight is not None
            or bool(self.per_pack)
            or self.default_per_pack is not None
        )


def parse_pack_limit(text: str) -> tuple[str, int]:
    """``NAME=N`` (``packctl serve --pack-limit``) as ``(name, n)``; ``ValueError`` if not."""
    name, sep, number = text.rpartition("=")
    if not sep or not name:
        raise ValueError(f"{text!r} is not NAME=N")
    limit = int(number)
    if limit < 1:
        raise ValueError(f"{text!r}: the limit must be >= 1")
    return name, limit


class Admission:
    """Counts in-flight calls; :meth:`enter` admits or names the limit that refuses.

    Runs on the server's event loop (one thread), so plain integers suffice. Only packs
    in ``names`` get a per-pack counter: a hostile caller cannot grow this table.
    """

    def __init__(
        self,
        limits: AdmissionLimits,
        names: Iterable[str],
        overrunning: Callable[[str], int] | None = None,
    ) -> None:
        unknown = sorted(set(limits.per_pack) - set(names))
        if unknown:
            raise ConfigError(f"per-pack limits name unknown pack(s): {', '.join(unknown)}")
        self.limits = limits
        self.in_flight = 0
        self._pack_limit: dict[str, int] = {}
        for name in names:
            limit = limits.per_pack.get(name, limits.default_per_pack)
            if limit is not None:
                self._pack_limit[name] = limit
        self._pack_in_flight: dict[str, int] = dict.fromkeys(self._pack_limit, 0)
        #: scope ("global" or a pack name) -> calls refused.
        self.refused: dict[str, int] = {}
        #: Calls of a pack that ended (deadline) while their handler's thread still runs:
        #: they count against the pack's limit until the thread returns.
        self._overrunning = overrunning

    def pack_in_flight(self, pack: str) -> int:
        return self._pack_in_flight.get(pack, 0)

    def enter(self, pack: str) -> tuple[str, int] | None:
        """Admit a call to ``pack`` (``None``) or return ``(scope, limit)`` that refused it."""
        cap = self.limits.max_in_flight
        if cap is not None and self.in_flight >= cap:
            return self._refuse("global", cap)
        pack_cap = self._pack_limit.get(pack)
        if pack_cap is not None:
            busy = self._pack_in_flight[pack]
            if self._overrunning is not None:
                busy += self._overrunning(pack)
            if busy >= pack_cap:
                return self._refuse(pack, pack_cap)
            self._pack_in_flight[pack] += 1
        self.in_flight += 1
        return None

    def leave(self, pack: str) -> None:
        """The end of an admitted call (exactly once per admitted :meth:`enter`)."""
        self.in_flight -= 1
        if pack in self._pack_in_flight:
            self._pack_in_flight[pack] -= 1

    def _refuse(self, scope: str, limit: int) -> tuple[str, int]:
        self.refused[scope] = self.refused.get(scope, 0) + 1
        return scope, limit


def overloaded_status(
    pack: str, scope: str, limit: int, retry_after: float, request_id: str = ""
) -> grpc.Status:
    """The ``RESOURCE_EXHAUSTED`` status of a call refused by a limit (the ``overloaded``
    rejection, rendered by :func:`control_plane._features.grpc.status.refusal`)."""
    where = "all packs" if scope == "global" else f"pack {scope}"
    rejection = Rejection.of(
        "overloaded",
        f"overloaded: {limit} call(s) already in flight for {where}; retry after {retry_after:g}s",
        pack=pack,
        request_id=request_id,
        retry_after=retry_after,
        metadata={"scope": scope, "limit": str(limit)},
    )
    return wire.refusal(rejection)


class GuardedServicer:
    """The service with request-size and in-flight checks in front of ``InvokePack``.

    ``inner`` is a :class:`control_plane._features.grpc.server.ControlPlaneServicer`; everything but
    ``InvokePack`` goes to it unchanged.
    """

    def __init__(
        self,
        inner: Any,
        *,
        admission: Admission | None = None,
        max_input_bytes: int | None = None,
    ) -> None:
        self.inner = inner
        self.admission = admission
        self.max_input_bytes = max_input_bytes
        self.ListPacks = inner.ListPacks
        self.DescribePack = inner.DescribePack

    async def InvokePack(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        """Refuse oversized inputs and calls over a limit; run the rest."""
        limit = self.max_input_bytes
        if limit is not None and len(request.input) > limit:
            rejected = input_too_large(request.pack, len(request.input), limit)
            rid = clip(request.request_id, MAX_REQUEST_ID)
            await context.abort_with_status(wire.refusal(rejected, rid))
        admission = self.admission
        if admission is None:
            return await self.inner.InvokePack(request, context)
        pack = request.pack
        refused = admission.enter(pack)
        if refused is not None:
            scope, cap = refused
            logger.info(
                "overloaded: %s limit %d",
                scope,
                cap,
                extra={
                    "event": "overloaded",
                    "pack": clip(pack),
                    "status": "RESOURCE_EXHAUSTED",
                    "reason": scope,
                },
            )
            await context.abort_with_status(
                overloaded_status(
                    clip(pack),
                    scope,
                    cap,
                    admission.limits.retry_after,
                    clip(request.request_id, MAX_REQUEST_ID),
                )
            )
        try:
            return await self.inner.InvokePack(request, context)
        finally:
            admission.leave(pack)


def guard(
    servicer: Any,
    names: Iterable[str],
    limits: AdmissionLimits | None = None,
    max_input_bytes: int | None = None,
) -> Any:
    """``servicer`` itself when nothing is limited, else a :class:`GuardedServicer`."""
    threads = getattr(getattr(servicer, "invoker", None), "threads", None)
    overrunning = threads.overrunning if threads is not None else None
    admission = (
        Admission(limits, names, overrunning) if limits is not None and limits.enabled else None
    )
    if admission is None and max_input_bytes is None:
        return servicer
    return GuardedServicer(servicer, admission=admission, max_input_bytes=max_input_bytes)
