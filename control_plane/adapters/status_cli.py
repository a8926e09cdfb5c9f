"""``packctl service-config`` and ``packctl decode``: the gRPC retry config and a status as JSON."""

from __future__ import annotations

import argparse
import base64
import binascii
import re
import sys
from typing import Any

import grpc
import orjson
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from google.rpc import error_details_pb2, status_pb2

from control_plane.v1 import control_plane_pb2 as pb
from control_plane.wire.status import service_config

__all__ = ["add_cli_commands", "decode_status"]

#: Most bytes ``decode`` reads: a trailer is at most a few KiB (gRPC's metadata limit).
MAX_INPUT = 1024 * 1024

_TYPE_PREFIX = "type.googleapis.com/"
#: Every ``google.rpc`` detail message and the control plane's own, by full name.
_DETAILS: dict[str, type[Message]] = {
    cls.DESCRIPTOR.full_name: cls
    for cls in (
        error_details_pb2.ErrorInfo,
        error_details_pb2.RetryInfo,
        error_details_pb2.DebugInfo,
        error_details_pb2.QuotaFailure,
        error_details_pb2.PreconditionFailure,
        error_details_pb2.BadRequest,
        error_details_pb2.RequestInfo,
        error_details_pb2.ResourceInfo,
        error_details_pb2.Help,
        error_details_pb2.LocalizedMessage,
        pb.PackError,
    )
}
_HEADER = re.compile(rb"^\s*grpc-status-details-bin\s*:\s*", re.I)
_BASE64 = re.compile(rb"^[A-Za-z0-9+/_=-]+$")


class NotAStatus(ValueError):
    """The input is not a ``google.rpc.Status`` (neither as base64 nor as binary)."""


def decode_status(data: bytes) -> dict[str, Any]:
    """``data`` (base64 or binary ``google.rpc.Status``) as JSON data: ``code``, ``status``
    (the name), ``message`` and ``details`` (each with its ``@type``)."""
    raw = _unwrap(data)
    status = status_pb2.Status()
    try:
        status.ParseFromString(raw)
    except DecodeError as exc:
        raise NotAStatus(f"not a google.rpc.Status ({exc})") from None
    names = {c.value[0]: c.name for c in grpc.StatusCode}
    return {
        "code": status.code,
        "status": names.get(status.code, f"CODE_{status.code}"),
        "message": status.message,
        "details": [_detail(any_) for any_ in status.details],
    }


def _unwrap(data: bytes) -> bytes:
    """The Status bytes: base64 text decoded (a trailer as printed), else ``data`` itself."""
    text = _HEADER.sub(b"", data.strip()).strip()
    compact = b"".join(text.split())
    if compact and _BASE64.fullmatch(compact):
        unpadded = compact.rstrip(b"=")
        padded = unpadded + b"=" * (-len(unpadded) % 4)
        alphabet = b"-_" if (b"-" in padded or b"_" in padded) else b"+/"
        try:
            return base64.b64decode(padded, altchars=alphabet, validate=True)
        except (binascii.Error, ValueError):
            pass  # not base64 after all: try the bytes as they are
    if not data:
        raise NotAStatus("no input on stdin (pipe a grpc-status-details-bin value into it)")
    return data


def _detail(any_: Any) -> dict[str, Any]:
    name = any_.type_url.removeprefix(_TYPE_PREFIX)
    cls = _DETAILS.get(name)
    if cls is not None:
        message = cls()
        if any_.Unpack(message):
            body = json_format.MessageToDict(message, preserving_proto_field_name=True)
            return {"@type": any_.type_url, **body}
    return {"@type": any_.type_url, "value_base64": base64.b64encode(any_.value).decode()}


def add_cli_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``service-config`` and ``decode`` to ``packctl``."""
    config = sub.add_parser(
        "service-config",
        help="the retry service config for any gRPC library's channel, as JSON",
        description="Print the gRPC service config whose retry policy retries InvokePack on "
        "exactly the retryable failures (docs/grpc.md#retries-from-any-language).",
    )
    config.add_argument(
        "--compact", action="store_true", help="one line (for an environment variable)"
    )
    config.set_defaults(func=_service_config)
    decode = sub.add_parser(
        "decode",
        help="a grpc-status-details-bin value (stdin) as JSON: code, message, details",
        description="Read a google.rpc.Status from stdin -- the base64 of a "
        "grpc-status-details-bin trailer, or the binary message -- and print its code, "
        "message and details (ErrorInfo, RetryInfo, BadRequest...) as JSON.",
    )
    decode.set_defaults(func=_decode)


def _service_config(args: argparse.Namespace) -> int:
    option = 0 if args.compact else orjson.OPT_INDENT_2
    sys.stdout.write(orjson.dumps(service_config(), option=option).decode() + "\n")
    return 0


def _decode(args: argparse.Namespace) -> int:
    data = sys.stdin.buffer.read(MAX_INPUT + 1)
    if len(data) > MAX_INPUT:
        print(f"packctl decode: more than {MAX_INPUT} bytes on stdin", file=sys.stderr)
        return 2
    try:
        decoded = decode_status(data)
    except NotAStatus as exc:
        print(f"packctl decode: {exc}", file=sys.stderr)
        return 2
    # sorted keys: a map (ErrorInfo.metadata) prints the same whatever its wire order
    option = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    sys.stdout.write(orjson.dumps(decoded, option=option).decode() + "\n")
    return 0
