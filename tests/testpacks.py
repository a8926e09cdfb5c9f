"""A plugin of packs for the wire tests: succeed, fail with every code, find, hang, leak.

Load it in-process with ``load_registry(builtins=False, entry_points_=False,
extra=[testpacks])``, or in a ``packctl serve`` subprocess with ``PYTHONPATH=tests``,
``CAPABILITY_PACKS_PLUGINS=testpacks`` and ``--plugin testpacks``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from control_plane import Check, CodeDoc, Context, Pack, PackError, Reach, Result, hookimpl
from control_plane._kernel.errors import schema_mismatch

BASELINE_CODES = [
    "auth_failed",
    "rate_limited",
    "not_found",
    "timeout",
    "schema_mismatch",
    "network_error",
    "internal_error",
]

#: A secret planted in handler exceptions; it must never reach a caller.
SECRET = "hunter2-s3cr3t-9f8e7d"
SECRET_TEXTS = (
    f"password={SECRET}",
    f"Authorization: Bearer {SECRET}",
    f"https://admin:{SECRET}@db.internal/x",
)


def output_schema(codes: list[str], **props: Any) -> dict[str, Any]:
    """An output schema whose error code enum is ``codes``."""
    return {
        "type": "object",
        "properties": {
            **props,
            "error": {
                "type": "object",
                "properties": {"code": {"enum": codes}, "message": {"type": "string"}},
            },
        },
    }


OPEN_INPUT: dict[str, Any] = {"type": "object"}


async def echo(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"echo": doc, "request_id": ctx.request_id}


async def noop(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {}


def sync_echo(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"echo": doc, "request_id": ctx.request_id}


def fail(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Raise the code named in the input, with the payload its code needs."""
    code = doc["code"]
    message = doc.get("message", f"failing with {code}")
    if code == "rate_limited":
        raise PackError(code, message, retry_after=doc.get("retry_after", 2.5))
    if code == "schema_mismatch":
        raise schema_mismatch({"kept": 1, "note": f"token={SECRET}"}, message)
    if code == "internal_error":
        raise RuntimeError(f"unclassifiable failure, {SECRET_TEXTS[0]}")
    raise PackError(code, message)


FAIL_CODES = [*BASELINE_CODES, "quota_exceeded", "dependency_missing"]
FAIL_DOCS = {
    "quota_exceeded": CodeDoc(
        "the pack's own quota ran out", retryable=True, recovery_hint="wait and retry"
    ),
    "dependency_missing": CodeDoc(
        "a tool the pack needs is not installed",
        retryable=False,
        recovery_hint="install the tool",
        absorbs=("not_found",),
    ),
}


def findings(doc: dict[str, Any], ctx: Context) -> Result:
    """Return the checks given in the input."""
    checks = [
        Check(
            c["id"],
            c["severity"],
            c.get("message", c["id"]),
            expected=c.get("expected"),
            actual=c.get("actual"),
            location=c.get("location"),
        )
        for c in doc.get("checks", [])
    ]
    return Result({"checked": len(checks)}, checks)


def hang(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Sleep ``seconds`` (default 30) unless cancelled; a sync handler."""
    end = time.monotonic() + doc.get("seconds", 30)
    while time.monotonic() < end and not ctx.cancelled:
        time.sleep(0.01)
    return {"slept": True}


async def hang_async(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    await asyncio.sleep(doc.get("seconds", 30))
    return {"slept": True}


async def slow(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Answer after ``seconds``: in-flight calls for the shutdown test."""
    await asyncio.sleep(doc.get("seconds", 1.0))
    return {"done": doc.get("tag", "")}


def leak(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Fail with secrets in the exception text, in several ways."""
    mode = doc.get("mode", "internal")
    if mode == "internal":
        try:
            raise ValueError(" ".join(SECRET_TEXTS))
        except ValueError as inner:
            raise RuntimeError(f"wrapped: {SECRET_TEXTS[1]}") from inner
    if mode == "network":
        raise ConnectionRefusedError(f"connect to {SECRET_TEXTS[2]} refused ({SECRET_TEXTS[0]})")
    if mode == "typed":
        raise PackError("network_error", f"downstream said {SECRET_TEXTS[1]}")
    if mode == "partial":
        raise schema_mismatch({"ok": True, "url": SECRET_TEXTS[2]}, f"bad {SECRET_TEXTS[0]}")
    if mode == "check":
        return {"ok": True}
    raise AssertionError(mode)


def big(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"blob": "x" * int(doc["size"])}


_FLAKY: dict[str, int] = {}


def flaky(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Fail with ``code`` the first ``failures`` times a request id is seen, then succeed."""
    seen = _FLAKY.get(ctx.request_id, 0)
    _FLAKY[ctx.request_id] = seen + 1
    if seen < doc.get("failures", 2):
        code = doc.get("code", "network_error")
        raise PackError(code, f"attempt {seen + 1} failed", retry_after=doc.get("retry_after"))
    return {"attempts": seen + 1}


def undeclared(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    raise PackError("mystery_code", "not in the vocabulary")


STRICT_INPUT: dict[str, Any] = {
    "type": "object",
    "required": ["name", "count"],
    "properties": {"name": {"type": "string"}, "count": {"type": "integer", "minimum": 0}},
    "additionalProperties": False,
}

PACKS = [
    Pack(
        "test.echo",
        "1.0.0",
        "Echo the input (async).",
        OPEN_INPUT,
        output_schema(["not_found"]),
        echo,
        docs="Echoes its input back.",
        reach=Reach(),
    ),
    Pack(
        "test.noop",
        "1.0.0",
        "Do nothing (async).",
        OPEN_INPUT,
        output_schema(["timeout"]),
        noop,
        reach=Reach(),
    ),
    Pack(
        "test.sync_echo",
        "1.0.0",
        "Echo the input (sync).",
        OPEN_INPUT,
        output_schema(["not_found"]),
        sync_echo,
        reach=Reach(),
    ),
    Pack(
        "test.fail",
        "2.1.0",
        "Fail with the code named in the input.",
        {"type": "object", "required": ["code"], "properties": {"code": {"type": "string"}}},
        output_schema(FAIL_CODES),
        fail,
        codes=FAIL_DOCS,
        reach=Reach(),
    ),
    Pack(
        "test.findings",
        "1.0.0",
        "Return the given validation checks.",
        OPEN_INPUT,
        output_schema(["not_found"], checked={"type": "integer"}),
        findings,
        validates=True,
        reach=Reach(),
    ),
    Pack(
        "test.hang",
        "1.0.0",
        "Hang (sync).",
        OPEN_INPUT,
        output_schema(["timeout"]),
        hang,
        reach=Reach(),
    ),
    Pack(
        "test.hang_async",
        "1.0.0",
        "Hang (async).",
        OPEN_INPUT,
        output_schema(["timeout"]),
        hang_async,
        reach=Reach(),
    ),
    Pack(
        "test.slow",
        "1.0.0",
        "Answer after a while.",
        OPEN_INPUT,
        output_schema(["timeout"]),
        slow,
        reach=Reach(),
    ),
    Pack(
        "test.leak",
        "1.0.0",
        "Fail with secrets in the exception.",
        OPEN_INPUT,
        output_schema(["network_error", "schema_mismatch"]),
        leak,
        reach=Reach(),
    ),
    Pack(
        "test.big",
        "1.0.0",
        "A large result.",
        OPEN_INPUT,
        output_schema(["timeout"]),
        big,
        reach=Reach(),
    ),
    Pack(
        "test.flaky",
        "1.0.0",
        "Fail a few times per request id, then succeed.",
        OPEN_INPUT,
        output_schema(["network_error", "rate_limited", "not_found"], attempts={"type": "integer"}),
        flaky,
        reach=Reach(),
    ),
    Pack(
        "test.undeclared",
        "1.0.0",
        "Raise an undeclared code.",
        OPEN_INPUT,
        output_schema(["timeout"]),
        undeclared,
        reach=Reach(),
    ),
    Pack(
        "test.strict_input",
        "1.0.0",
        "A pack with a strict input schema.",
        STRICT_INPUT,
        output_schema(["not_found"]),
        sync_echo,
        reach=Reach(),
    ),
]


@hookimpl
def register_packs(register: Any) -> None:
    for pack in PACKS:
        register(pack)


class BrokenPlugin:
    """A plugin whose hook raises; loading it must not stop the others."""

    @hookimpl
    def register_packs(self, register: Any) -> None:
        raise RuntimeError("broken on purpose")
