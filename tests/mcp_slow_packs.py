"""A pack that reports, in files, whether the call it serves was cancelled.

Load it with ``--plugin mcp_slow_packs`` (``tests/`` on ``PYTHONPATH``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import testpacks

from control_plane import Context, Pack, Reach, hookimpl


def watched(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Write ``<marker>.started``, run until cancelled (at most ``seconds``), then write
    ``<marker>.cancelled`` or ``<marker>.finished``."""
    marker = Path(doc["marker"])
    marker.with_suffix(".started").write_text("")
    end = time.monotonic() + doc.get("seconds", 60)
    while time.monotonic() < end and not ctx.cancelled:
        time.sleep(0.01)
    marker.with_suffix(".cancelled" if ctx.cancelled else ".finished").write_text("")
    return {"done": True}


@hookimpl
def register_packs(register: Any) -> None:
    register(
        Pack(
            "test.watched",
            "1.0.0",
            "Run until cancelled; say so in a file.",
            {"type": "object", "required": ["marker"]},
            testpacks.output_schema(["timeout"], done={"type": "boolean"}),
            watched,
            reach=Reach(),
        )
    )
