"""Retries by grpc itself: a service config whose retry policy covers ``InvokePack``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from control_plane._features.grpc.status import service_config

__all__ = ["MAX_ATTEMPTS", "RetryPolicy"]

#: grpc's own ceiling on ``maxAttempts`` (a larger value is treated as this one).
MAX_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries of retryable failures (``Client(target, retry=RetryPolicy())``).

    ``attempts`` counts every try, the first included (at most :data:`MAX_ATTEMPTS`).
    Without a pushback, attempt ``n`` waits a random time up to
    ``min(backoff * multiplier**n, max_backoff)`` (grpc's jittered backoff). The call's
    deadline covers every attempt and every wait.
    """

    attempts: int = 3
    backoff: float = 0.2
    multiplier: float = 2.0
    max_backoff: float = 30.0

    def __post_init__(self) -> None:
        if not 1 <= self.attempts <= MAX_ATTEMPTS:
            raise ValueError(f"attempts must be 1..{MAX_ATTEMPTS} (grpc's ceiling)")
        if not (self.backoff > 0 and self.max_backoff > 0 and self.multiplier > 0):
            raise ValueError("backoff, max_backoff and multiplier must be positive")

    def channel_options(self) -> list[tuple[str, Any]]:
        """The channel options that make grpc retry ``InvokePack`` under this policy."""
        if self.attempts == 1:
            return [("grpc.enable_retries", 0)]
        config = service_config(
            max_attempts=self.attempts,
            initial_backoff=self.backoff,
            max_backoff=self.max_backoff,
            backoff_multiplier=self.multiplier,
        )
        return [("grpc.enable_retries", 1), ("grpc.service_config", json.dumps(config))]
