"""The secret corpus through the MCP bridge: a real ``packctl mcp --local`` over stdio.

Every sample goes through every failure channel of ``leak.channel`` as an MCP tool call,
and through input violations and unknown-tool refusals; everything the MCP client can read
(content items, structured content) and everything the bridge writes to stderr is scanned.
The Temporal bridge's renderers are driven with the corpus in
``tests/test_redact_channel_registry.py`` (a Temporal server is not needed for them).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import leakpacks
import pytest
from secret_corpus import SECRETS
from server_support import PACKCTL, ROOT, subprocess_env

mcp = pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

MODES = [m for m in leakpacks.MODES if m not in ("thread", "thirdparty_log")]


@asynccontextmanager
async def _bridge(errlog: Any) -> AsyncIterator[Client]:
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="leakpacks")
    params = StdioServerParameters(
        command=PACKCTL[0],
        args=[*PACKCTL[1:], "mcp", "--local", "--plugin", "leakpacks"],
        env=env,
        cwd=str(ROOT),
    )
    async with Client(params, read_timeout_seconds=60.0) as client:
        yield client


def _everything(result: Any) -> str:
    items = [i.text if i.type == "text" else i.model_dump_json() for i in result.content]
    return "\n".join([*items, json.dumps(result.structured_content)])


#: Calls in flight at once on the one stdio session (the bridge answers each as it ends).
IN_FLIGHT = 8


async def _run(errlog: Path) -> list[str]:
    seen: list[str] = []
    calls = [
        args
        for sample in SECRETS
        for args in (
            *({"mode": mode, "text": sample.text} for mode in MODES),
            {"mode": sample.text, "text": 1},  # refused: the text echoed as a bad mode
        )
    ]
    limit = anyio.CapacityLimiter(IN_FLIGHT)
    async with _bridge(errlog) as client:
        await client.list_tools()

        async def one(args: dict[str, Any]) -> None:
            async with limit:
                seen.append(_everything(await client.call_tool("leak.channel", args)))

        async with anyio.create_task_group() as group:
            for args in calls:
                group.start_soon(one, args)
    return seen


# The whole corpus through a real server: minutes on a loaded shared machine.
@pytest.mark.timeout(900)
def test_the_corpus_leaks_through_no_mcp_answer(tmp_path: Path) -> None:
    errlog = tmp_path / "stderr.log"
    seen = anyio.run(_run, errlog)
    text = "\n".join(seen)
    assert "[REDACTED" in text and "not_found" in text and "invalid_input" in text
    assert len(seen) == len(SECRETS) * (len(MODES) + 1)
    leaks = [
        (sample.family, secret[:20])
        for sample in SECRETS
        for secret in sample.secrets
        if secret in text or json.dumps(secret)[1:-1] in text
    ]
    assert leaks == [], leaks[:10]
    assert os.environ.get("CAPABILITY_PACKS_PLUGINS") != "leakpacks"
