"""Soak: a real ``packctl serve`` subprocess under mixed, hostile, concurrent load.

Concurrent clients mix successes, every error code, hangs, crashes in an isolated pack,
memory leaks, overloads, bad input and unauthenticated calls for ``SOAK_SECONDS``
(default 45). Then, with calls in flight, the server gets a real SIGTERM. The test
asserts:

* every request got exactly one response, with the status its scenario expects, and no
  transport failure (``lost = 0``);
* every pack error code is inside that pack's vocabulary (read with ``DescribePack``);
* no planted secret appears in any result, message, detail or trailer;
* the server's RSS after the run stays within a bound of its RSS after warm-up;
* SIGTERM drains every in-flight call (in-process and isolated) and exits 0.

The figures are printed at the end (``pytest -s`` not needed). ``SOAK_SECONDS=600`` runs
longer; ``SOAK_CLIENTS`` sets the concurrency.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import orjson
import pytest
from child_processes import tied
from server_support import PACKCTL, ROOT, reap, subprocess_env
from testpacks import FAIL_CODES, SECRET

from control_plane._features.grpc import status as wire
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

SOAK_SECONDS = float(os.environ.get("SOAK_SECONDS", "45"))
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "12"))
TOKEN = "soak-token-" + "9" * 32
#: Allowed growth of the server's RSS between warm-up and the end of the run.
RSS_GROWTH_LIMIT = 64 * 1024 * 1024
SECRETS = (SECRET.encode(), b"hunter2")
OK = grpc.StatusCode.OK
INVALID = grpc.StatusCode.INVALID_ARGUMENT
#: Statuses that, without the control plane's rich status, mean a request got no answer.
TRANSPORT_FAILURES = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.DEADLINE_EXCEEDED,
    }
)


@dataclass(frozen=True)
class Scenario:
    name: str
    weight: float
    pack: str
    doc: Any
    expect: frozenset[grpc.StatusCode]
    code: str | None = None  # expected pack error code
    deadline: float = 10.0
    strict: bool = False
    token: str | None = TOKEN
    raw: bytes | None = None


def _status_of(code: str, retryable: bool = False) -> grpc.StatusCode:
    return wire.status_for(code, retryable)


def scenarios() -> list[Scenario]:
    s: list[Scenario] = [
        Scenario("ok.echo", 30, "test.echo", {"n": 1}, frozenset({OK})),
        Scenario("ok.sync", 10, "test.sync_echo", {"n": 2}, frozenset({OK})),
        Scenario("ok.isolated", 8, "fault.ok", {"n": 3}, frozenset({OK})),
        Scenario("ok.isolated_crash_pack", 3, "fault.crash", {"mode": "ok"}, frozenset({OK})),
        Scenario(
            "ok.findings",
            3,
            "test.findings",
            {"checks": [{"id": "c1", "severity": "fail"}]},
            frozenset({OK}),
        ),
        Scenario(
            "err.artifact_failed",
            3,
            "test.findings",
            {"checks": [{"id": "c1", "severity": "fail"}]},
            frozenset({_status_of("artifact_failed")}),
            code="artifact_failed",
            strict=True,
        ),
        Scenario(
            "err.timeout.hang",
            2,
            "test.hang_async",
            {"seconds": 30},
            frozenset({_status_of("timeout")}),
            code="timeout",
            deadline=2.5,
        ),
        Scenario(
            "err.undeclared",
            1,
            "test.undeclared",
            {},
            frozenset({_status_of("internal_error")}),
            code="internal_error",
        ),
        Scenario(
            "crash.exit",
            1.5,
            "fault.crash",
            {"mode": "exit"},
            frozenset({_status_of("internal_error")}),
            code="internal_error",
        ),
        Scenario(
            "crash.segv",
            1.5,
            "fault.crash",
            {"mode": "segv"},
            frozenset({_status_of("internal_error")}),
            code="internal_error",
        ),
        Scenario(
            "crash.hang",
            0.5,
            "fault.crash",
            {"mode": "hang"},
            frozenset({_status_of("timeout")}),
            code="timeout",
            deadline=2.5,
        ),
        Scenario(
            "crash.memory_leak",
            0.15,
            "fault.crash",
            {"mode": "leak"},
            frozenset({_status_of("internal_error")}),
            code="internal_error",
            deadline=20.0,
        ),
        Scenario(
            "overload.slow",
            4,
            "test.slow",
            {"seconds": 0.3},
            frozenset({OK, grpc.StatusCode.RESOURCE_EXHAUSTED}),
        ),
        Scenario("bad.json", 2, "test.echo", None, frozenset({INVALID}), raw=b'{"a": '),
        Scenario("bad.not_object", 1, "test.echo", None, frozenset({INVALID}), raw=b"[1]"),
        Scenario("bad.utf8", 1, "test.echo", None, frozenset({INVALID}), raw=b'{"a":"\xff"}'),
        Scenario(
            "bad.deep",
            1,
            "test.echo",
            None,
            frozenset({INVALID}),
            raw=b"[" * 10_000 + b"]" * 10_000,
        ),
        Scenario(
            "bad.too_large",
            0.5,
            "test.echo",
            None,
            frozenset({INVALID}),
            raw=b'{"a":"' + b"x" * 70_000 + b'"}',
        ),
        Scenario(
            "bad.schema",
            1,
            "test.strict_input",
            {"name": "x", "count": -1, "extra": 1},
            frozenset({INVALID}),
        ),
        Scenario("bad.unknown_pack", 2, "no.such.pack", {}, frozenset({grpc.StatusCode.NOT_FOUND})),
        Scenario("bad.empty_pack", 0.5, "", {}, frozenset({INVALID})),
        Scenario(
            "auth.no_token",
            2,
            "test.echo",
            {},
            frozenset({grpc.StatusCode.UNAUTHENTICATED}),
            token=None,
        ),
        Scenario(
            "auth.bad_token",
            1,
            "test.echo",
            {},
            frozenset({grpc.StatusCode.UNAUTHENTICATED}),
            token="soak-token-" + "8" * 32,
        ),
    ]
    retryable = {"quota_exceeded": True}
    for code in FAIL_CODES:
        expected = _status_of(code, retryable.get(code, False))
        s.append(
            Scenario(f"err.{code}", 1, "test.fail", {"code": code}, frozenset({expected}), code)
        )
    for mode, code in (("internal", "internal_error"), ("network", "network_error")):
        s.append(
            Scenario(
                f"secret.{mode}",
                1.5,
                "test.leak",
                {"mode": mode},
                frozenset({_status_of(code)}),
                code=code,
            )
        )
    for mode in ("typed", "partial"):
        s.append(
            Scenario(
                f"secret.{mode}",
                1,
                "test.leak",
                {"mode": mode},
                frozenset({_status_of("network_error"), _status_of("schema_mismatch")}),
            )
        )
    return s


@dataclass
class Tally:
    requests: int = 0
    responses: int = 0
    by_scenario: Counter[str] = field(default_factory=Counter)
    by_status: Counter[str] = field(default_factory=Counter)
    by_code: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    outside_vocabulary: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    deadline_races: int = 0


def _leaks(*blobs: bytes | str) -> bool:
    for blob in blobs:
        data = blob.encode() if isinstance(blob, str) else blob
        if any(secret in data for secret in SECRETS):
            return True
    return False


async def one_call(
    stub: pb_grpc.ControlPlaneServiceStub,
    sc: Scenario,
    tally: Tally,
    vocabularies: dict[str, set[str]],
) -> None:
    raw = sc.raw if sc.raw is not None else orjson.dumps(sc.doc)
    request = pb.InvokePackRequest(pack=sc.pack, input=raw, strict=sc.strict)
    metadata = (("authorization", f"Bearer {sc.token}"),) if sc.token else None
    tally.requests += 1
    tally.by_scenario[sc.name] += 1
    code: str | None = None
    try:
        reply = await stub.InvokePack(request, timeout=sc.deadline, metadata=metadata)
        status = OK
        if _leaks(reply.SerializeToString()):
            tally.leaks.append(sc.name)
    except grpc.aio.AioRpcError as exc:
        status = exc.code()
        trailers = exc.trailing_metadata() or ()
        blobs = [exc.details() or ""] + [v for _, v in trailers]
        if _leaks(*blobs):
            tally.leaks.append(sc.name)
        parsed = wire.parse_status(status, exc.details(), list(trailers))
        code = parsed.code
        if status in TRANSPORT_FAILURES and parsed.error_info is None:
            if status == grpc.StatusCode.DEADLINE_EXCEEDED and sc.code == "timeout":
                # The server's `timeout` (sent 10 %, at most 250 ms, before the caller's
                # deadline) lost the race to the caller's own deadline on a starved CPU.
                tally.deadline_races += 1
                tally.responses += 1
                tally.by_status["DEADLINE_EXCEEDED(client)"] += 1
                return
            # a transport-level end, not an answer of the control plane
            tally.lost.append(f"{sc.name}: {status.name}: {exc.details()}")
    tally.responses += 1
    tally.by_status[status.name] += 1
    if code is not None:
        tally.by_code[code] += 1
        if code not in vocabularies.get(sc.pack, set()):
            tally.outside_vocabulary.append(f"{sc.name}: {code}")
    if status not in sc.expect or (sc.code is not None and status != OK and code != sc.code):
        tally.unexpected.append(f"{sc.name}: {status.name} {code}")


async def load(
    target: str, seconds: float, tally: Tally, vocabularies: dict[str, set[str]]
) -> None:
    all_scenarios = scenarios()
    weights = [sc.weight for sc in all_scenarios]
    end = time.monotonic() + seconds

    async def client(seed: int) -> None:
        rnd = random.Random(seed)
        async with grpc.aio.insecure_channel(target) as channel:
            stub = pb_grpc.ControlPlaneServiceStub(channel)
            while time.monotonic() < end:
                sc = rnd.choices(all_scenarios, weights)[0]
                await one_call(stub, sc, tally, vocabularies)

    await asyncio.gather(*(client(i) for i in range(CLIENTS)))


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def start_server(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="testpacks,faultpacks", SOAK_TOKENS=TOKEN)
    stream = log.open("wb")
    proc = subprocess.Popen(
        tied(
            [
                *PACKCTL,
                "serve",
                "--address",
                "127.0.0.1:0",
                "--plugin",
                "testpacks",
                "--plugin",
                "faultpacks",
                "--isolate",
                "fault.crash",
                "--isolation-workers",
                "2",
                "--isolation-memory-mb",
                "512",
                "--pack-limit",
                "test.slow=3",
                "--max-in-flight",
                "256",
                "--max-input-bytes",
                "65536",
                "--auth-token-env",
                "SOAK_TOKENS",
                "--grace",
                "20",
                "--log-level",
                "warning",
                "--no-event-stream",
                "--no-incident-db",
            ]
        ),
        stdout=subprocess.DEVNULL,
        stderr=stream,
        env=env,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        match = re.search(r"serving \d+ pack\(s\) on (127\.0\.0\.1:\d+)", text)
        if match:
            return proc, match.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("packctl serve did not start:\n" + log.read_text(errors="replace"))


async def describe_all(target: str, names: list[str]) -> dict[str, set[str]]:
    metadata = (("authorization", f"Bearer {TOKEN}"),)
    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.ControlPlaneServiceStub(channel)
        out = {}
        for name in names:
            desc = await stub.DescribePack(
                pb.DescribePackRequest(name=name), timeout=10, metadata=metadata
            )
            out[name] = {entry.code for entry in desc.vocabulary}
        return out


async def drain_on_sigterm(
    target: str, proc: subprocess.Popen[bytes]
) -> tuple[int, int, list[str]]:
    """Start calls, SIGTERM while they are in flight; returns (sent, answered OK, other)."""
    metadata = (("authorization", f"Bearer {TOKEN}"),)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("test.slow", {"seconds": 1.5, "tag": "drain"}),
        ("test.hang", {"seconds": 1.5}),
        ("fault.ok", {"sleep": 1.5}),
        ("test.echo", {"n": 0}),
    ] * 3
    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.ControlPlaneServiceStub(channel)

        async def call(pack: str, doc: dict[str, Any]) -> str:
            try:
                await stub.InvokePack(
                    pb.InvokePackRequest(pack=pack, input=orjson.dumps(doc)),
                    timeout=30,
                    metadata=metadata,
                )
            except grpc.aio.AioRpcError as exc:
                return f"{pack}: {exc.code().name}: {exc.details()}"
            return "ok"

        # test.slow is limited to 3 in flight: exactly 3 of them.
        tasks = [asyncio.ensure_future(call(p, d)) for p, d in calls]
        await asyncio.sleep(0.6)
        proc.send_signal(signal.SIGTERM)
        results = await asyncio.gather(*tasks)
    return len(results), results.count("ok"), [r for r in results if r != "ok"]


@pytest.mark.slow
@pytest.mark.timeout(int(SOAK_SECONDS) + 180)
def test_soak(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "server.log"
    proc, target = start_server(log)
    try:
        names = sorted({sc.pack for sc in scenarios() if sc.pack and sc.pack != "no.such.pack"})
        vocabularies = asyncio.run(describe_all(target, names))
        tally = Tally()
        warm = max(3.0, SOAK_SECONDS * 0.2)
        asyncio.run(load(target, warm, tally, vocabularies))
        rss_start = rss_bytes(proc.pid)
        started = time.monotonic()
        asyncio.run(load(target, SOAK_SECONDS - warm, tally, vocabularies))
        rss_end = rss_bytes(proc.pid)
        elapsed = warm + (time.monotonic() - started)
        sent, drained, drain_failures = asyncio.run(drain_on_sigterm(target, proc))
        returncode = proc.wait(timeout=60)
    finally:
        reap(proc)
    text = log.read_text(errors="replace")
    replaced = text.count("starting a replacement")
    figures = _figures(tally, elapsed, rss_start, rss_end, sent, drained, replaced)
    with capsys.disabled():
        print("\n" + figures)
    assert tally.requests == tally.responses
    assert not tally.unexpected, Counter(tally.unexpected).most_common(20)
    assert not tally.lost, tally.lost[:20]
    timeouts = sum(n for name, n in tally.by_scenario.items() if "hang" in name)
    assert tally.deadline_races <= max(2, timeouts // 50), figures
    assert not tally.outside_vocabulary, tally.outside_vocabulary[:20]
    assert not tally.leaks, tally.leaks[:20]
    assert rss_end - rss_start < RSS_GROWTH_LIMIT, figures
    assert not drain_failures, drain_failures
    assert drained == sent
    assert returncode == 0, text[-3000:]
    assert "packctl: stopped" in text
    assert "Traceback" not in text, text[text.index("Traceback") - 500 :][:3000]
    for name in ("crash.exit", "crash.segv", "err.timeout.hang", "bad.deep", "auth.no_token"):
        assert tally.by_scenario[name] > 0, f"scenario {name} never ran"


def _figures(
    tally: Tally,
    elapsed: float,
    rss_start: int,
    rss_end: int,
    sent: int,
    drained: int,
    replaced: int,
) -> str:
    def line(counter: Counter[str]) -> str:
        return ", ".join(f"{k}={v}" for k, v in sorted(counter.items()))

    mb: Callable[[int], str] = lambda n: f"{n / 1048576:.1f} MiB"  # noqa: E731
    return "\n".join(
        [
            f"SOAK {elapsed:.0f}s, {CLIENTS} concurrent clients",
            f"  requests={tally.requests} responses={tally.responses} "
            f"({tally.requests / elapsed:.0f}/s) lost={len(tally.lost)} "
            f"unexpected={len(tally.unexpected)} outside_vocabulary="
            f"{len(tally.outside_vocabulary)} secret_leaks={len(tally.leaks)} "
            f"client_deadline_races={tally.deadline_races}",
            f"  by status: {line(tally.by_status)}",
            f"  pack error codes: {line(tally.by_code)}",
            f"  mix: {line(tally.by_scenario)}",
            f"  isolated workers replaced: {replaced}",
            f"  server RSS after warm-up {mb(rss_start)}, at end {mb(rss_end)} "
            f"(growth {mb(rss_end - rss_start)})",
            f"  SIGTERM drain: {drained}/{sent} in-flight calls answered OK, lost={sent - drained}",
        ]
    )
