"""The service registered so that a malformed request is ``INVALID_ARGUMENT``, not ``UNKNOWN``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from control_plane._features.grpc import status as wire
from control_plane._features.grpc.admission import DEFAULT_RETRY_AFTER
from control_plane._features.grpc.answers import AnswerBudget, answer_bytes, refused_status
from control_plane._features.grpc.drain import Drain
from control_plane._kernel.errors import FieldViolation, InvalidInput
from control_plane._kernel.limits import MAX_PACK_NAME, MAX_REQUEST_ID, clip
from control_plane.v1 import control_plane_pb2 as pb

__all__ = ["SERVICE_NAME", "Malformed", "add_service", "malformed_status"]

SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["ControlPlaneService"].full_name

Behavior = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]


class Malformed:
    """A request whose bytes did not decode as the method's message type."""

    __slots__ = ("message_type", "size")

    def __init__(self, message_type: str, size: int) -> None:
        self.message_type = message_type
        self.size = size


def malformed_status(request: Malformed) -> grpc.Status:
    """``INVALID_ARGUMENT`` for a request that is not a valid protobuf message."""
    rejected = InvalidInput(
        "",
        [
            FieldViolation(
                "request",
                f"the request ({request.size} bytes) is not a valid "
                f"{request.message_type} protobuf message",
            )
        ],
    )
    return wire.refusal(rejected)


def _deserializer(message: Any) -> Callable[[bytes], Any]:
    from_string = message.FromString
    name = str(message.DESCRIPTOR.full_name)

    def deserialize(data: bytes) -> Any:
        try:
            return from_string(data)
        except DecodeError:
            return Malformed(name, len(data))

    return deserialize


def _checked(
    behavior: Behavior, drain: Drain, budget: AnswerBudget | None, retry_after: float
) -> Behavior:
    async def method(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        if drain.picked_up():
            await drain.refuse(request, context)
        if type(request) is Malformed:
            await context.abort_with_status(malformed_status(request))
        if budget is None:
            return await behavior(request, context)
        if budget.full():
            await context.abort_with_status(
                refused_status(
                    budget.limit,
                    retry_after,
                    clip(getattr(request, "pack", ""), MAX_PACK_NAME),
                    clip(getattr(request, "request_id", ""), MAX_REQUEST_ID),
                )
            )
        reply = await behavior(request, context)
        budget.hold(context, reply)
        return reply

    return method


def add_service(
    servicer: Any,
    server: grpc.aio.Server,
    drain: Drain,
    budget: AnswerBudget | None = None,
    retry_after: float = DEFAULT_RETRY_AFTER,
) -> None:
    """Register ``servicer`` (``ControlPlaneService``) on ``server``: a request that does not
    decode is answered ``INVALID_ARGUMENT``; calls picked up once ``drain`` is closing are
    held and refused; every answer counts against ``budget`` until it is sent, and while it
    is full new calls are refused ``overloaded`` (:mod:`control_plane._features.grpc.answers`).
    Replies go out as they are when already serialized (an
    :class:`~control_plane._features.grpc.answers.Answer`)."""
    methods: dict[str, Any] = {
        "ListPacks": pb.ListPacksRequest,
        "DescribePack": pb.DescribePackRequest,
        "InvokePack": pb.InvokePackRequest,
    }
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            _checked(getattr(servicer, name), drain, budget, retry_after),
            request_deserializer=_deserializer(request),
            response_serializer=answer_bytes,
        )
        for name, request in methods.items()
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(SERVICE_NAME, handlers)
