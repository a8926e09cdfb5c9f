"""Classification quality on real failures, provoked live on loopback (``tests/failure_corpus``).

Every case makes a real library or tool fail (grpcio sync and aio, httpx, requests,
aiohttp, websockets sync and asyncio, urllib, http.client, xmlrpc, smtplib, ftplib, imaplib,
poplib, ssl with trustme certificates, asyncio, sockets, subprocess with git, ssh, curl,
wget, ffprobe, GitPython, sqlite3) and names the codes that are right. The test fails on
any wrong specific code, on a case that no longer fails, and below 95% correct. A sample is
also wrapped 1, 3 and 10 levels deep and put inside exception groups, and raised inside a
pack served by ``packctl serve`` and called over gRPC: same code, same ``retry_after``, no
raw stderr, no planted secret.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from failure_corpus.cases import Case, all_cases, provoke
from failure_corpus.score import Result, classifiers, judge, run, table
from failure_corpus.servers import PLANTED, Endpoints, start
from server_support import ROOT, subprocess_env
from test_cli import start_serve, stop_serve

from control_plane._features.grpc.client import Client, PackCallError
from control_plane._kernel.classify import classify

pytestmark = pytest.mark.system  # docs/setup.md, Test tiers

#: The corpus pack declares no reach (its cases reach loopback, unix sockets, files and
#: programs): served, it is trusted, as an operator would say.
TRUSTED = ("--trust", "corpus.provoke", "--trust", "corpus.provoke_on_loop")

CASES = all_cases()
SAMPLE = [c for c in CASES if c.sample]
REQUIRED_CLASSES = {
    "grpc",
    "grpc.aio",
    "httpx",
    "requests",
    "aiohttp",
    "websockets",
    "urllib",
    "http.client",
    "ssl",
    "asyncio",
    "sockets",
    "git",
    "ssh",
    "curl",
    "wget",
    "ffprobe",
    "subprocess",
    "gitpython",
    "sqlite",
    "ftplib",
    "imaplib",
    "poplib",
}


@pytest.fixture(scope="module")
def endpoints() -> Iterator[Endpoints]:
    with start() as ep:
        yield ep


@pytest.fixture(scope="module")
def results(endpoints: Endpoints) -> dict[str, Result]:
    found = run(CASES, endpoints)
    print("\n" + table(found))  # the figures, with -s
    return {r.case.id: r for r in found}


def test_the_corpus_is_large_and_covers_every_library() -> None:
    assert len(CASES) >= 150
    assert {c.klass for c in CASES} >= REQUIRED_CLASSES
    for c in CASES:
        assert c.expect, c.id
        assert c.reason.strip(), c.id
    assert len(SAMPLE) >= 30


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_no_case_gets_a_wrong_specific_code(case: Case, results: dict[str, Result]) -> None:
    r = results[case.id]
    assert r.verdict != "broken", f"{case.id} no longer fails: the case is broken"
    assert r.verdict != "wrong", (
        f"{case.id}: {r.exc_type} -> {r.code} (rule {r.rule}, retry_after {r.retry_after}); "
        f"right: {sorted(case.expect)} ({case.reason})"
    )


def test_at_least_95_percent_of_real_failures_get_the_right_code(
    results: dict[str, Result],
) -> None:
    correct = sum(r.verdict == "correct" for r in results.values())
    assert correct / len(results) >= 0.95, table(list(results.values()))


def _wrapped(exc: BaseException, depth: int) -> BaseException:
    """``exc`` under ``depth`` wrappers, alternately explicit (``from``) and implicit."""
    current = exc
    for level in range(depth):
        try:
            try:
                raise current
            except BaseException as inner:
                if level % 2:
                    raise RuntimeError(f"step {level} failed") from inner
                raise ValueError(f"while handling step {level}")  # noqa: B904 - context
        except (RuntimeError, ValueError) as outer:
            current = outer
    return current


def _grouped(exc: BaseException, nested: bool) -> BaseException:
    try:
        raise ValueError("an unrelated sibling failure")
    except ValueError as sibling:
        group = BaseExceptionGroup("several failures", [sibling, exc])
    if nested:
        group = BaseExceptionGroup("outer", [group])
    return group


@pytest.mark.parametrize("case", SAMPLE, ids=lambda c: c.id)
def test_wrapping_and_groups_keep_the_code(case: Case, endpoints: Endpoints) -> None:
    plugins = classifiers()
    exc = provoke(case, endpoints)
    base = classify(exc, plugins)
    code, retry_after, _, verdict = judge(case, exc, base)
    assert verdict == "correct", f"{case.id}: {code}"
    for variant in (
        _wrapped(exc, 1),
        _wrapped(exc, 3),
        _wrapped(exc, 10),
        _grouped(exc, nested=False),
        _grouped(exc, nested=True),
    ):
        again = classify(variant, plugins)
        assert again is not None
        assert (again.code, again.retry_after) == (code, retry_after), (case.id, variant)


def test_the_runtime_imports_none_of_the_libraries_it_knows_about() -> None:
    probe = (
        "import sys\n"
        "from control_plane._kernel.classify import classify\n"
        "from control_plane._runtime.plugins import load_registry\n"
        "load = load_registry()\n"
        "assert len(load.registry) >= 4, load.registry.failures\n"
        "classify(ConnectionRefusedError(111, 'refused'), load.classifiers)\n"
        "found = sorted(m for m in ('httpx', 'httpcore', 'requests', 'urllib3', 'aiohttp',\n"
        "    'websockets',\n"
        "    'trustme', 'smtplib', 'xmlrpc', 'git', 'sqlite3', 'ftplib', 'imaplib', 'poplib')\n"
        "    if m in sys.modules)\n"
        "print(found)\n"
    )
    env = subprocess_env()
    env.pop("CAPABILITY_PACKS_PLUGINS")  # every built-in pack and classifier loads
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=True,
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


# -- end to end: raised inside a served pack, called over gRPC ----------------------


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="corpus_pack")
    proc, target = start_serve(
        "--plugin", "corpus_pack", "--loop", "uvloop", *TRUSTED, env=env, drain=True
    )
    try:
        yield target
    finally:
        stop_serve(proc)


def _stderr_lines(exc: BaseException) -> list[str]:
    raw = getattr(exc, "stderr", None)
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if not isinstance(raw, str):
        return []
    return [line.strip() for line in raw.splitlines() if len(line.strip()) > 8]


def _served_failure(served: str, pack: str, case: Case, endpoints: Endpoints) -> PackCallError:
    with Client(served) as client, pytest.raises(PackCallError) as caught:
        client.invoke(pack, {"case": case.id, "endpoints": endpoints.to_dict()}, timeout=60)
    return caught.value


@pytest.mark.parametrize("pack", ["corpus.provoke", "corpus.provoke_on_loop"])
@pytest.mark.parametrize("case", SAMPLE, ids=lambda c: c.id)
def test_served_pack_delivers_the_same_code_over_grpc(
    case: Case, pack: str, endpoints: Endpoints, served: str
) -> None:
    """In-process on the standard loop vs. raised in a pack of a server on uvloop: by a
    sync handler (async cases on a loop of their own) and by an async one (async cases on
    the server's uvloop loop, so what uvloop's transports raise is what gets classified)."""
    exc = provoke(case, endpoints)
    local = classify(exc, classifiers())
    want = local.code if local is not None else "internal_error"
    error = _served_failure(served, pack, case, endpoints)
    if error.code != want:
        # Once more, as the live corpus does (ci12: websockets:aio:refused, served once as
        # internal_error at load 8): a real difference between the two is there twice.
        error = _served_failure(served, pack, case, endpoints)
    assert error.code == want, f"{case.id}: served {error.code}, in-process {want}"
    assert error.code in case.expect | {"internal_error"}
    if want == "rate_limited":
        assert local is not None
        assert error.retry_after == local.retry_after
        if case.retry_after is not None:
            assert error.retry_after == case.retry_after
    text = json.dumps(error.envelope.model_dump(mode="json"))
    assert PLANTED not in text
    for line in _stderr_lines(exc):
        assert line not in text, f"raw stderr travelled: {line!r}"


#: The libraries whose corpus cases include async ones.
ASYNC_CLASSES = {"grpc.aio", "httpx", "aiohttp", "websockets", "asyncio", "subprocess"}


def test_async_cases_get_the_same_code_on_uvloop(
    endpoints: Endpoints, results: dict[str, Result]
) -> None:
    """``packctl serve`` runs on uvloop (``--loop auto``): what its transports, resolver
    and subprocesses raise must classify as the standard loop's failures do."""
    import uvloop

    cases = [c for c in CASES if c.klass in ASYNC_CLASSES]
    assert len(cases) >= 40
    on_uvloop = run(cases, endpoints, loop_factory=uvloop.new_event_loop)
    differ = [
        f"{r.case.id}: uvloop {r.exc_type} -> {r.code} ({r.verdict}); asyncio "
        f"{results[r.case.id].exc_type} -> {results[r.case.id].code}"
        for r in on_uvloop
        if (r.code, r.retry_after, r.verdict)
        != (results[r.case.id].code, results[r.case.id].retry_after, results[r.case.id].verdict)
    ]
    assert not differ, "\n".join(differ)


def test_the_planted_secret_is_really_in_what_some_sample_cases_raise(
    endpoints: Endpoints,
) -> None:
    seen: list[Any] = []
    for c in SAMPLE:
        exc = provoke(c, endpoints)
        details = getattr(exc, "details", None)
        text = repr(exc) + str(details() if callable(details) else "")
        response = getattr(exc, "response", None)
        text += str(getattr(response, "text", ""))
        if PLANTED in text:
            seen.append(c.id)
    assert len(seen) >= 3, seen


# -- the same, with the pack isolated in a worker process ---------------------------


@pytest.fixture(scope="module")
def served_isolated() -> Iterator[str]:
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="corpus_pack")
    proc, target = start_serve(
        "--plugin", "corpus_pack", "--isolate", "all", *TRUSTED, env=env, drain=True
    )
    try:
        yield target
    finally:
        stop_serve(proc)


@pytest.mark.parametrize("case", SAMPLE, ids=lambda c: c.id)
def test_an_isolated_pack_delivers_the_same_code(
    case: Case, endpoints: Endpoints, served_isolated: str
) -> None:
    """Across the worker boundary only data travels: what only frames or live objects
    show (a missing program, a gRPC status and its RetryInfo) is recorded as data first."""
    exc = provoke(case, endpoints)
    local = classify(exc, classifiers())
    want = local.code if local is not None else "internal_error"
    with Client(served_isolated) as client, pytest.raises(PackCallError) as caught:
        client.invoke(
            "corpus.provoke", {"case": case.id, "endpoints": endpoints.to_dict()}, timeout=60
        )
    error = caught.value
    assert error.code in case.expect | {"internal_error"}, f"{case.id}: {error.code}"
    assert error.code == want, f"{case.id}: isolated {error.code}, in-process {want}"
    if want == "rate_limited":
        assert local is not None and error.retry_after == local.retry_after
    assert PLANTED not in json.dumps(error.envelope.model_dump(mode="json"))
