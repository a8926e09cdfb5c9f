"""The measured paths: which pack, which flags, which outcome, which target."""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from bench.packs import request_document
from control_plane.v1 import control_plane_pb2 as pb

__all__ = ["SCENARIOS", "Scenario"]


@dataclass(frozen=True, slots=True)
class Scenario:
    """One measured path through the control plane."""

    key: str
    pack: str
    title: str
    #: The pack error code the call must end with (``None``: success).
    code: str | None
    strict: bool = False
    #: Minimum throughput ratio to the echo at 16 concurrent calls (``None``: no target).
    target_ratio: float | None = None
    #: Whether p99 latency is held to 1.25x the echo's at 16 concurrent calls.
    p99_target: bool = True

    def request(self) -> bytes:
        """The serialized ``InvokePackRequest`` (built once, sent as raw bytes)."""
        return pb.InvokePackRequest(
            pack=self.pack,
            input=orjson.dumps(request_document()),
            strict=self.strict,
            request_id="bench-0123456789abcdef0123456789ab",
        ).SerializeToString()


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("success", "bench.noop", "success path (no-op pack, input echoed)", None, False, 0.90),
    Scenario(
        "error",
        "bench.error",
        "error path (ConnectionRefusedError -> network_error)",
        "network_error",
        False,
        0.85,
    ),
    Scenario(
        "strict",
        "bench.strict",
        "strict path (5 checks, 1 fail, strict -> artifact_failed)",
        "artifact_failed",
        True,
        0.85,
    ),
    Scenario(
        "internal_error",
        "bench.internal",
        "internal_error (RuntimeError with a password, redacted)",
        "internal_error",
        False,
        0.60,
        p99_target=False,
    ),
)
