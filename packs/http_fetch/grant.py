"""What the operator granted http.fetch: its egress, and the largest body it may return."""

from __future__ import annotations

import functools
from typing import Final

from control_plane import Context, PackError
from control_plane.tools import EgressGrantError, EgressPolicy

__all__ = ["DECLARED_EGRESS", "DEFAULT_MESSAGE_LIMIT", "body_limit", "egress_policy"]

#: What the pack declares (and gets with no grant): public addresses only.
DECLARED_EGRESS = ("public",)
#: The cap of :func:`~packs.http_fetch.client.fetch` called directly, outside a server
#: (gRPC's default message size); a pack call is capped by :func:`body_limit`.
DEFAULT_MESSAGE_LIMIT: Final = 4 * 1024 * 1024


@functools.lru_cache(maxsize=16)
def _parsed(entries: tuple[str, ...]) -> EgressPolicy | str:
    try:
        return EgressPolicy(entries)
    except EgressGrantError as exc:
        return str(exc)


def egress_policy(ctx: Context) -> EgressPolicy:
    """The egress granted to this call's pack (``not_permitted`` if the grant is broken)."""
    granted = ctx.reach.egress
    parsed = _parsed(tuple(DECLARED_EGRESS if granted is None else granted))
    if isinstance(parsed, str):
        raise PackError("not_permitted", f"the egress grant of http.fetch is invalid: {parsed}")
    return parsed


def body_limit(ctx: Context) -> int:
    """The largest body the pack reads: the server's message limit."""
    return ctx.reach.message_limit
