"""The Python client: call a control plane and branch on typed exceptions."""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

import grpc
import orjson

from control_plane._features.grpc import status as wire
from control_plane._features.grpc.auth import ClientTls, channel_credentials
from control_plane._features.grpc.call_errors import (
    ERROR_CLASSES,
    ArtifactFailed,
    AuthFailed,
    DeadlineExceeded,
    InternalError,
    NetworkError,
    NotFound,
    Overloaded,
    PackCallError,
    PermanentError,
    RateLimited,
    RetryableError,
    SchemaMismatch,
    Timeout,
    TransportError,
    Unauthenticated,
    error_from_outcome,
    error_from_rpc,
    unreadable_answer,
)
from control_plane._features.grpc.retry import RetryPolicy
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.registry import LoadedPack, LoadFailure, Registry
from control_plane._kernel.validation import FailOn
from control_plane._kernel.vocabulary import CodeInfo
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

__all__ = [
    "DEFAULT_TARGET",
    "ERROR_CLASSES",
    "ArtifactFailed",
    "AsyncClient",
    "AuthFailed",
    "Client",
    "DeadlineExceeded",
    "InternalError",
    "NetworkError",
    "NotFound",
    "Overloaded",
    "PackCallError",
    "PackDescription",
    "PackInfo",
    "PackListing",
    "PermanentError",
    "RateLimited",
    "RetryPolicy",
    "RetryableError",
    "SchemaMismatch",
    "Timeout",
    "TransportError",
    "Unauthenticated",
    "error_from_outcome",
    "error_from_rpc",
]

DEFAULT_TARGET = "127.0.0.1:50051"
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
T = TypeVar("T")

# -- results ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PackInfo:
    """One loaded pack, as ``list_packs`` returns it."""

    name: str
    version: str
    summary: str
    codes: tuple[str, ...]
    validates: bool
    plugin: str


@dataclass(frozen=True, slots=True)
class PackListing:
    """The loaded packs and the load failures; iterating yields the packs."""

    packs: tuple[PackInfo, ...]
    failures: tuple[LoadFailure, ...] = ()

    def __iter__(self) -> Iterator[PackInfo]:
        return iter(self.packs)

    def __len__(self) -> int:
        return len(self.packs)

    def names(self) -> list[str]:
        return [p.name for p in self.packs]

    @classmethod
    def from_registry(cls, registry: Registry) -> PackListing:
        """The listing of an in-process registry (``packctl --local``): what ``ListPacks``
        answers for it (:func:`listing_message`), read as a client reads it."""
        return _listing(listing_message(registry))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data."""
        return {
            "packs": [{**dataclasses.asdict(p), "codes": list(p.codes)} for p in self.packs],
            "load_failures": [
                {"plugin": f.plugin, "pack": f.pack, "reason": f.reason} for f in self.failures
            ],
        }


@dataclass(frozen=True, slots=True)
class PackDescription:
    """One pack's effective schemas and vocabulary, as ``describe`` returns it."""

    name: str
    version: str
    summary: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    vocabulary: Mapping[str, CodeInfo]
    validates: bool
    docs: str = ""
    plugin: str = ""

    @classmethod
    def from_loaded(cls, loaded: LoadedPack) -> PackDescription:
        """The description of an in-process pack (``packctl --local``): what
        ``DescribePack`` answers for it (:func:`description_message`), read as a client
        reads it."""
        return _description(description_message(loaded), "")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data."""
        return {
            "name": self.name,
            "version": self.version,
            "summary": self.summary,
            "plugin": self.plugin,
            "validates": self.validates,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "vocabulary": [
                {
                    "code": info.code,
                    "title": info.title,
                    "description": info.description,
                    "retryable": info.retryable,
                    "recovery_hint": info.recovery_hint,
                    "grpc_status": info.grpc_status,
                    "absorbs": list(info.absorbs),
                    "baseline": info.baseline,
                }
                for info in self.vocabulary.values()
            ],
            "docs": self.docs,
        }


def listing_message(registry: Registry) -> pb.ListPacksResponse:
    """The ``ListPacks`` reply for ``registry``: every loaded pack and every load failure."""
    return pb.ListPacksResponse(
        packs=[
            pb.PackSummary(
                name=p.name,
                version=p.version,
                summary=p.pack.summary,
                codes=list(p.vocabulary),
                validates=p.validates,
                plugin=p.plugin,
            )
            for p in registry
        ],
        load_failures=[
            pb.LoadFailure(plugin=f.plugin, pack=f.pack or "", reason=f.reason)
            for f in registry.failures
        ],
    )


def description_message(loaded: LoadedPack) -> pb.DescribePackResponse:
    """The ``DescribePack`` reply for ``loaded``: its effective schemas and vocabulary, each
    code with the gRPC status its failures end with."""
    return pb.DescribePackResponse(
        name=loaded.name,
        version=loaded.version,
        summary=loaded.pack.summary,
        input_schema=orjson.dumps(loaded.input_schema),
        output_schema=orjson.dumps(loaded.output_schema),
        vocabulary=[
            pb.CodeEntry(
                code=code,
                title=info.title,
                description=info.description,
                retryable=info.retryable,
                recovery_hint=info.recovery_hint,
                grpc_status=wire.status_for(code, info.retryable).name,
                absorbs=list(info.absorbs),
                baseline=info.baseline,
            )
            for code, info in loaded.vocabulary.items()
        ],
        validates=loaded.validates,
        docs=loaded.pack.docs,
        plugin=loaded.plugin,
    )


def _listing(msg: pb.ListPacksResponse) -> PackListing:
    return PackListing(
        packs=tuple(
            PackInfo(p.name, p.version, p.summary, tuple(p.codes), p.validates, p.plugin)
            for p in msg.packs
        ),
        failures=tuple(LoadFailure(f.plugin, f.reason, f.pack or None) for f in msg.load_failures),
    )


def _schema(raw: bytes, which: str, target: str) -> dict[str, Any]:
    if not raw:
        return {}
    schema = wire.json_object(raw)
    if schema is None:
        raise unreadable_answer(
            f"OK with an {which} that is not a JSON object", grpc.StatusCode.OK, target
        )
    return schema


def _description(msg: pb.DescribePackResponse, target: str) -> PackDescription:
    vocabulary = {
        e.code: CodeInfo(
            code=e.code,
            title=e.title,
            description=e.description,
            retryable=e.retryable,
            recovery_hint=e.recovery_hint,
            grpc_status=e.grpc_status,
            baseline=e.baseline,
            absorbs=tuple(e.absorbs),
        )
        for e in msg.vocabulary
    }
    return PackDescription(
        name=msg.name,
        version=msg.version,
        summary=msg.summary,
        input_schema=_schema(msg.input_schema, "input schema", target),
        output_schema=_schema(msg.output_schema, "output schema", target),
        vocabulary=MappingProxyType(vocabulary),
        validates=msg.validates,
        docs=msg.docs,
        plugin=msg.plugin,
    )


def _request(
    pack: str,
    payload: Mapping[str, Any] | bytes | str | None,
    strict: bool,
    fail_on: FailOn,
    request_id: str | None,
) -> pb.InvokePackRequest:
    if payload is None:
        raw = b"{}"
    elif isinstance(payload, bytes):
        raw = payload
    elif isinstance(payload, str):
        raw = payload.encode()
    else:
        raw = orjson.dumps(payload)
    return pb.InvokePackRequest(
        pack=pack,
        input=raw,
        strict=strict,
        fail_on=pb.FAIL_ON_WARN if fail_on == "warn" else pb.FAIL_ON_FAIL,
        request_id=request_id or "",
    )


def _outcome(msg: pb.InvokePackResponse, target: str) -> Outcome:
    """The outcome of a successful reply; a ``result`` that is not a JSON object (not
    JSON, not UTF-8, a list) is no outcome: :func:`unreadable_answer`."""
    result = wire.json_object(msg.result) if msg.result else {}
    if result is None:
        raise unreadable_answer(
            "OK with a result that is not a JSON object", grpc.StatusCode.OK, target
        )
    return Outcome.model_construct(
        pack=msg.pack,
        version=msg.pack_version,
        request_id=msg.request_id,
        result=result,
        validation=wire.validation_from_proto(msg.validation)
        if msg.HasField("validation")
        else None,
        error=None,
    )


# -- clients ---------------------------------------------------------------------------


def _channel(
    api: Any,
    target: str,
    max_message_bytes: int,
    options: Sequence[tuple[str, Any]],
    token: str | None,
    tls: ClientTls | None,
    retry: RetryPolicy | None,
    given: Any = None,
) -> Any:
    """A channel of ``api`` (``grpc`` or ``grpc.aio``) to ``target`` (``given``, the
    caller's own, once the credentials are checked)."""
    creds = channel_credentials(target, token=token, tls=tls)
    if given is not None:
        return given
    opts = [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
        *options,
        *(tls.options() if tls else ()),
        *(retry.channel_options() if retry else ()),
    ]
    if creds is None:
        return api.insecure_channel(target, options=opts)
    return api.secure_channel(target, creds, options=opts)


@contextlib.contextmanager
def _raised(target: str, deadline: float | None, pack: str = "") -> Iterator[None]:
    """A failed call raised as its typed exception (:func:`error_from_rpc`)."""
    try:
        yield
    except grpc.RpcError as exc:
        raise error_from_rpc(exc, pack=pack, timeout=deadline, target=target) from None


class Client:
    """A blocking client of one control plane at ``target`` (``host:port``).

    ``token`` is sent as ``authorization: Bearer <token>`` (only over TLS or to a
    loopback target); ``tls`` (:class:`control_plane._features.grpc.auth.ClientTls`) gives the CA
    and, for mutual TLS, the client certificate and key.
    """

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        *,
        timeout: float | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        options: Sequence[tuple[str, Any]] = (),
        channel: grpc.Channel | None = None,
        token: str | None = None,
        tls: ClientTls | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        if channel is not None and retry is not None:
            raise ValueError("retry configures the channel: pass options to your own channel")
        self.target = target
        self.timeout = timeout
        self.retry = retry
        self._channel = _channel(
            grpc, target, max_message_bytes, options, token, tls, retry, channel
        )
        self._stub = pb_grpc.ControlPlaneServiceStub(self._channel)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _deadline(self, timeout: float | None) -> float | None:
        return timeout if timeout is not None else self.timeout

    def list_packs(self, *, timeout: float | None = None) -> PackListing:
        """The loaded packs and the plugins that failed to load."""
        deadline = self._deadline(timeout)
        with _raised(self.target, deadline):
            msg = self._stub.ListPacks(pb.ListPacksRequest(), timeout=deadline)
        return _listing(msg)

    def describe(self, name: str, *, timeout: float | None = None) -> PackDescription:
        """One pack's effective schemas and vocabulary; :class:`UnknownPack` if none."""
        deadline = self._deadline(timeout)
        with _raised(self.target, deadline, name):
            msg = self._stub.DescribePack(pb.DescribePackRequest(name=name), timeout=deadline)
        return _description(msg, self.target)

    def invoke(
        self,
        pack: str,
        input: Mapping[str, Any] | bytes | str | None = None,
        *,
        strict: bool = False,
        fail_on: FailOn = "fail",
        request_id: str | None = None,
        timeout: float | None = None,
        metadata: Sequence[tuple[str, str]] | None = None,
    ) -> Outcome:
        """Invoke ``pack``; the outcome on success, a typed exception on failure.

        ``input`` is a dict or JSON text/bytes. ``timeout`` is the call's deadline in
        seconds, which the pack inherits (and which covers every retry of a client made
        with ``retry``, all under one request id). ``metadata`` goes with the call, e.g.
        correlation ids ``("x-correlation-task_id", "t-17")`` for the server's error events.
        """
        deadline = self._deadline(timeout)
        rid = request_id or (uuid.uuid4().hex if self.retry is not None else None)
        request = _request(pack, input, strict, fail_on, rid)
        with _raised(self.target, deadline, pack):
            call_metadata = tuple(metadata) if metadata is not None else None
            reply = self._stub.InvokePack(request, timeout=deadline, metadata=call_metadata)
        return _outcome(reply, self.target)

    def health(self, service: str = "", *, timeout: float | None = 5.0) -> str:
        """The ``grpc.health.v1`` status name of ``service`` (``""`` = overall)."""
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        stub = health_pb2_grpc.HealthStub(self._channel)
        with _raised(self.target, timeout):
            # The stub object gets its Check attribute in __init__; the stubs miss it.
            check = stub.Check  # type: ignore[attr-defined]
            reply = check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


class AsyncClient:
    """The asyncio twin of :class:`Client` (``grpc.aio``); use it inside a running loop."""

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        *,
        timeout: float | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        options: Sequence[tuple[str, Any]] = (),
        token: str | None = None,
        tls: ClientTls | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.target = target
        self.timeout = timeout
        self.retry = retry
        self._channel = _channel(grpc.aio, target, max_message_bytes, options, token, tls, retry)
        self._stub = pb_grpc.ControlPlaneServiceStub(self._channel)

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _deadline(self, timeout: float | None) -> float | None:
        return timeout if timeout is not None else self.timeout

    async def list_packs(self, *, timeout: float | None = None) -> PackListing:
        """See :meth:`Client.list_packs`."""
        deadline = self._deadline(timeout)
        with _raised(self.target, deadline):
            msg = await self._stub.ListPacks(pb.ListPacksRequest(), timeout=deadline)
        return _listing(msg)

    async def describe(self, name: str, *, timeout: float | None = None) -> PackDescription:
        """See :meth:`Client.describe`."""
        deadline = self._deadline(timeout)
        with _raised(self.target, deadline, name):
            msg = await self._stub.DescribePack(pb.DescribePackRequest(name=name), timeout=deadline)
        return _description(msg, self.target)

    async def invoke(
        self,
        pack: str,
        input: Mapping[str, Any] | bytes | str | None = None,
        *,
        strict: bool = False,
        fail_on: FailOn = "fail",
        request_id: str | None = None,
        timeout: float | None = None,
        metadata: Sequence[tuple[str, str]] | None = None,
    ) -> Outcome:
        """See :meth:`Client.invoke`."""
        deadline = self._deadline(timeout)
        rid = request_id or (uuid.uuid4().hex if self.retry is not None else None)
        request = _request(pack, input, strict, fail_on, rid)
        with _raised(self.target, deadline, pack):
            reply = await self._stub.InvokePack(request, timeout=deadline, metadata=metadata)
        return _outcome(reply, self.target)
