"""The total wire encoder, the bounds and the thread shares, unit by unit (the adversarial
suite drives the same code through real servers)."""

from __future__ import annotations

import asyncio
import math
import threading
from typing import Any

import grpc
import orjson
import pytest

from control_plane._features.grpc import status as wire
from control_plane._kernel.bounds import (
    MAX_NODES,
    MAX_RETRY_AFTER,
    MAX_TEXT,
    clamp_retry_after,
    exact_str,
    json_safe,
    safe_text,
    valid_text,
)
from control_plane._kernel.errors import FieldViolation, InvalidInput
from control_plane._kernel.outcome import CheckRecord, ErrorEnvelope, Outcome, ValidationRecord
from control_plane._kernel.redact import scrub_data
from control_plane._kernel.returned import Returned, copy_returned
from control_plane._kernel.threads import PackThreads


def outcome(**error: Any) -> Outcome:
    fields: dict[str, Any] = {
        "code": "schema_mismatch",
        "message": "m",
        "retryable": False,
        "origin": "pack:p.q",
    }
    fields.update(error)
    return Outcome.construct_trusted(
        pack="p.q",
        version="1.0.0",
        request_id="r1",
        error=ErrorEnvelope.construct_trusted(**fields),
    )


def decode(status: grpc.Status) -> wire.ParsedStatus:
    return wire.parse_status(status.code, status.details, status.trailing_metadata)


def test_json_safe_makes_anything_encodable() -> None:
    class Evil(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            raise SystemExit(1)

    value = {
        "big": 2**70,
        "nan": math.nan,
        "s": "a\udcffb",
        1: (1, 2),
        "evil": Evil(k=1),
        "o": object(),
    }
    safe = json_safe(value)
    orjson.dumps(safe)  # does not raise
    assert safe["big"] == str(2**70) and safe["nan"] is None and safe["1"] == [1, 2]
    assert safe["s"] == "a\ufffdb" and safe["evil"] == {"k": 1}
    assert safe["o"] == "[REDACTED object]"


class _Counting(dict[str, int]):
    """A mapping that counts how many of its items were read."""

    read = 0

    def items(self) -> Any:
        for item in super().items():
            _Counting.read += 1
            yield item


def test_scrubbing_and_copying_stop_at_their_budget() -> None:
    """The work is bounded by the budget, not by the value: a million keys are not read."""
    wide = _Counting((f"k{i}", i) for i in range(1_000_000))
    _Counting.read = 0
    out = scrub_data({"a": wide, "b": ["x"] * 10}, max_nodes=100)
    assert _Counting.read <= 101
    assert len(out["a"]) == 99 and out["a"]["[REDACTED 999902 more values]"] is None
    assert list(out) == ["a", "[REDACTED 1 more values]"]  # "b" came after the budget ran out

    big = {f"k{i}": [i] for i in range(MAX_NODES * 2)}
    safe = json_safe(big)
    assert len(safe) <= MAX_NODES // 2 + 2
    assert any(k.startswith("[REDACTED ") and k.endswith(" more values]") for k in safe)
    assert json_safe([list(range(10))] * (MAX_NODES // 5))[-1].endswith(" more values]")


def test_texts_and_numbers_are_bounded() -> None:
    assert clamp_retry_after(1e19) == MAX_RETRY_AFTER
    assert clamp_retry_after(-3) == 0.0 and clamp_retry_after(math.nan) == 0.0
    assert valid_text("\ud83d\ude00 \udc80") == "\U0001f600 \ufffd"
    long = safe_text("x" * (MAX_TEXT + 10))
    assert len(long) < MAX_TEXT + 100 and long.endswith("[truncated 10 characters]")

    class Forged(str):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = str.__hash__

    code = exact_str(Forged("undeclared"))
    assert type(code) is str and code == "undeclared" and code != "not_found"

    class Loud:
        def __str__(self) -> str:
            raise KeyboardInterrupt

    assert safe_text(Loud()) == "<unprintable Loud>"


def test_retry_after_is_clamped_on_the_wire() -> None:
    parsed = decode(wire.encode_failure(outcome(code="rate_limited", retry_after=1e19)).status)
    assert parsed.retry_delay == MAX_RETRY_AFTER


def test_unencodable_outcomes_are_made_encodable() -> None:
    odd = outcome(
        message="caf\udce9",
        partial=True,
        partial_result={"n": 2**80, "k\udcff": math.inf},
        checks=[CheckRecord.construct_trusted(id="c\ud800", severity="fail", message="m")],
    )
    encoded = wire.encode_failure(odd)
    assert not encoded.last_resort
    parsed = decode(encoded.status)
    assert parsed.code == "schema_mismatch"
    assert parsed.pack_error is not None
    assert orjson.loads(parsed.pack_error.partial_result) == {"n": str(2**80), "k\ufffd": None}


def test_a_thousand_checks_and_a_megabyte_partial_result_fit() -> None:
    checks = [
        CheckRecord.construct_trusted(id=f"check-{i}", severity="fail", message="y" * 60)
        for i in range(1000)
    ]
    big = outcome(
        code="artifact_failed",
        checks=checks,
        partial=True,
        partial_result={"blob": "x" * 1_000_000, "small": 1},
    )
    big = big.model_copy(
        update={"validation": ValidationRecord.construct_trusted(status="fail", checks=checks)}
    )
    status = wire.encode_failure(big).status
    raw = dict(status.trailing_metadata)[wire.DETAILS_KEY]
    assert len(raw) <= wire.MAX_DETAILS_BYTES
    parsed = decode(status)
    assert parsed.error_info is not None
    meta = parsed.error_info.metadata
    assert meta["code"] == "artifact_failed"
    assert set(meta["truncated"].split(",")) == {"checks", "partial_result", "validation_checks"}
    kept, total = meta["checks"].split("/")
    assert total == "1000" and parsed.pack_error is not None
    assert len(parsed.pack_error.checks) == int(kept) > 0
    assert meta["partial_result_keys"] == "1/2" and int(meta["partial_result_bytes"]) > 10**6
    assert orjson.loads(parsed.pack_error.partial_result) == {"small": 1}


def test_rejections_are_bounded_too() -> None:
    many = [FieldViolation(f"/f{i}", "bad " * 20) for i in range(1000)]
    status = wire.refusal(InvalidInput("p.q", many))
    assert len(dict(status.trailing_metadata)[wire.DETAILS_KEY]) <= wire.MAX_DETAILS_BYTES
    parsed = decode(status)
    assert parsed.error_info is not None and parsed.error_info.reason == "INVALID_INPUT"
    assert parsed.field_violations[-1].description.startswith("[truncated:")


def test_the_last_resort_always_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("encoder bug")

    monkeypatch.setattr(wire, "error_status", broken)
    seen: list[BaseException] = []
    encoded = wire.encode_failure(
        outcome(), reference=lambda exc: seen.append(exc) or "ref_0123456789abcdef"
    )
    assert encoded.last_resort and isinstance(seen[0], RuntimeError)
    parsed = decode(encoded.status)
    assert encoded.status.code == grpc.StatusCode.INTERNAL
    assert parsed.error_info is not None
    assert parsed.error_info.metadata["code"] == "internal_error"
    assert parsed.error_info.metadata["reference_id"] == "ref_0123456789abcdef"
    # Even when recording the incident fails: the fixed status.
    encoded = wire.encode_failure(outcome(), reference=broken)
    assert encoded.status is wire.LAST_RESORT


def test_garbage_details_do_not_break_the_parser() -> None:
    parsed = wire.parse_status(
        grpc.StatusCode.INTERNAL, "x", [(wire.DETAILS_KEY, b"\xff\x00garbage")]
    )
    assert parsed.status == grpc.StatusCode.INTERNAL and parsed.error_info is None


def test_returned_objects_are_copied_without_calling_their_methods() -> None:
    class Exiting(dict):  # type: ignore[type-arg]
        def get(self, *args: Any) -> Any:
            raise SystemExit(2)

        def items(self) -> Any:
            raise SystemExit(2)

    copied = copy_returned(Exiting(a=1))
    assert type(copied.output) is dict and copied.output == {"a": 1}
    assert copy_returned(copied) is copied
    assert Returned.from_data(copied.to_data()).output == {"a": 1}
    odd = copy_returned({"big": 2**70})
    assert odd.problem is not None and odd.output == {"big": str(2**70)}


async def test_a_pack_holds_at_most_its_share_until_its_threads_return() -> None:
    threads = PackThreads(total=4, per_pack=2)
    release = threading.Event()
    try:
        hung = [asyncio.ensure_future(threads.run("slow", release.wait, 30)) for _ in range(3)]
        await asyncio.sleep(0.05)
        assert threads.held("slow") == 2  # the third waits for one of its own threads
        # Their deadline passes: the calls end, the threads do not.
        for task in hung:
            task.cancel()
        await asyncio.gather(*hung, return_exceptions=True)
        assert threads.held("slow") == 2 and threads.overrunning("slow") == 2
        # Another pack still gets threads.
        assert await asyncio.wait_for(threads.run("fast", lambda: 42), 10) == 42
        release.set()
        for _ in range(200):
            if threads.held("slow") == 0:
                break
            await asyncio.sleep(0.01)
        assert threads.held("slow") == 0 and threads.overrunning("slow") == 0
    finally:
        release.set()
        threads.shutdown()


async def test_what_a_thread_raises_is_re_raised_once() -> None:
    threads = PackThreads(total=2)

    def raises() -> None:
        raise GeneratorExit

    try:
        with pytest.raises(GeneratorExit):
            await threads.run("p", raises)
        assert await threads.run("p", lambda: "after") == "after"
    finally:
        threads.shutdown()


def test_a_thread_that_outlives_its_event_loop_gives_its_share_back() -> None:
    threads = PackThreads(total=2, per_pack=1)
    release = threading.Event()

    async def overrun() -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await threads.run("p", release.wait, 30)

    try:
        asyncio.run(overrun())  # its loop is closed; the thread still runs
        assert threads.held("p") == 1 and threads.overrunning("p") == 1
        release.set()
        for _ in range(500):
            if threads.held("p") == 0:
                break
            threading.Event().wait(0.01)
        assert threads.held("p") == 0 and threads.overrunning("p") == 0
        # A call from another loop gets the thread.
        assert asyncio.run(asyncio.wait_for(threads.run("p", lambda: 7), 10)) == 7
    finally:
        release.set()
        threads.shutdown()


async def test_the_server_records_the_last_resort_it_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    """When even encoding fails, the outcome the server records (metrics, events) is the
    last-resort ``internal_error`` the caller got, with the same reference id."""
    import testpacks

    from control_plane._features.grpc.server import ControlPlaneServicer
    from control_plane._runtime.plugins import load_registry
    from control_plane._runtime.runtime import RuntimeConfig, build_runtime
    from control_plane.v1 import control_plane_pb2 as pb

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("encoder bug")

    load = load_registry(builtins=False, entry_points_=False, extra=[testpacks])
    runtime = build_runtime(RuntimeConfig(), load=load)
    recorded: list[Outcome] = []
    sent: list[grpc.Status] = []

    class Recorder:
        def record_outcome(self, outcome: Outcome, seconds: float) -> None:
            recorded.append(outcome)

    class Context:
        def invocation_metadata(self) -> tuple[Any, ...]:
            return ()

        def time_remaining(self) -> float | None:
            return None

        async def abort_with_status(self, status: grpc.Status) -> None:
            sent.append(status)
            raise grpc.aio.AbortError()

    try:
        monkeypatch.setattr(runtime.invoker, "invoke", broken)
        monkeypatch.setattr(wire, "error_status", broken)
        servicer = ControlPlaneServicer(
            runtime.invoker,
            max_send_bytes=1 << 20,
            observability=Recorder(),  # type: ignore[arg-type]
        )
        with pytest.raises(grpc.aio.AbortError):
            await servicer.InvokePack(pb.InvokePackRequest(pack="x.y"), Context())  # type: ignore[arg-type]
    finally:
        runtime.close()
    parsed = decode(sent[0])
    assert parsed.error_info is not None
    assert parsed.error_info.metadata["encoding"] == "last_resort"
    ref = parsed.error_info.metadata["reference_id"]
    last = recorded[-1].error
    assert last is not None and last.code == "internal_error" and last.reference_id == ref
