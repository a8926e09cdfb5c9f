"""Opt-in retries of retryable failures, honouring ``retry_after``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from control_plane.wire.call_errors import RetryableError

__all__ = ["RetryPolicy", "call_with_retry", "call_with_retry_async"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Opt-in retries of :class:`RetryableError` only.

    Attempt ``n`` (from 0) waits ``max(min(backoff * multiplier**n, max_backoff),
    retry_after)`` before the next try; ``attempts`` counts every try, the first included.
    """

    attempts: int = 3
    backoff: float = 0.2
    multiplier: float = 2.0
    max_backoff: float = 30.0
    on_retry: Callable[[int, RetryableError, float], None] | None = field(
        default=None, compare=False
    )

    def delay(self, attempt: int, error: RetryableError) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based)."""
        backoff = min(self.backoff * self.multiplier**attempt, self.max_backoff)
        return max(backoff, error.retry_after or 0.0)


def call_with_retry(
    fn: Callable[[], T], policy: RetryPolicy, *, sleep: Callable[[float], None] = time.sleep
) -> T:
    """Call ``fn`` until it succeeds, raises a non-retryable error, or attempts run out."""
    attempt = 0
    while True:
        try:
            return fn()
        except RetryableError as exc:
            if attempt + 1 >= policy.attempts:
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
        except RetryableError as exc:
            if attempt + 1 >= policy.attempts:
                raise
            wait = policy.delay(attempt, exc)
            if policy.on_retry is not None:
                policy.on_retry(attempt + 1, exc, wait)
            await sleep(wait)
            attempt += 1
