"""Packs and workflows for the Temporal tests: count attempts, crash mid-call, fail inline.

A plugin module (``register_packs``) plus workflows that a test worker registers next to
``InvokePackWorkflow``. Load it with ``extra=[temporal_packs]`` or, in a ``packctl
worker`` subprocess, ``--plugin temporal_packs`` with ``tests/`` on ``PYTHONPATH``.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import workflow

from control_plane import Reach

with workflow.unsafe.imports_passed_through():
    import testpacks

    from control_plane import Check, Context, Pack, PackError, Result, hookimpl
    from control_plane._features.temporal.messages import InvokePackRequest
    from control_plane._features.temporal.workflows import InvokePackWorkflow

#: request id -> monotonic time of every attempt (the worker runs in the test process).
ATTEMPTS: dict[str, list[float]] = {}
_LOCK = threading.Lock()


def attempts(doc: dict[str, Any], ctx: Context) -> Result:
    """Fail like ``test.fail`` the first ``failures`` attempts of a request, then succeed.

    On success the checks given in the input are returned (``strict`` turns a ``fail``
    into ``artifact_failed``).
    """
    with _LOCK:
        times = ATTEMPTS.setdefault(ctx.request_id, [])
        times.append(time.monotonic())
        seen = len(times)
    if seen <= doc.get("failures", 1_000_000):
        testpacks.fail(doc, ctx)
    checks = [
        Check(c["id"], c["severity"], c.get("message", c["id"])) for c in doc.get("checks", [])
    ]
    return Result({"attempts": seen}, checks)


async def crashy(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Append this process's pid to ``marker``; the first attempt then hangs (to be killed)."""
    marker = Path(doc["marker"])
    with marker.open("a") as fh:
        fh.write(f"{os.getpid()}\n")
    pids = [int(line) for line in marker.read_text().split()]
    if len(pids) == 1:
        await asyncio.sleep(doc.get("seconds", 60))
    return {"pids": pids}


def bulky(doc: dict[str, Any], ctx: Context) -> Result:
    """Fail with details over Temporal's payload limit: a ``schema_mismatch`` whose partial
    result has ``count`` keys of ``size`` characters, or ``count`` fail checks whose
    ``actual`` is ``size`` characters (``artifact_failed`` under strict)."""
    count, size = int(doc["count"]), int(doc["size"])
    if doc["code"] == "schema_mismatch":
        raise testpacks.schema_mismatch({f"k{i:05d}": "p" * size for i in range(count)}, "cut")
    checks = [Check(f"c{i}", "fail", f"check {i}", actual="a" * size) for i in range(count)]
    return Result({"attempts": 1}, checks)


PACKS = [
    Pack(
        "tp.attempts",
        "1.0.0",
        "Fail a given number of attempts per request id, then succeed.",
        {"type": "object", "required": ["code"], "properties": {"code": {"type": "string"}}},
        testpacks.output_schema(testpacks.FAIL_CODES, attempts={"type": "integer"}),
        attempts,
        codes=testpacks.FAIL_DOCS,
        validates=True,
        reach=Reach(),
    ),
    Pack(
        "tp.bulky",
        "1.0.0",
        "Fail with details larger than a Temporal payload may carry.",
        {"type": "object", "required": ["code", "count", "size"]},
        testpacks.output_schema(["schema_mismatch"], attempts={"type": "integer"}),
        bulky,
        validates=True,
        reach=Reach(),
    ),
    Pack(
        "tp.crashy",
        "1.0.0",
        "Hang on the first attempt, answer on the next.",
        {"type": "object", "required": ["marker"]},
        testpacks.output_schema(["timeout"], pids={"type": "array"}),
        crashy,
        reach=Reach(),
    ),
]


@hookimpl
def register_packs(register: Any) -> None:
    for pack in PACKS:
        register(pack)


@workflow.defn
class InlineFailureWorkflow:
    """Workflow code that raises a domain error inline (no activity involved)."""

    @workflow.run
    async def run(self, code: str) -> str:
        raise PackError(code, f"inline {code}, token=abc123secret", retry_after=0.5)


@workflow.defn
class RawActivityWorkflow:
    """Calls the pack activity with whatever argument it is given, under Temporal's default
    retry policy (unlimited attempts): what a careless workflow author writes."""

    @workflow.run
    async def run(self, arg: Any) -> dict[str, Any]:
        result: dict[str, Any] = await workflow.execute_activity(
            "capability_packs.invoke",
            arg,
            result_type=dict,
            start_to_close_timeout=timedelta(seconds=10),
        )
        return result


@workflow.defn
class ParentWorkflow:
    """Runs ``InvokePackWorkflow`` as a child and lets its failure propagate."""

    @workflow.run
    async def run(self, request: InvokePackRequest) -> dict[str, Any]:
        result: dict[str, Any] = await workflow.execute_child_workflow(
            InvokePackWorkflow.run, request, id=f"{workflow.info().workflow_id}-child"
        )
        return result
