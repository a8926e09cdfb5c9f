"""A call's gRPC deadline turned into the time the server may spend on it."""

from __future__ import annotations

__all__ = ["deadline_budget"]


def deadline_budget(remaining: float | None) -> float | None:
    """The pack's timeout for a call with ``remaining`` seconds left on its gRPC deadline.

    The pack stops a little before the caller's deadline (10 %, between 10 ms and 250 ms)
    so the ``timeout`` error still reaches the caller. ``None`` means no deadline.
    """
    if remaining is None:
        return None
    margin = min(0.25, max(0.01, remaining * 0.1))
    return max(0.0, remaining - margin)
