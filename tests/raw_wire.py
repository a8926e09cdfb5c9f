"""A raw gRPC client for the adversarial suite: it decodes every byte it receives.

No project client code is involved: requests are serialized here, responses and failures
are taken apart here -- the status, the message, every trailer, the
``grpc-status-details-bin`` ``google.rpc.Status`` and every ``Any`` in it (each must be a
type we know and must decode). Anything that does not decode is a finding
(:attr:`Received.problems`). Also: starting ``packctl serve`` with the hostile plugin.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import orjson
from child_processes import tied
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2
from server_support import ROOT, TESTS_DIR

from control_plane.v1 import control_plane_pb2 as pb

SERVICE = "/control_plane.v1.ControlPlaneService/"
DETAILS_KEY = "grpc-status-details-bin"
_KNOWN = {
    "type.googleapis.com/google.rpc.ErrorInfo": error_details_pb2.ErrorInfo,
    "type.googleapis.com/google.rpc.RetryInfo": error_details_pb2.RetryInfo,
    "type.googleapis.com/google.rpc.BadRequest": error_details_pb2.BadRequest,
    "type.googleapis.com/control_plane.v1.PackError": pb.PackError,
}


@dataclass
class Received:
    """Everything one call brought back, decoded."""

    status: grpc.StatusCode
    message: str = ""
    trailers: list[tuple[str, str | bytes]] = field(default_factory=list)
    result: Any = None
    error_info: error_details_pb2.ErrorInfo | None = None
    retry_delay: float | None = None
    bad_request: error_details_pb2.BadRequest | None = None
    pack_error: pb.PackError | None = None
    details_bytes: int = 0
    problems: list[str] = field(default_factory=list)
    #: A successful reply's validation (``None`` without one).
    validation: pb.Validation | None = None

    @property
    def code(self) -> str | None:
        """The pack code the caller got (``None``: none arrived)."""
        if self.status == grpc.StatusCode.OK:
            return "ok"
        if self.error_info is None:
            return None
        return self.error_info.metadata.get("code") or None

    @property
    def metadata(self) -> dict[str, str]:
        return dict(self.error_info.metadata) if self.error_info is not None else {}


def _identity(data: bytes) -> bytes:
    return data


def decode_failure(received: Received, err: grpc.RpcError) -> None:
    """Fill ``received`` from a failed call, decoding every trailer and detail."""
    received.status = err.code()  # type: ignore[attr-defined]
    received.message = err.details() or ""  # type: ignore[attr-defined]
    received.trailers = list(err.trailing_metadata() or ())  # type: ignore[attr-defined]
    for key, value in received.trailers:
        if key.endswith("-bin") and not isinstance(value, bytes):
            received.problems.append(f"binary trailer {key} is not bytes")
        if not key.endswith("-bin") and not isinstance(value, str):
            received.problems.append(f"text trailer {key} is not text")
        if key != DETAILS_KEY:
            continue
        assert isinstance(value, bytes)
        received.details_bytes = len(value)
        try:
            rich = status_pb2.Status.FromString(value)
        except DecodeError as exc:
            received.problems.append(f"details do not decode: {exc}")
            continue
        if rich.code != received.status.value[0]:
            received.problems.append(f"details code {rich.code} != status {received.status}")
        if rich.message != received.message:
            received.problems.append("details message differs from the status message")
        for detail in rich.details:
            kind = _KNOWN.get(detail.type_url)
            if kind is None:
                received.problems.append(f"unknown detail {detail.type_url}")
                continue
            try:
                msg = kind.FromString(detail.value)
            except DecodeError as exc:
                received.problems.append(f"{detail.type_url} does not decode: {exc}")
                continue
            if isinstance(msg, error_details_pb2.ErrorInfo):
                received.error_info = msg
            elif isinstance(msg, error_details_pb2.RetryInfo):
                received.retry_delay = msg.retry_delay.seconds + msg.retry_delay.nanos / 1e9
            elif isinstance(msg, error_details_pb2.BadRequest):
                received.bad_request = msg
            else:
                received.pack_error = msg
                for raw in (msg.partial_result, *(c.expected for c in msg.checks)):
                    if raw:
                        try:
                            orjson.loads(raw)
                        except orjson.JSONDecodeError:
                            received.problems.append("a JSON field of PackError is not JSON")


def call_raw(
    channel: grpc.Channel,
    method: str,
    request: bytes,
    *,
    timeout: float = 30,
    metadata: tuple[tuple[str, str], ...] = (),
) -> Received:
    """Call ``method`` with raw ``request`` bytes; decode whatever comes back."""
    stub = channel.unary_unary(
        method if method.startswith("/") else SERVICE + method,
        request_serializer=_identity,
        response_deserializer=_identity,
    )
    received = Received(status=grpc.StatusCode.OK)
    try:
        body, call = stub.with_call(request, timeout=timeout, metadata=metadata or None)
    except grpc.RpcError as err:
        decode_failure(received, err)
        return received
    received.trailers = list(call.trailing_metadata() or ())
    try:
        response = pb.InvokePackResponse.FromString(body)
        received.result = orjson.loads(response.result) if response.result else None
        if response.HasField("validation"):
            received.validation = response.validation
    except (DecodeError, orjson.JSONDecodeError) as exc:
        received.problems.append(f"response does not decode: {exc}")
    return received


def invoke(
    channel: grpc.Channel,
    pack: str,
    doc: dict[str, Any],
    *,
    strict: bool = False,
    timeout: float = 30,
) -> Received:
    request = pb.InvokePackRequest(pack=pack, input=orjson.dumps(doc), strict=strict)
    return call_raw(channel, "InvokePack", request.SerializeToString(), timeout=timeout)


def vocabulary(channel: grpc.Channel, pack: str) -> set[str]:
    """The pack's effective vocabulary, as DescribePack states it."""
    stub = channel.unary_unary(
        SERVICE + "DescribePack",
        request_serializer=pb.DescribePackRequest.SerializeToString,
        response_deserializer=pb.DescribePackResponse.FromString,
    )
    described = stub(pb.DescribePackRequest(name=pack), timeout=30)
    return {entry.code for entry in described.vocabulary}


# -- packctl serve with the hostile plugin ------------------------------------------------


def serve_env(db: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), str(TESTS_DIR), env.get("PYTHONPATH", "")) if p
    )
    env["CAPABILITY_PACKS_PLUGINS"] = "hostilepacks,packs.http_fetch"
    env["CAPABILITY_PACKS_INCIDENT_DB"] = str(db)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


class Serve:
    """A real ``packctl serve --plugin hostilepacks`` in its own process group."""

    def __init__(
        self,
        db: Path,
        *args: str,
        env: dict[str, str] | None = None,
        plugin: str = "hostilepacks",
        cwd: Path = ROOT,
    ) -> None:
        self.db = db
        self.proc = subprocess.Popen(
            tied(
                [
                    sys.executable,
                    "-m",
                    "control_plane._features.cli.cli",
                    "serve",
                    "--address",
                    "127.0.0.1:0",
                    "--plugin",
                    plugin,
                    "--log-level",
                    "error",
                    *args,
                ]
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env or serve_env(db),
            cwd=cwd,
            start_new_session=True,  # its own process group: killpg reaches its workers
        )
        assert self.proc.stderr is not None
        lines: list[str] = []
        deadline = time.monotonic() + 60
        self.target = ""
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            match = re.search(r"serving \d+ pack\(s\) on (127\.0\.0\.1:\d+)", line)
            if match:
                self.target = match.group(1)
                break
        if not self.target:
            self.kill()
            raise AssertionError("packctl serve did not start:\n" + "".join(lines))
        self.stderr = lines
        # Keep reading its logs: a full pipe would block the server on its next log line.
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        self.channel = grpc.insecure_channel(self.target)

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if len(self.stderr) < 10_000:
                self.stderr.append(line)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> str:
        """SIGTERM (to the server only), then its stderr."""
        if hasattr(self, "channel"):
            self.channel.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
        self._reader.join(10)
        return "".join(self.stderr)

    def __enter__(self) -> Serve:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.kill()
