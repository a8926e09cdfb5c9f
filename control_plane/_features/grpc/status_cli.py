"""``packctl service-config`` and ``packctl decode``: the gRPC retry config and a status as JSON."""

from __future__ import annotations

import argparse
import base64
import binascii
import contextlib
import json
import re
import sys
from typing import Any

import grpc
import orjson
from google.protobuf import any_pb2, json_format, unknown_fields
from google.protobuf.message import DecodeError, Message
from google.rpc import error_details_pb2, status_pb2

from control_plane._features.grpc.status import service_config
from control_plane._kernel.hookspecs import hookimpl
from control_plane.v1 import control_plane_pb2 as pb

__all__ = ["add_commands", "decode_status"]

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


#: gRPC's codes by number, and by every spelling stock tools print: ``RESOURCE_EXHAUSTED``
#: (the enum), ``resource_exhausted`` (buf curl), ``ResourceExhausted`` (grpcurl).
_CODE_NAMES = {c.value[0]: c.name for c in grpc.StatusCode}
_CODES_BY_NAME = {name.replace("_", "").lower(): code for code, name in _CODE_NAMES.items()}
#: A trailer line as a tool prints it (buf curl -v: ``buf: < (#3) Grpc-Status-Details-Bin: …``).
_TRAILER_LINE = re.compile(rb"grpc-status-details-bin\s*:\s*(\S+)", re.I)
#: grpcurl's error report: ``ERROR:``, ``Code: Name``, ``Message: …``, ``Details:``, ``1)\t{…}``.
_GRPCURL_CODE = re.compile(r"^\s*Code:\s*(\w+)\s*$", re.M)
_GRPCURL_MESSAGE = re.compile(r"^\s*Message:\s?(.*)$", re.M)
_GRPCURL_DETAIL = re.compile(r"^\s*\d+\)\s*", re.M)


def decode_status(data: bytes) -> dict[str, Any]:
    """What a stock tool printed for a failed call, or the trailer's value, as JSON data:
    ``code``, ``status`` (the name), ``message`` and ``details`` (each with its ``@type``).

    Accepted: a ``grpc-status-details-bin`` value (base64 as a trailer carries it, or the
    binary ``google.rpc.Status``; a line naming the trailer, as ``buf curl -v`` prints it,
    anywhere in the text), ``buf curl``'s error JSON, and ``grpcurl``'s error report
    (plain or ``-format-error``). Anything else is :class:`NotAStatus`, including a
    message that parses as a Status only by accident (one detail's value, such as the
    base64 ``ErrorInfo`` buf prints)."""
    text = data.strip()
    trailer = _TRAILER_LINE.search(text)
    if trailer is not None:
        return _from_status(_status_bytes(trailer.group(1)))
    if text.startswith(b"{"):
        return _from_json(text)
    if _GRPCURL_CODE.search(text.decode("utf-8", "replace")) and b"Message:" in text:
        return _from_grpcurl(text.decode("utf-8", "replace"))
    return _from_status(_status_bytes(data))


def _from_status(raw: bytes) -> dict[str, Any]:
    status = status_pb2.Status()
    try:
        status.ParseFromString(raw)
    except DecodeError as exc:
        raise NotAStatus(f"not a google.rpc.Status ({exc})") from None
    if _foreign(status) or any(_foreign(d) or "/" not in d.type_url for d in status.details):
        raise NotAStatus(f"not a google.rpc.Status: its fields are not a Status's{_what(raw)}")
    if status.code == 0:
        raise NotAStatus(
            "not a google.rpc.Status of a failed call: it decodes to code 0 (OK), which no "
            f"error trailer carries{_what(raw)}"
        )
    return _result(status.code, status.message, [_detail(any_) for any_ in status.details])


def _foreign(message: Message) -> bool:
    """Whether ``message`` holds fields its type does not have (or of another wire type):
    bytes of another message that happened to parse."""
    return len(unknown_fields.UnknownFieldSet(message)) > 0


def _what(raw: bytes) -> str:
    """``"; it is a google.rpc.ErrorInfo …"`` when ``raw`` parses cleanly as a detail."""
    for name, cls in _DETAILS.items():
        message = cls()
        with contextlib.suppress(DecodeError):
            message.ParseFromString(raw)
            if message.ListFields() and not _foreign(message):
                return (
                    f"; it parses as {name}, one detail's value: give decode the whole "
                    "output of the tool (buf curl's JSON, grpcurl's report) or the "
                    "grpc-status-details-bin trailer"
                )
    return ""


def _result(code: int, message: str, details: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "code": code,
        "status": _CODE_NAMES.get(code, f"CODE_{code}"),
        "message": message,
        "details": details,
    }


def _code(value: object) -> int:
    """A status code as a tool prints it: a number or a name in any of its spellings."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << 31:
        return value
    if isinstance(value, str):
        found = _CODES_BY_NAME.get(value.replace("_", "").lower())
        if found:
            return found
    raise NotAStatus(f"not a status of a failed call: code {value!r} is not a gRPC error code")


def _from_json(text: bytes) -> dict[str, Any]:
    """buf curl's error JSON (details ``{"type", "value"}``, the value base64) or grpcurl
    ``-format-error``'s (details in the protobuf JSON mapping, with ``@type``)."""
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise NotAStatus(f"not a status: JSON that does not parse ({exc})") from None
    if not isinstance(doc, dict) or "code" not in doc:
        raise NotAStatus(
            "not a status: JSON without a code (buf curl prints code, message, details)"
        )
    details = doc.get("details") or []
    if not isinstance(details, list) or not isinstance(doc.get("message", ""), str):
        raise NotAStatus("not a status: its details are not a list, or its message not text")
    return _result(_code(doc["code"]), doc.get("message", ""), [_json_detail(d) for d in details])


def _json_detail(item: object) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise NotAStatus(f"not a status: a detail is not an object ({item!r:.60})")
    any_ = any_pb2.Any()
    if "@type" in item:  # the protobuf JSON mapping of an Any (grpcurl)
        try:
            json_format.ParseDict(item, any_)
        except json_format.ParseError as exc:
            raise NotAStatus(f"not a status: a detail does not parse ({exc})") from None
        return _detail(any_)
    name, value = item.get("type"), item.get("value")
    if not isinstance(name, str) or not isinstance(value, str):
        raise NotAStatus("not a status: a detail without type and value (buf curl's form)")
    try:
        any_.value = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise NotAStatus(f"not a status: the {name} detail's value is not base64") from None
    any_.type_url = name if "/" in name else f"{_TYPE_PREFIX}{name}"
    return _detail(any_)


def _from_grpcurl(text: str) -> dict[str, Any]:
    """grpcurl's report: ``Code: ResourceExhausted``, ``Message: …``, then each detail as
    ``N)`` and its JSON (one line, or indented over several)."""
    code = _GRPCURL_CODE.search(text)
    message = _GRPCURL_MESSAGE.search(text)
    assert code is not None  # decode_status checked
    details: list[dict[str, Any]] = []
    _, _, listed = text.partition("Details:")
    decoder = json.JSONDecoder()
    for marker in _GRPCURL_DETAIL.finditer(listed):
        try:
            item, _ = decoder.raw_decode(listed, marker.end())
        except ValueError as exc:
            raise NotAStatus(
                f"not a status: a detail grpcurl printed does not parse ({exc})"
            ) from None
        details.append(_json_detail(item))
    return _result(_code(code.group(1)), message.group(1) if message else "", details)


def _status_bytes(data: bytes) -> bytes:
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


@hookimpl
def add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``service-config`` and ``decode`` to ``packctl``."""
    config = subparsers.add_parser(
        "service-config",
        help="the retry service config for any gRPC library's channel, as JSON",
        description="Print the gRPC service config whose retry policy retries InvokePack on "
        "exactly the retryable failures (docs/grpc.md#retries-from-any-language).",
    )
    config.add_argument(
        "--compact", action="store_true", help="one line (for an environment variable)"
    )
    config.set_defaults(func=_service_config)
    decode = subparsers.add_parser(
        "decode",
        help="a failed call's status (stdin) as JSON: code, message, details",
        description="Read a failed call's google.rpc.Status from stdin -- the base64 of a "
        "grpc-status-details-bin trailer or the binary message, buf curl's error JSON, or "
        "grpcurl's error report -- and print its code, message and details (ErrorInfo, "
        "RetryInfo, BadRequest...) as JSON. Anything else, one detail's value included, "
        "is refused (exit 2).",
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
