"""The Python client against a real server: typed exceptions, retries, the async twin."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
import testpacks
from server_support import ServerThread

from control_plane._features.grpc.client import (
    ERROR_CLASSES,
    ArtifactFailed,
    AsyncClient,
    AuthFailed,
    Client,
    DeadlineExceeded,
    InternalError,
    NetworkError,
    NotFound,
    PackCallError,
    PermanentError,
    RateLimited,
    RetryableError,
    RetryPolicy,
    SchemaMismatch,
    Timeout,
    TransportError,
)
from control_plane._kernel.errors import CapabilityPackError, InvalidInput, UnknownPack
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.vocabulary import BASELINE


def test_list_packs(client: Client) -> None:
    listing = client.list_packs()
    assert "test.echo" in listing.names()
    assert len(listing) == len(listing.packs)
    fail = next(p for p in listing if p.name == "test.fail")
    assert fail.version == "2.1.0" and "quota_exceeded" in fail.codes
    assert [f.plugin for f in listing.failures] == ["broken_plugin"]
    assert listing.to_dict()["load_failures"][0]["plugin"] == "broken_plugin"


def test_describe(client: Client) -> None:
    desc = client.describe("test.fail")
    assert desc.version == "2.1.0"
    assert desc.input_schema["required"] == ["code"]
    assert (
        "internal_error" in desc.output_schema["properties"]["error"]["properties"]["code"]["enum"]
    )
    info = desc.vocabulary["rate_limited"]
    assert info.retryable and info.grpc_status == "RESOURCE_EXHAUSTED" and info.baseline
    assert info.recovery_hint == BASELINE["rate_limited"].recovery_hint
    assert desc.vocabulary["dependency_missing"].absorbs == ("not_found",)
    assert desc.to_dict()["vocabulary"][0]["code"] == "auth_failed"
    with pytest.raises(UnknownPack):
        client.describe("no.such")


def test_invoke_returns_an_outcome(client: Client) -> None:
    outcome = client.invoke("test.echo", {"x": [1, 2]}, request_id="c-1")
    assert isinstance(outcome, Outcome)
    assert outcome.ok and outcome.code is None
    assert outcome.result == {"echo": {"x": [1, 2]}, "request_id": "c-1"}
    assert (outcome.pack, outcome.version, outcome.request_id) == ("test.echo", "1.0.0", "c-1")
    assert client.invoke("test.echo", '{"s": "text"}').result["echo"] == {"s": "text"}
    assert client.invoke("test.echo", b'{"b": 1}').result["echo"] == {"b": 1}
    assert client.invoke("test.echo").result["echo"] == {}


def test_invoke_returns_findings(client: Client) -> None:
    checks = [
        {"id": "w", "severity": "warn", "message": "hmm", "expected": {"a": 1}},
        {"id": "p", "severity": "pass", "message": "ok"},
    ]
    outcome = client.invoke("test.findings", {"checks": checks})
    assert outcome.validation is not None
    assert outcome.validation.status == "warn"
    assert [(c.id, c.severity) for c in outcome.validation.checks] == [("w", "warn"), ("p", "pass")]
    assert outcome.validation.checks[0].expected == {"a": 1}
    assert outcome.to_dict()["validation"]["checks"][1] == {
        "id": "p",
        "severity": "pass",
        "message": "ok",
    }


EXPECTED_CLASS = {
    "auth_failed": AuthFailed,
    "rate_limited": RateLimited,
    "not_found": NotFound,
    "timeout": Timeout,
    "schema_mismatch": SchemaMismatch,
    "network_error": NetworkError,
    "internal_error": InternalError,
}


@pytest.mark.parametrize("code", testpacks.BASELINE_CODES)
def test_each_baseline_code_raises_its_class(client: Client, code: str) -> None:
    with pytest.raises(PackCallError) as info:
        client.invoke("test.fail", {"code": code}, request_id=f"rid-{code}")
    exc = info.value
    assert type(exc) is EXPECTED_CLASS[code]
    assert isinstance(exc, CapabilityPackError)
    family = RetryableError if BASELINE[code].retryable else PermanentError
    assert isinstance(exc, family)
    assert exc.code == code and exc.envelope.code == code
    assert exc.retryable == BASELINE[code].retryable
    assert exc.status == grpc.StatusCode[BASELINE[code].grpc_status]
    assert (exc.pack, exc.version, exc.request_id) == ("test.fail", "2.1.0", f"rid-{code}")
    assert exc.recovery_hint == BASELINE[code].recovery_hint
    assert exc.outcome.error == exc.envelope and not exc.outcome.ok
    if code == "rate_limited":
        assert exc.retry_after == 2.5
    else:
        assert exc.retry_after is None
    if code == "internal_error":
        assert exc.reference_id is not None and exc.reference_id.startswith("ref_")
        assert exc.envelope.detail
    else:
        assert exc.reference_id is None
    if code == "schema_mismatch":
        assert isinstance(exc, SchemaMismatch)
        assert exc.partial_result["kept"] == 1
        assert exc.envelope.partial is True


def test_error_classes_follow_the_vocabulary() -> None:
    assert set(ERROR_CLASSES) == set(BASELINE)
    for code, cls in ERROR_CLASSES.items():
        assert code == cls.CODE
        assert issubclass(cls, RetryableError) == BASELINE[code].retryable
        assert issubclass(cls, PermanentError) != BASELINE[code].retryable


@pytest.mark.parametrize(
    ("code", "family"), [("quota_exceeded", RetryableError), ("dependency_missing", PermanentError)]
)
def test_pack_codes_raise_the_family_with_code_set(
    client: Client, code: str, family: type[PackCallError]
) -> None:
    with pytest.raises(family) as info:
        client.invoke("test.fail", {"code": code})
    assert type(info.value) is family
    assert info.value.code == code


def test_strict_raises_artifact_failed_with_checks(client: Client) -> None:
    checks = [
        {"id": "bad", "severity": "fail", "message": "no"},
        {"id": "meh", "severity": "warn", "message": "hm"},
    ]
    with pytest.raises(ArtifactFailed) as info:
        client.invoke("test.findings", {"checks": checks}, strict=True)
    assert [(c.id, c.severity) for c in info.value.checks] == [("bad", "fail")]
    assert info.value.validation is not None
    assert [c.id for c in info.value.validation.checks] == ["bad", "meh"]
    with pytest.raises(ArtifactFailed) as info:
        client.invoke("test.findings", {"checks": checks[1:]}, strict=True, fail_on="warn")
    assert [(c.id, c.severity) for c in info.value.checks] == [("meh", "warn")]


def test_refused_requests_map_back_to_runtime_errors(client: Client) -> None:
    with pytest.raises(UnknownPack) as unknown:
        client.invoke("no.such", {})
    assert unknown.value.name == "no.such"
    assert "test.echo" in str(unknown.value)
    with pytest.raises(InvalidInput) as invalid:
        client.invoke("test.strict_input", {"name": "x", "count": -1})
    assert invalid.value.pack == "test.strict_input"
    assert [v.field for v in invalid.value.violations] == ["/count"]


def test_deadline_expiry_raises_timeout(client: Client) -> None:
    with pytest.raises(Timeout) as info:
        # the server answers 10 % (at most 250 ms) before the deadline; 0.5 s left it 50 ms,
        # which a loaded CI machine overran (grpc's bare DEADLINE_EXCEEDED came first)
        client.invoke("test.hang", {"seconds": 30}, timeout=3)
    assert info.value.envelope.origin == "control_plane"
    assert info.value.retryable


@pytest.fixture
async def silent_server() -> AsyncIterator[int]:
    """A bare gRPC server that never answers InvokePack in time (no rich status)."""

    async def never(request: bytes, context: Any) -> bytes:
        await asyncio.sleep(10)
        return b""

    handler = grpc.method_handlers_generic_handler(
        "control_plane.v1.ControlPlaneService",
        {"InvokePack": grpc.unary_unary_rpc_method_handler(never)},
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    yield port
    await server.stop(None)


async def test_a_client_side_deadline_is_no_pack_code(silent_server: int) -> None:
    """No answer arrived: the client must not make up ``timeout``, which the pack may not
    declare (the closed set holds on the caller's side too)."""
    async with AsyncClient(f"127.0.0.1:{silent_server}") as client:
        with pytest.raises(DeadlineExceeded) as info:
            await client.invoke("x.y", {}, timeout=0.2)
    assert not isinstance(info.value, PackCallError)
    assert isinstance(info.value, TransportError)
    assert info.value.code == "unavailable" and info.value.retryable
    assert "0.2s" in info.value.rejection.message


def test_no_server_is_a_transport_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with Client(f"127.0.0.1:{port}") as client, pytest.raises(TransportError) as info:
        client.invoke("test.echo", {}, timeout=5)
    assert info.value.status == grpc.StatusCode.UNAVAILABLE
    assert not isinstance(info.value, PackCallError)


# -- retries ---------------------------------------------------------------------------


def test_retry_waits_the_retry_after_the_server_pushes_back(server: ServerThread) -> None:
    """grpc's retries wait a failure's ``retry_after`` (``grpc-retry-pushback-ms``), not the
    far shorter backoff, and resend under the same request id (the pack counts per id)."""
    policy = RetryPolicy(attempts=5, backoff=0.01)
    with Client(server.target, retry=policy) as client:
        started = time.monotonic()
        outcome = client.invoke(
            "test.flaky",
            {"failures": 2, "code": "rate_limited", "retry_after": 0.3},
            timeout=30,
        )
        waited = time.monotonic() - started
    assert outcome.result == {"attempts": 3}
    assert waited >= 0.5  # two pushbacks of 0.3 s; the backoff alone would be ~0.03 s


def test_retry_retries_a_retryable_code(server: ServerThread) -> None:
    with Client(server.target, retry=RetryPolicy(attempts=3, backoff=0.02)) as client:
        outcome = client.invoke("test.flaky", {"failures": 2, "code": "network_error"})
    assert outcome.result == {"attempts": 3}


def test_retry_gives_up_after_the_attempts(server: ServerThread) -> None:
    with (
        Client(server.target, retry=RetryPolicy(attempts=2, backoff=0.01)) as client,
        pytest.raises(NetworkError) as info,
    ):
        client.invoke("test.flaky", {"failures": 5})
    assert info.value.message == "attempt 2 failed"


def test_retry_never_retries_permanent_codes(server: ServerThread) -> None:
    """``not_found`` shares no status with a retryable code here; a permanent code that does
    carries a pushback of -1, which grpc reads as "do not retry" (tests/test_interop_grpc.py)."""
    with (
        Client(server.target, retry=RetryPolicy(attempts=5, backoff=0.01)) as client,
        pytest.raises(NotFound) as info,
    ):
        client.invoke("test.flaky", {"failures": 5, "code": "not_found"})
    assert info.value.message == "attempt 1 failed"


def test_without_a_policy_nothing_is_retried(client: Client) -> None:
    with pytest.raises(NetworkError) as info:
        client.invoke("test.flaky", {"failures": 1, "code": "network_error"}, request_id="once")
    assert info.value.message == "attempt 1 failed"


def test_retry_policy_refuses_what_grpc_would_not_do() -> None:
    with pytest.raises(ValueError, match="attempts"):
        RetryPolicy(attempts=6)
    with pytest.raises(ValueError, match="positive"):
        RetryPolicy(backoff=0.0)
    with pytest.raises(ValueError, match="retry configures the channel"):
        Client("127.0.0.1:1", channel=grpc.insecure_channel("127.0.0.1:1"), retry=RetryPolicy())
    assert RetryPolicy(attempts=1).channel_options() == [("grpc.enable_retries", 0)]


async def test_the_async_client_retries_too(aio_server: Any) -> None:
    policy = RetryPolicy(attempts=3, backoff=0.02)
    async with AsyncClient(f"127.0.0.1:{aio_server.port}", retry=policy) as client:
        outcome = await client.invoke("test.flaky", {"failures": 2, "code": "network_error"})
    assert outcome.result == {"attempts": 3}


# -- the async client ------------------------------------------------------------------


async def test_async_client(aio_client: AsyncClient) -> None:
    listing = await aio_client.list_packs()
    assert "test.echo" in listing.names()
    desc = await aio_client.describe("test.echo")
    assert desc.docs == "Echoes its input back."
    outcome = await aio_client.invoke("test.echo", {"a": 1})
    assert outcome.result is not None and outcome.result["echo"] == {"a": 1}
    with pytest.raises(RateLimited) as info:
        await aio_client.invoke("test.fail", {"code": "rate_limited"})
    assert info.value.retry_after == 2.5
    with pytest.raises(UnknownPack):
        await aio_client.invoke("nope", {})


def test_health(client: Client, server: ServerThread) -> None:
    assert client.health() == "SERVING"
    assert client.health("test.fail") == "SERVING"


@pytest.mark.parametrize("mode", ["internal", "network", "typed", "partial"])
def test_a_secret_in_a_handler_exception_never_reaches_the_client(
    client: Client, mode: str
) -> None:
    with pytest.raises(PackCallError) as info:
        client.invoke("test.leak", {"mode": mode})
    error = info.value
    seen = " ".join([str(error), repr(error), error.envelope.model_dump_json()])
    assert testpacks.SECRET not in seen
