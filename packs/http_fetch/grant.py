"""What the operator granted http.fetch: its egress, and the largest body it may return.

The one place the pack reads its grant. Until the runtime hands the grant on the
``Context`` (``ctx.reach.egress``: an :class:`~control_plane.tools.EgressPolicy` or a list
of entries), the operator grants egress with the environment variable
:data:`EGRESS_ENV` (entries separated by commas, e.g. ``public,loopback``); without
either, the default: public addresses only. A grant that does not parse refuses every
destination (``not_permitted`` naming the fault), never widens.

The body limit is the server's message limit (``ctx.max_message_bytes`` when the runtime
hands it, else the gRPC default of 4 MiB): a caller's ``max_bytes`` is capped by it, so no
call makes the pack hold more than a message could carry.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Collection
from typing import Any, Final

from control_plane import Context, PackError
from control_plane.tools import EgressGrantError, EgressPolicy

__all__ = ["DEFAULT_MESSAGE_LIMIT", "EGRESS_ENV", "body_limit", "egress_policy"]

EGRESS_ENV: Final = "CAPABILITY_PACKS_HTTP_FETCH_EGRESS"
#: ``packctl serve --max-message-bytes``'s default (``wire.server.DEFAULT_MAX_MESSAGE_BYTES``).
DEFAULT_MESSAGE_LIMIT: Final = 4 * 1024 * 1024


@functools.lru_cache(maxsize=16)
def _parsed(entries: tuple[str, ...]) -> EgressPolicy | str:
    try:
        return EgressPolicy(entries)
    except EgressGrantError as exc:
        return str(exc)


def _entries(granted: Any) -> tuple[str, ...] | None:
    if (
        isinstance(granted, Collection)
        and not isinstance(granted, str | bytes)
        and all(isinstance(entry, str) for entry in granted)
    ):
        return tuple(sorted(granted)) if isinstance(granted, set | frozenset) else tuple(granted)
    return None


def egress_policy(ctx: Context) -> EgressPolicy:
    """The egress granted to this call's pack (``not_permitted`` if the grant is broken)."""
    granted = getattr(getattr(ctx, "reach", None), "egress", None)
    if isinstance(granted, EgressPolicy):
        return granted
    entries = _entries(granted)
    if entries is None:
        text = os.environ.get(EGRESS_ENV)
        if text is None:
            entries = ("public",)
        else:
            entries = tuple(e.strip() for e in text.split(",") if e.strip())
    parsed = _parsed(entries)
    if isinstance(parsed, str):
        raise PackError("not_permitted", f"the egress grant of http.fetch is invalid: {parsed}")
    return parsed


def body_limit(ctx: Context) -> int:
    """The largest body the pack reads: the server's message limit."""
    limit = getattr(ctx, "max_message_bytes", None)
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        return limit
    return DEFAULT_MESSAGE_LIMIT
