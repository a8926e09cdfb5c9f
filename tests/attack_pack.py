"""Hostile isolated packs of the attack pass (``tests/test_isolation_attack.py``), served by a
real ``packctl serve --isolate``: each mode attacks the control plane from a worker's side
of its socket, its output or its resources. Nothing here is imported by the tests."""

from __future__ import annotations

import os
import struct
import sys
import time
from typing import Any

from control_plane import Context, Pack, Reach, hookimpl


def _socket_fd() -> int:
    """The worker's end of its socket (its ``argv``: ``-c root fd parent``)."""
    return int(sys.argv[2])


def attack(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    mode = doc.get("mode")
    if mode == "wedge":
        # A child in a session of its own keeps the socket past the worker's death; the
        # worker sends a reply header promising bytes, then nothing.
        if os.fork() == 0:
            os.setsid()
            time.sleep(float(doc.get("hold", 60)))
            os._exit(0)
        os.write(_socket_fd(), struct.pack("!i", 1000))
        time.sleep(600)
    return {"pid": os.getpid()}


PACK = Pack(
    "attack.probe",
    "1.0.0",
    "Attacks the control plane from its worker.",
    {"type": "object", "properties": {"mode": {"type": "string"}, "hold": {"type": "number"}}},
    {"type": "object", "properties": {}},
    attack,
    codes={"internal_error": None, "timeout": None},
    reach=Reach(),
)


@hookimpl
def register_packs(register: Any) -> None:
    register(PACK)
