"""Hostile isolated packs of the attack pass (``tests/test_isolation_attack.py``), served by a
real ``packctl serve --isolate``: each mode attacks the control plane from a worker's side
of its socket, its output or its resources. Nothing here is imported by the tests."""

from __future__ import annotations

import errno
import os
import socket
import struct
import sys
import time
from typing import Any

from control_plane import Context, Pack, Reach, hookimpl

FORGED_RECORD = (
    '{"ts":1.0,"level":"error","logger":"capability_packs.server","msg":"forged by a pack",'
    '"event":"stopping"}'
)
FORGED_STATUS = "packctl: serving 9 pack(s) on 127.0.0.1:1 (forged by a pack)"


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
    if mode == "forge":
        # Lines that pass for the control plane's own, and a terminal's control sequences.
        sys.stderr.write(FORGED_RECORD + "\n")
        sys.stdout.write(FORGED_STATUS + "\n")
        sys.stdout.write("colour \x1b[31mred\x1b]0;a title\x07 back\x08\x08 over\rwritten\n")
        sys.stdout.flush()
        sys.stderr.flush()
        return {}
    if mode == "plant_home":
        # The HOME every program without ambient credentials runs with (git, ffprobe), and
        # a .gitconfig planted there, whatever its mode says.
        home = ctx.reach.environment()["HOME"]
        try:
            os.chmod(home, 0o700)
            with open(os.path.join(home, ".gitconfig"), "w") as config:
                config.write('[url "http://127.0.0.1:1/"]\n\tinsteadOf = https://\n')
        except OSError as exc:
            return {"home": home, "planted": False, "why": f"{type(exc).__name__}: {exc}"}
        return {"home": home, "planted": True}
    if mode == "families":
        # Which socket families it may make (none is connected).
        made: dict[str, str] = {}
        for name, family, kind in _FAMILIES:
            try:
                socket.socket(family, kind).close()
                made[name] = "made"
            except OSError as exc:
                made[name] = errno.errorcode.get(exc.errno or 0, "?")
        return made
    return {"pid": os.getpid()}


_FAMILIES = (
    ("unix", socket.AF_UNIX, socket.SOCK_STREAM),
    ("inet", socket.AF_INET, socket.SOCK_STREAM),
    ("inet6", socket.AF_INET6, socket.SOCK_STREAM),
    ("netlink", 16, socket.SOCK_RAW),
    ("vsock", 40, socket.SOCK_STREAM),  # the hypervisor's host
)


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


#: The same module's packs with other reaches (isolated with it): no egress but ambient
#: credentials (unix sockets only), and egress without credentials (IP only).
UNIX_ONLY = Pack(
    "attack.unix_only",
    "1.0.0",
    "No egress, ambient credentials.",
    PACK.input_schema,
    PACK.output_schema,
    attack,
    codes={"internal_error": None},
    reach=Reach(egress=(), ambient_credentials=True),
)
IP_ONLY = Pack(
    "attack.ip_only",
    "1.0.0",
    "Egress, no credentials.",
    PACK.input_schema,
    PACK.output_schema,
    attack,
    codes={"internal_error": None},
    reach=Reach(egress=("public",)),
)


#: Declares the scratch root as its write root, as git.clone does.
SCRATCH_WRITER = Pack(
    "attack.scratch_writer",
    "1.0.0",
    "Writes the scratch root.",
    PACK.input_schema,
    PACK.output_schema,
    attack,
    codes={"internal_error": None},
    reach=Reach(writes=("$SCRATCH",)),
)


@hookimpl
def register_packs(register: Any) -> None:
    register(PACK)
    register(SCRATCH_WRITER)
    register(UNIX_ONLY)
    register(IP_ONLY)
