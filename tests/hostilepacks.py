"""A plugin of hostile and careless packs, for the adversarial suite (tests/test_adversarial*).

Loaded into real ``packctl serve`` processes with ``--plugin hostilepacks`` (this directory
is on their ``PYTHONPATH``). Every pack runs :func:`act`, which misbehaves as the input's
``mode`` says; ``hostile.sync`` runs it in the thread pool, ``hostile.async`` on the event
loop, ``hostile.iso`` in isolated worker processes (``isolated=True``). ``hostile.noop`` is
the well-behaved neighbour, ``hostile.hang`` a sync pack that hangs its thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import subprocess
import sys
import time
from typing import Any

from control_plane import (
    Check,
    CodeDoc,
    Context,
    FieldViolation,
    Pack,
    PackError,
    Reach,
    Result,
    hookimpl,
)

CODES = [
    "rate_limited",
    "not_found",
    "schema_mismatch",
    "timeout",
    "network_error",
    "auth_failed",
    "upstream_busy",
]
INPUT: dict[str, Any] = {"type": "object"}
OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"code": {"enum": CODES}, "message": {"type": "string"}},
        },
        "items": {"type": "array", "items": {"type": "integer"}},
        "validation": {"type": "object"},
    },
}
#: A secret every pack's texts may carry: it must never reach a caller.
SECRET = "hunter2-secret-value"
TOKEN = f"token={SECRET}"


class HTTPError(Exception):
    """What an HTTP client raises for a 429 with a ``Retry-After`` header."""

    def __init__(self, status: int, retry_after: str) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.headers = {"Retry-After": retry_after}


class ForgedCode(str):
    """A code that pretends to equal (and hash like) a declared one."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:  # equal to the declared code, and only to it
        return isinstance(other, str) and str.__eq__("not_found", str.__str__(other))

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash("not_found")


class ExitingDict(dict):  # type: ignore[type-arg]
    """A returned object whose methods end the process that calls them."""

    def get(self, *args: Any, **kwargs: Any) -> Any:
        raise SystemExit(9)

    def items(self) -> Any:
        raise SystemExit(9)

    def keys(self) -> Any:
        raise SystemExit(9)

    def __getitem__(self, key: Any) -> Any:
        raise SystemExit(9)

    def __iter__(self) -> Any:
        raise SystemExit(9)


class ExitOnUnpickle:
    """An object that ends whichever process unpickles it."""

    def __reduce__(self) -> Any:
        return (os._exit, (17,))


class DisableScrubbing:
    """An object that switches off the scrubber of whichever process unpickles it."""

    def __reduce__(self) -> Any:
        code = "import control_plane._kernel.redact as r; r._RULES[:] = []; r.scrub = lambda t: t"
        return (exec, (code,))


class NoisyStr(Exception):
    """An exception whose ``__str__`` raises ``KeyboardInterrupt``."""

    def __str__(self) -> str:
        raise KeyboardInterrupt


class ExitingLen(str):
    """A request id whose ``len()`` raises ``SystemExit``."""

    def __len__(self) -> int:
        raise SystemExit(5)


def act(doc: dict[str, Any], ctx: Context) -> Any:
    """Misbehave as ``doc["mode"]`` says (see the module docs)."""
    mode = doc.get("mode", "ok")
    n = int(doc.get("n", 1000))
    if mode == "ok":
        return {"items": [1, 2, 3]}
    if mode == "retry_after_huge":
        raise HTTPError(429, doc.get("retry_after", "1e19"))
    if mode == "bigint_partial":
        raise PackError("schema_mismatch", "part of it", partial_result={"n": 2**70, "ok": 1})
    if mode == "bigint_returned_error":
        return {"error": {"code": "schema_mismatch", "partial_result": {"n": -(2**80)}}}
    if mode == "surrogate":
        raise PackError("not_found", "no such file: caf\udce9 \ud800 end")
    if mode == "surrogate_partial":
        raise PackError("schema_mismatch", "bad", partial_result={"k\udcff": "v\ud800"})
    if mode == "nan_retry":
        return {"error": {"code": "rate_limited", "retry_after": 1e308 * 10}}
    if mode == "huge_partial":
        return {"big": "x" * n, "items": ["not an integer"]}
    if mode == "many_violations":
        return {"items": ["bad"] * n}
    if mode == "raised_violations":
        violations = [FieldViolation(f"/items/{i}", "not an integer " * 4) for i in range(n)]
        raise PackError("schema_mismatch", "many", partial_result={}, violations=violations)
    if mode == "many_checks":
        checks = [Check(f"check-{i:04d}", "fail", f"finding {i} " + "y" * 40) for i in range(n)]
        return Result({"items": []}, checks)
    if mode == "late_fail":  # many passing checks; the only failing one is the last
        checks = [Check(f"c{i}", "pass", "fine") for i in range(n)]
        return Result({"items": []}, [*checks, Check("last", "fail", "the last one fails")])
    if mode == "wide_partial":  # a partial result of n keys (the schema wants integers)
        return {"items": ["x"], **{f"k{i}": i for i in range(n)}}
    if mode == "huge_checks":  # a success whose checks outgrow the message limit
        checks = [Check(f"c{i}", "pass", "p" * 3000) for i in range(2000)]
        return Result({"items": []}, checks)
    if mode == "huge_message":
        raise PackError("not_found", "z" * n)
    if mode == "cancelled":
        raise asyncio.CancelledError
    if mode == "futures_cancelled":
        raise concurrent.futures.CancelledError
    if mode == "generator_exit":
        raise GeneratorExit
    if mode == "keyboard_interrupt":
        raise KeyboardInterrupt
    if mode == "system_exit":
        raise SystemExit(3)
    if mode == "noisy_str":
        raise NoisyStr
    if mode == "exiting_dict":
        return ExitingDict(items=[1])
    if mode == "exit_on_unpickle":
        return {"items": [], "x": ExitOnUnpickle()}
    if mode == "exit_on_unpickle_error":
        exc = PackError("not_found", "gone")
        exc.payload = ExitOnUnpickle()  # type: ignore[attr-defined]
        raise exc
    if mode == "disable_scrubbing":
        return {"items": [], "x": DisableScrubbing()}
    if mode == "print_secret":  # to stdout, sys.stderr and fd 2 directly, one cut line
        tag = doc.get("tag", "")
        print(f"{tag} stdout password={SECRET}", flush=True)
        print(f"{tag} stderr Authorization: Bearer {TOKEN}", file=sys.stderr, flush=True)
        os.write(2, f"{tag} fd2 token={SECRET}\n{tag} unfinished password={SECRET}".encode())
        return {"items": [1]}
    if mode == "swap_request_id":  # the control plane records the failure under this id
        ctx.request_id = ExitingLen("forged")  # type: ignore[misc]
        return {"items": [1]}
    if mode == "secret":
        raise PackError("not_found", f"lookup failed: {TOKEN} Authorization: Bearer {SECRET}")
    if mode == "forged_code":
        raise PackError(ForgedCode("undeclared_code"), "forged")
    if mode == "huge_text":
        raise ValueError("w" * n)
    if mode in ("spawn_and_hang", "spawn_and_exit", "spawn_and_return"):
        # A child (inheriting stdout/stderr) that would outlive the worker: in a group of
        # its own only when the pack asks for it (setsid escapes any group kill).
        child = subprocess.Popen(["sleep", str(doc.get("child_seconds", 300))])
        with open(doc["pidfile"], "w") as f:
            f.write(str(child.pid))
        if mode == "spawn_and_exit":
            os._exit(0)
        if mode == "spawn_and_return":
            return {"items": [child.pid]}
        time.sleep(float(doc.get("seconds", 60)))
        return {"items": []}
    if mode == "flood":  # megabytes of lines to stderr, as fast as the pipe takes them
        line = b"e" * 1000 + b" password=" + SECRET.encode() + b"\n"
        block = line * 64
        for _ in range(int(doc.get("mb", 100)) * 1_000_000 // len(block)):
            os.write(2, block)
        return {"items": []}
    if mode == "hang":
        time.sleep(float(doc.get("seconds", 60)))
        return {"items": []}
    if mode == "sleep":
        time.sleep(float(doc.get("seconds", 1)))
        return {"items": [int(doc.get("tag", 0))]}
    return {"items": []}


async def act_async(doc: dict[str, Any], ctx: Context) -> Any:
    """:func:`act` on the event loop, plus the async-only misbehaviour."""
    mode = doc.get("mode")
    if mode == "await_cancelled":
        task = asyncio.ensure_future(asyncio.sleep(10))
        await asyncio.sleep(0)
        task.cancel()
        return await task  # a common bug: awaiting a task someone cancelled
    if mode == "sleep":
        await asyncio.sleep(float(doc.get("seconds", 1)))
        return {"items": [int(doc.get("tag", 0))]}
    return act(doc, ctx)


# -- the fuzz pack: what to do comes from the (JSON) input, built into hostile objects ------

EXCEPTIONS: dict[str, Any] = {
    "ValueError": ValueError,
    "TypeError": TypeError,
    "RuntimeError": RuntimeError,
    "KeyError": KeyError,
    "OSError": OSError,
    "TimeoutError": TimeoutError,
    "ConnectionResetError": ConnectionResetError,
    "ConnectionRefusedError": ConnectionRefusedError,
    "FileNotFoundError": FileNotFoundError,
    "PermissionError": PermissionError,
    "RecursionError": RecursionError,
    "MemoryError": MemoryError,
    "UnicodeError": UnicodeError,
    "StopIteration": StopIteration,
    "StopAsyncIteration": StopAsyncIteration,
    "KeyboardInterrupt": KeyboardInterrupt,
    "SystemExit": SystemExit,
    "GeneratorExit": GeneratorExit,
    "CancelledError": asyncio.CancelledError,
    "FuturesCancelledError": concurrent.futures.CancelledError,
    "BaseException": BaseException,
    "NoisyStr": NoisyStr,
    "HTTPError": HTTPError,
    "ExceptionGroup": ExceptionGroup,
    "BaseExceptionGroup": BaseExceptionGroup,
}


def text_of(spec: dict[str, Any]) -> Any:
    kind = spec.get("text_kind", "plain")
    n = min(int(spec.get("n", 10)), 3_000_000)
    text = str(spec.get("text", ""))
    if kind == "surrogate":
        return text + "\udcff\ud800" * max(1, n % 50)
    if kind == "huge":
        return text + "h" * n
    if kind == "secret":
        return f"{text} {TOKEN} Bearer {SECRET}"
    if kind == "forged":
        return ForgedCode(text or "undeclared")
    if kind == "not_a_string":
        return n
    return text


def value_of(value: Any, wraps: list[str]) -> Any:
    """``value`` (JSON from the input) made hostile as ``wraps`` says."""
    for wrap in wraps:
        if wrap == "bigint":
            value = {"v": value, "big": 2**64 + 1, "neg": -(2**100)}
        elif wrap == "nan":
            value = {"v": value, "nan": float("nan"), "inf": float("inf")}
        elif wrap == "set":
            value = {"v": value, "set": {1, 2}}
        elif wrap == "bytes":
            value = {"v": value, "bytes": b"\x00\xff"}
        elif wrap == "tuple":
            value = {"v": (value, (1, 2))}
        elif wrap == "surrogate_key":
            value = {"k\udcff": value, "s": "\ud800"}
        elif wrap == "int_key":
            value = {1: value, None: 2}
        elif wrap == "deep":
            for _ in range(300):
                value = {"d": value}
        elif wrap == "exiting_dict":
            value = ExitingDict(v=value)
        elif wrap == "cycle":
            cyclic: dict[str, Any] = {"v": value}
            cyclic["self"] = cyclic
            value = cyclic
        elif wrap == "huge_string":
            value = {"v": value, "huge": "u" * 2_000_000}
        elif wrap == "object":
            value = {"v": value, "o": object()}
        elif wrap == "reduce_exit":
            value = {"v": value, "o": ExitOnUnpickle()}
        elif wrap == "list":
            value = [value]
    return value


def fuzz(doc: dict[str, Any], ctx: Context) -> Any:
    """Do what ``doc`` says (built by tests/test_adversarial_fuzz.py)."""
    act_ = doc.get("act")
    value = value_of(doc.get("value"), list(doc.get("wraps", [])))
    if act_ == "raise":
        cls = EXCEPTIONS.get(str(doc.get("exc")), ValueError)
        text = text_of(doc)
        if cls is HTTPError:
            raise HTTPError(int(doc.get("status", 500)), str(doc.get("retry_after", "1")))
        if cls in (ExceptionGroup, BaseExceptionGroup):
            raise cls("group", [ValueError(text), KeyboardInterrupt()])
        if cls is NoisyStr:
            raise NoisyStr
        raise cls(text)
    if act_ == "pack_error":
        try:
            exc = PackError(
                text_of({"text_kind": doc.get("code_kind"), "text": doc.get("code", "x")}),
                text_of(doc),
                retry_after=doc.get("retry_after_number"),
                partial_result=value if isinstance(value, dict) else None,
            )
        except ValueError:
            exc = PackError("not_found", text_of(doc))
            exc.code = doc.get("code")  # whatever the constructor refused
        raise exc
    if act_ == "return_error":
        return {
            "error": {
                "code": doc.get("code"),
                "message": text_of(doc),
                "retry_after": doc.get("retry_after_number"),
                "partial_result": value,
            }
        }
    if act_ == "return_result":
        text = text_of(doc)
        size = len(text) if isinstance(text, str) else 1
        if "huge_string" in doc.get("wraps", ()):  # every check's `expected` carries it
            size += 2_000_000
        # Up to 2000 checks, but not gigabytes: memory exhaustion is what --isolate's
        # memory limit is for, not the wire (2000 checks each carrying a 2 MB value are a
        # 4 GB result: a trusted in-process pack may stall its server that way, as
        # docs/reliability.md says; the fuzz looks for wrong codes, not for that).
        count = max(1, min(int(doc.get("n", 1)), 2000, 16_000_000 // max(1, size)))
        checks = [
            Check(f"c{i}", doc.get("severity", "fail"), text, expected=value) for i in range(count)
        ]
        return Result({"items": []}, checks)
    if act_ == "return_value":
        return value
    return {"items": [1], "extra": value}


async def fuzz_async(doc: dict[str, Any], ctx: Context) -> Any:
    return fuzz(doc, ctx)


def noop(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"items": []}


def pack(name: str, handler: Any, *, isolated: bool = False) -> Pack:
    return Pack(
        name=name,
        version="1.0.0",
        summary=f"hostile pack {name}",
        input_schema=INPUT,
        output_schema=OUTPUT,
        handler=handler,
        codes={
            "upstream_busy": CodeDoc(
                "the upstream is busy", retryable=True, recovery_hint="retry later"
            )
        },
        isolated=isolated,
        # Declared, so each runs where the test puts it (a pack that declares no reach runs
        # confined in a worker); hostile.iso writes its children's pid files under $TMP.
        reach=Reach(writes=("$TMP",)),
    )


@hookimpl
def register_packs(register: Any) -> None:
    register(pack("hostile.sync", act))
    register(pack("hostile.async", act_async))
    register(pack("hostile.iso", act, isolated=True))
    register(pack("hostile.noop", noop))
    register(pack("hostile.hang", act))
    register(pack("hostile.fuzz", fuzz))
    register(pack("hostile.fuzz_async", fuzz_async))
    register(pack("hostile.fuzz_iso", fuzz, isolated=True))
