"""A pack that declares ``isolated=True`` and reports the process it ran in.

Its check passes only when the handler did not run in the adapter's own process (the
environment variable ``CP_TEST_ADAPTER_PID`` names that process), so strict mode (the gate)
fails if isolation was ignored.
"""

from __future__ import annotations

import os
from typing import Any

from control_plane import Check, Context, Pack, Result, hookimpl

ENV_ADAPTER_PID = "CP_TEST_ADAPTER_PID"

OUTPUT = {
    "type": "object",
    "properties": {
        "pid": {"type": "integer"},
        "cmdline": {"type": "string"},
        "error": {
            "type": "object",
            "properties": {"code": {"enum": ["internal_error"]}},
        },
    },
}


def cmdline() -> str:
    """This process's command line (an adapter's names its command; a worker's does not)."""
    with open(f"/proc/{os.getpid()}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode(errors="replace")


def in_adapter_process(line: str) -> bool:
    return "control_plane._features.cli.cli" in line or "pytest" in line or "packctl" in line


def where(doc: dict[str, Any], ctx: Context) -> Result:
    pid = os.getpid()
    adapter = int(os.environ.get(ENV_ADAPTER_PID, "0"))
    line = cmdline()
    separate = pid != adapter and not in_adapter_process(line)
    check = Check(
        "isolated",
        "pass" if separate else "fail",
        f"handler ran in process {pid}, the adapter is {adapter}",
    )
    return Result({"pid": pid, "cmdline": line[:500]}, [check])


PACK = Pack(
    "iso.where",
    "1.0.0",
    "Reports the process its handler ran in.",
    {"type": "object", "properties": {"path": {"type": "string"}}},
    OUTPUT,
    where,
    validates=True,
    isolated=True,
)


@hookimpl
def register_packs(register: Any) -> None:
    register(PACK)
