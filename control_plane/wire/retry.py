"""Opt-in retries of retryable failures, honouring ``retry_after``.

Retried: a pack's retryable code (:class:`RetryableError`) and a refusal whose reason is
retryable (:class:`TransportError` with ``retryable``: ``overloaded``, ``unavailable`` --
the control plane unreachable, or stopping and refusing a call it did not run). The same
request id goes with every attempt, so a pack can tell a retry from a new call.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from control_plane.wire.call_errors import RetryableError, TransportError

__all__ = ["Retried", "RetryPolicy", "call_with_retry", "call_with_retry_async"]

T = TypeVar("T")
#: What a policy retries (see the module docs).
Retried = RetryableError | TransportError


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Opt-in retries of :class:`RetryableError` and of retryable refusals
    (:class:`TransportError` whose ``retryable`` is true).

    Attempt ``n`` (from 0) waits ``max(min(backoff * multiplier**n, max_backoff),
    retry_after)`` before the next try; ``attempts`` counts every try, the first included.
    """

    attempts: int = 3
    backoff: float = 0.2
    multiplier: float = 2.0
    max_backoff: float = 30.0
    on_retry: Callable[[int, Retried, float], None] | None = field(default=None, compare=False)

    def delay(self, attempt: int, error: Retried) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based)."""
        try:
            grown = self.backoff * self.multiplier**attempt if self.backoff > 0 else 0.0
        except OverflowError:  # a long retry loop: 2.0**1024 is no float
            grown = math.inf
        backoff = min(grown, self.max_backoff)
        # retry_after arrives bounded (``[0, MAX_RETRY_AFTER]``; see ``wire.status``).
        return max(backoff, error.retry_after or 0.0)

    def retries(self, error: Retried, attempt: int) -> bool:
        """Whether failed attempt ``attempt`` (0-based) is followed by another."""
        return attempt + 1 < self.attempts and (
            isinstance(error, RetryableError) or error.retryable
        )


def call_with_retry(
    fn: Callable[[], T], policy: RetryPolicy, *, sleep: Callable[[float], None] = time.sleep
) -> T:
    """Call ``fn`` until it succeeds, raises a non-retryable error, or attempts run out."""
    attempt = 0
    while True:
        try:
            return fn()
        except (RetryableError, TransportError) as exc:
            if not policy.retries(exc, attempt):
                raise
            wait = policy.delay(attempt, exc)
            if policy.on_retry is not None:
                policy.on_retry(attempt + 1, exc, wait)
            sleep(wait)
            attempt += 1


async def call_with_retry_async(
    fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """:func:`call_with_retry` for coroutines."""
    attempt = 0
    while True:
        try:
            return await fn()
        except (RetryableError, TransportError) as exc:
            if not policy.retries(exc, attempt):
                raise
            wait = policy.delay(attempt, exc)
            if policy.on_retry is not None:
                policy.on_retry(attempt + 1, exc, wait)
            await sleep(wait)
            attempt += 1
