"""The Python client against a hostile, broken or merely different server.

A bare ``grpc`` server on loopback answers whatever the test tells it to (raw bytes, no
project server code): garbage rich statuses, details that lie, delays of 1e19 s, replies
that are not JSON. Whatever arrives, the client raises one of its own exception types
(:class:`CapabilityPackError`) with a code and retryable flag it can stand behind, or
returns an :class:`Outcome` whose ``result`` is a JSON object; it never crashes with
another exception type and never sleeps without bound.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from control_plane._features.grpc.client import (
    AsyncClient,
    AuthFailed,
    Client,
    InternalError,
    NotFound,
    Overloaded,
    PackCallError,
    PermanentError,
    RateLimited,
    RetryableError,
    RetryPolicy,
    SchemaMismatch,
    TransportError,
)
from control_plane._kernel.bounds import MAX_RETRY_AFTER
from control_plane._kernel.errors import CapabilityPackError
from control_plane.v1 import control_plane_pb2 as pb

SERVICE = "control_plane.v1.ControlPlaneService"
Answer = Callable[[bytes, grpc.ServicerContext], bytes]


class _Status(grpc.Status):
    def __init__(
        self, code: grpc.StatusCode, details: str, trailing: tuple[tuple[str, Any], ...]
    ) -> None:
        self.code = code
        self.details = details
        self.trailing_metadata = trailing


class HostileServer:
    """A bare gRPC server whose every method answers with :attr:`answer`."""

    def __init__(self) -> None:
        self.answer: Answer = lambda request, context: b""
        self.calls = 0

        def handle(request: bytes, context: grpc.ServicerContext) -> bytes:
            self.calls += 1
            return self.answer(request, context)

        methods: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {
            name: grpc.unary_unary_rpc_method_handler(handle)
            for name in ("InvokePack", "DescribePack", "ListPacks")
        }
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE, methods),)
        )
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.target = f"127.0.0.1:{self.port}"
        self.server.start()

    def reply(self, message: bytes | Message) -> None:
        raw = message if isinstance(message, bytes) else message.SerializeToString()
        self.answer = lambda request, context: raw

    def fail(
        self,
        status: grpc.StatusCode,
        details: list[Message | any_pb2.Any] | None = None,
        *,
        message: str = "failed",
        raw_details: bytes | None = None,
        rich_code: grpc.StatusCode | None = None,
        pushback_ms: str | None = None,
    ) -> None:
        """End every call with ``status`` and a ``grpc-status-details-bin`` of ``details``
        (each packed into an ``Any``), or of ``raw_details`` verbatim."""
        if raw_details is None and details is not None:
            rich = status_pb2.Status(
                code=(rich_code or status).value[0],
                message=message,
                details=[_any(d) for d in details],
            )
            raw_details = rich.SerializeToString()
        trailing = (("grpc-status-details-bin", raw_details),) if raw_details is not None else ()
        if pushback_ms is not None:
            trailing = (*trailing, ("grpc-retry-pushback-ms", pushback_ms))

        def answer(request: bytes, context: grpc.ServicerContext) -> bytes:
            context.abort_with_status(_Status(status, message, trailing))
            raise AssertionError("abort_with_status returns only by raising")

        self.answer = answer


def _any(message: Message | any_pb2.Any) -> any_pb2.Any:
    if isinstance(message, any_pb2.Any):
        return message
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def info(code: str, retryable: bool = False, domain: str = "x.y") -> error_details_pb2.ErrorInfo:
    return error_details_pb2.ErrorInfo(
        reason=code.upper(),
        domain=domain,
        metadata={"code": code, "retryable": "true" if retryable else "false"},
    )


def retry_info(seconds: int, nanos: int = 0) -> error_details_pb2.RetryInfo:
    return error_details_pb2.RetryInfo(
        retry_delay=duration_pb2.Duration(seconds=seconds, nanos=nanos)
    )


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    server = HostileServer()
    yield server
    server.server.stop(None)


@pytest.fixture
def client(hostile: HostileServer) -> Iterator[Client]:
    with Client(hostile.target, timeout=10) as c:
        yield c


def failure(client: Client, pack: str = "x.y") -> CapabilityPackError:
    """The exception ``invoke`` raised: always one of the client's own types."""
    try:
        client.invoke(pack, {})
    except CapabilityPackError as exc:
        return exc
    raise AssertionError("the call did not fail")


# -- retry_after from the wire is bounded ------------------------------------------------


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [(1e19, MAX_RETRY_AFTER), (math.inf, MAX_RETRY_AFTER), (math.nan, 0.0), (-5.0, 0.0)],
)
def test_a_pack_errors_retry_after_is_clamped(
    hostile: HostileServer, client: Client, retry_after: float, expected: float
) -> None:
    """``PackError.retry_after`` of 1e19 (a downstream's ``Retry-After``), inf, NaN or a
    negative value: the caller is told a delay within [0, MAX_RETRY_AFTER], never one that
    makes ``time.sleep`` overflow or sleep forever."""
    hostile.fail(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        [
            info("rate_limited", True),
            pb.PackError(code="rate_limited", retryable=True, retry_after=retry_after),
        ],
    )
    exc = failure(client)
    assert isinstance(exc, RateLimited)
    assert exc.retry_after == expected


@pytest.mark.parametrize(
    ("seconds", "nanos", "expected"),
    [(9 * 10**18, 0, MAX_RETRY_AFTER), (-5, 0, 0.0), (0, -999_999_999, 0.0), (3, 500_000_000, 3.5)],
)
@pytest.mark.parametrize("with_pack_error", [True, False])
def test_retry_info_delay_is_clamped(
    hostile: HostileServer,
    client: Client,
    seconds: int,
    nanos: int,
    expected: float,
    with_pack_error: bool,
) -> None:
    """``RetryInfo.retry_delay`` of 9e18 s or negative, from our server (with PackError)
    or another implementation (ErrorInfo + RetryInfo only)."""
    details: list[Message] = [info("rate_limited", True), retry_info(seconds, nanos)]
    if with_pack_error:
        details.append(pb.PackError(code="rate_limited", retryable=True))
    hostile.fail(grpc.StatusCode.RESOURCE_EXHAUSTED, details)
    exc = failure(client)
    assert isinstance(exc, RateLimited)
    assert exc.retry_after == expected


def test_a_retry_policy_never_waits_past_the_calls_deadline(hostile: HostileServer) -> None:
    """A pushback of 24 days (the largest grpc reads) and ``retry_after: 1e19``: the call's
    deadline covers every wait, so the caller hears back when its deadline fires."""
    hostile.fail(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        [
            info("rate_limited", True),
            pb.PackError(code="rate_limited", retryable=True, retry_after=1e19),
        ],
        pushback_ms=str(2**31 - 1),
    )
    with Client(hostile.target, retry=RetryPolicy(attempts=5)) as retrying:
        started = time.monotonic()
        with pytest.raises((RateLimited, TransportError)):
            retrying.invoke("x.y", {}, timeout=2)
        assert time.monotonic() - started < 30  # generous: the deadline is 2 s
    assert hostile.calls == 1


def test_retry_resends_refusals_that_say_nothing_ran_and_no_others(
    hostile: HostileServer,
) -> None:
    """A refusal whose reason is retryable (a stopping server's ``unavailable``) is resent
    and the next answer delivered; a permanent one (``unauthenticated``) is not resent."""
    from control_plane._features.grpc.drain import stopping_rejection
    from control_plane._features.grpc.status import rejection_status

    stopping = rejection_status(stopping_rejection("x.y")).SerializeToString()
    seen: list[str] = []

    def answer(request: bytes, context: grpc.ServicerContext) -> bytes:
        seen.append(pb.InvokePackRequest.FromString(request).request_id)
        if len(seen) == 1:
            context.abort_with_status(
                _Status(
                    grpc.StatusCode.UNAVAILABLE,
                    "stopping",
                    (("grpc-status-details-bin", stopping),),
                )
            )
        return pb.InvokePackResponse(pack="x.y", result=b"{}").SerializeToString()

    hostile.answer = answer
    with Client(hostile.target, retry=RetryPolicy(attempts=3, backoff=0.01)) as retrying:
        assert retrying.invoke("x.y", {}, timeout=10).result == {}
        assert len(seen) == 2 and seen[0] == seen[1] != ""  # one request id for both
        hostile.fail(grpc.StatusCode.UNAUTHENTICATED, message="no token")
        before = hostile.calls
        with pytest.raises(TransportError) as info:
            retrying.invoke("x.y", {}, timeout=10)
    assert info.value.code == "unauthenticated" and not info.value.retryable
    assert hostile.calls == before + 1


# -- the retryable flag is the vocabulary's, not the wire's ---------------------------------


def test_a_baseline_codes_retryable_flag_comes_from_the_vocabulary(
    hostile: HostileServer, client: Client
) -> None:
    """A PackError ``auth_failed`` with ``retryable: true``: the caller got an AuthFailed
    (a PermanentError) whose ``.retryable`` was True, and RetryPolicy retried it. (Retries
    follow the status, PERMISSION_DENIED, which is never retried.)"""
    hostile.fail(
        grpc.StatusCode.PERMISSION_DENIED,
        [info("auth_failed", True), pb.PackError(code="auth_failed", retryable=True)],
    )
    exc = failure(client)
    assert isinstance(exc, AuthFailed) and exc.retryable is False
    before = hostile.calls
    with (
        Client(hostile.target, retry=RetryPolicy(attempts=5)) as retrying,
        pytest.raises(AuthFailed),
    ):
        retrying.invoke("x.y", {}, timeout=10)
    assert hostile.calls == before + 1


def test_a_status_that_disagrees_with_the_detail_keeps_the_details_code(
    hostile: HostileServer, client: Client
) -> None:
    """The transport status says UNAVAILABLE, the details say ``not_found``: the code the
    caller branches on is the detail's, and it stays permanent."""
    hostile.fail(
        grpc.StatusCode.UNAVAILABLE,
        [info("not_found"), pb.PackError(code="not_found")],
        rich_code=grpc.StatusCode.NOT_FOUND,
    )
    exc = failure(client)
    assert isinstance(exc, NotFound) and not exc.retryable


# -- details that do not decode ---------------------------------------------------------------


def test_garbage_status_details_are_a_transport_error(
    hostile: HostileServer, client: Client
) -> None:
    hostile.fail(grpc.StatusCode.INTERNAL, raw_details=b"\xff\xfe\x00garbage")
    exc = failure(client)
    assert isinstance(exc, TransportError) and exc.status == grpc.StatusCode.INTERNAL


def test_an_undecodable_pack_error_does_not_hide_the_error_info(
    hostile: HostileServer, client: Client
) -> None:
    """A PackError ``Any`` whose bytes do not decode made the client report code ``""``
    (an empty PackError was kept): the ErrorInfo's code still stands."""
    broken = any_pb2.Any(
        type_url="type.googleapis.com/control_plane.v1.PackError", value=b"\xff\xff\xff"
    )
    hostile.fail(grpc.StatusCode.PERMISSION_DENIED, [info("auth_failed"), broken])
    exc = failure(client)
    assert isinstance(exc, AuthFailed) and exc.code == "auth_failed"


@pytest.mark.parametrize("partial", [b"{not json", b"[1, 2]", b'"text"'])
def test_a_partial_result_that_is_not_a_json_object(
    hostile: HostileServer, client: Client, partial: bytes
) -> None:
    """``partial_result`` that is not JSON escaped as ``orjson.JSONDecodeError``; one that
    is a list made ``SchemaMismatch.partial_result`` raise ``TypeError``."""
    hostile.fail(
        grpc.StatusCode.FAILED_PRECONDITION,
        [
            info("schema_mismatch"),
            pb.PackError(code="schema_mismatch", partial=True, partial_result=partial),
        ],
    )
    exc = failure(client)
    assert isinstance(exc, SchemaMismatch)
    assert exc.partial_result == {}
    assert exc.envelope.partial is True


@pytest.mark.parametrize(
    "code", ["", "Not A Code", "x" * 1_000, "rate limited\n", "auth_failed; drop"]
)
@pytest.mark.parametrize("where", ["pack_error", "error_info"])
def test_a_code_that_is_no_code_becomes_internal_error(
    hostile: HostileServer, client: Client, code: str, where: str
) -> None:
    """A code no vocabulary could hold (empty, not snake_case, 1,000 characters) reached the
    caller as ``.code`` for it to branch on: it is ``internal_error`` (declared by every
    pack), permanent, and says what arrived."""
    details: list[Message] = [info(code)]
    if where == "pack_error":
        details.append(pb.PackError(code=code, message="boom"))
    hostile.fail(grpc.StatusCode.FAILED_PRECONDITION, details)
    exc = failure(client)
    if not code and where == "error_info":  # an ErrorInfo naming nothing: no answer we read
        assert isinstance(exc, TransportError) and exc.code == "adapter_failed"
        return
    assert isinstance(exc, InternalError)
    assert exc.code == "internal_error" and not exc.retryable
    assert len(exc.message) < 2_000


def test_an_unknown_rejection_reason_is_no_pack_code(
    hostile: HostileServer, client: Client
) -> None:
    """ErrorInfo from the control plane's domain with a reason outside the rejection
    vocabulary became a RetryableError with ``.code == "banana"`` and ``.pack ==
    "control_plane"``: refusals are a closed set on the caller's side too."""
    hostile.fail(grpc.StatusCode.UNAVAILABLE, [info("banana", True, domain="control_plane")])
    exc = failure(client)
    assert isinstance(exc, TransportError) and not isinstance(exc, PackCallError)
    assert exc.code == "adapter_failed" and not exc.retryable
    assert "banana" in exc.rejection.message


def test_overloaded_with_a_huge_delay_is_clamped(hostile: HostileServer, client: Client) -> None:
    hostile.fail(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        [info("overloaded", True, domain="control_plane"), retry_info(9 * 10**18)],
    )
    exc = failure(client)
    assert isinstance(exc, Overloaded) and exc.retry_after == MAX_RETRY_AFTER


def test_details_beyond_grpcs_metadata_limit(hostile: HostileServer, client: Client) -> None:
    """20 MB of details: gRPC refuses them (metadata hard limit); the caller gets a
    TransportError, not a hang or a crash."""
    hostile.fail(grpc.StatusCode.INTERNAL, raw_details=b"\x00" * 20_000_000)
    exc = failure(client)
    assert isinstance(exc, TransportError)


# -- replies that are not an outcome -------------------------------------------------------


@pytest.mark.parametrize("result", [b"{not json", b"[1, 2]", b"42", b"\xff\xfe"])
def test_a_result_that_is_not_a_json_object(
    hostile: HostileServer, client: Client, result: bytes
) -> None:
    """An OK reply whose ``result`` is not JSON escaped ``invoke`` as
    ``orjson.JSONDecodeError``; one that is a list came back as ``Outcome.result``.
    Either way the answer cannot be used: ``adapter_failed`` (whether the pack ran is
    unknown), not retryable."""
    hostile.reply(pb.InvokePackResponse(pack="x.y", result=result))
    exc = failure(client)
    assert isinstance(exc, TransportError) and not isinstance(exc, PackCallError)
    assert exc.code == "adapter_failed" and not exc.retryable


def test_a_reply_that_is_not_protobuf(hostile: HostileServer, client: Client) -> None:
    """An OK reply of garbage bytes was ``unavailable`` (retryable: "nothing ran") though
    the server answered: it is ``adapter_failed``."""
    hostile.reply(b"\xff\xff\xff")
    exc = failure(client)
    assert isinstance(exc, TransportError)
    assert exc.code == "adapter_failed" and not exc.retryable


def test_a_description_with_schemas_that_are_not_json(
    hostile: HostileServer, client: Client
) -> None:
    hostile.reply(pb.DescribePackResponse(name="x.y", input_schema=b"{not json"))
    with pytest.raises(TransportError) as info_:
        client.describe("x.y")
    assert info_.value.code == "adapter_failed"


async def test_the_async_client_decodes_the_same_way(hostile: HostileServer) -> None:
    hostile.reply(pb.InvokePackResponse(pack="x.y", result=b"{not json"))
    async with AsyncClient(hostile.target, timeout=10) as aio:
        with pytest.raises(TransportError) as caught:
            await aio.invoke("x.y", {})
        assert caught.value.code == "adapter_failed"
        hostile.fail(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            [
                info("rate_limited", True),
                pb.PackError(code="rate_limited", retryable=True, retry_after=1e19),
            ],
        )
        with pytest.raises(RateLimited) as limited:
            await aio.invoke("x.y", {})
        assert limited.value.retry_after == MAX_RETRY_AFTER


def test_a_pack_code_keeps_the_wires_flag(hostile: HostileServer, client: Client) -> None:
    """Pack-specific codes have no vocabulary on the caller's side: their flag is the
    server's."""
    hostile.fail(
        grpc.StatusCode.UNAVAILABLE,
        [info("quota_wait", True), pb.PackError(code="quota_wait", retryable=True)],
    )
    exc = failure(client)
    assert isinstance(exc, RetryableError) and exc.code == "quota_wait"
    hostile.fail(
        grpc.StatusCode.FAILED_PRECONDITION,
        [info("dependency_missing"), pb.PackError(code="dependency_missing")],
    )
    exc = failure(client)
    assert isinstance(exc, PermanentError) and exc.code == "dependency_missing"
