"""The gRPC server (``grpc.aio``): ``ControlPlaneService`` over a runtime, with health and
reflection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

import grpc
import orjson
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from control_plane._features.grpc import status as wire
from control_plane._features.grpc.admission import DEFAULT_RETRY_AFTER, AdmissionLimits, guard
from control_plane._features.grpc.answers import (
    DEFAULT_ANSWER_BUDGET,
    Answer,
    AnswerBudget,
    close_connection,
    trim_freed_memory,
)
from control_plane._features.grpc.auth import BearerAuthInterceptor, ServerTls, TokenAuth
from control_plane._features.grpc.client import description_message, listing_message
from control_plane._features.grpc.connections import ConnectionLimits, grpc_server_options
from control_plane._features.grpc.deadline import deadline_budget
from control_plane._features.grpc.decoding import add_service
from control_plane._features.grpc.drain import Drain, drain_window
from control_plane._features.grpc.loop_health import LoopHealth
from control_plane._features.observability.events import correlation_from_metadata, one_line
from control_plane._kernel.bounds import safe_text
from control_plane._kernel.errors import RequestRejected
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.limits import MAX_PACK_NAME, MAX_REQUEST_ID, ConfigError, clip
from control_plane._kernel.outcome import ErrorEnvelope, Outcome
from control_plane._kernel.redact import scrub, scrub_data
from control_plane._kernel.registry import Registry
from control_plane._kernel.rejection import Rejection
from control_plane._kernel.returned import LargeResult, encode_result
from control_plane._kernel.vocabulary import INTERNAL_ERROR
from control_plane._runtime.log_queue import QueuedStreamHandler
from control_plane._runtime.runtime import Runtime, build_runtime
from control_plane.v1 import control_plane_pb2 as pb

if TYPE_CHECKING:
    from control_plane._features.observability.observability import Observability
    from control_plane._features.observability.tracing import Tracing

__all__ = [
    "DEFAULT_ADDRESS",
    "DEFAULT_GRACE",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "SERVICE_NAME",
    "ControlPlaneServicer",
    "JsonFormatter",
    "KeyValueFormatter",
    "PackServer",
    "ServerOptions",
    "configure_logging",
    "create_server",
    "deadline_budget",
    "serve",
]

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_GRACE = 10.0
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["ControlPlaneService"].full_name

logger = logging.getLogger("capability_packs.server")
call_logger = logging.getLogger("capability_packs.calls")

_FAIL_ON: Mapping[int, Any] = {pb.FAIL_ON_WARN: "warn"}


# -- structured logs -------------------------------------------------------------------

_LOG_FIELDS = (
    "event",
    "request_id",
    "pack",
    "version",
    "code",
    "status",
    "reference_id",
    "elapsed_ms",
    "peer",
    "plugin",
    "address",
    "port",
    "loop",
    "reason",
)


#: Longest log message (after scrubbing; the rest is cut with a marker).
_MAX_LOG_TEXT = 8192


def _record_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The log channel's one outgoing path: every string of a record (its message, with
    the arguments formatted in, and every extra field) scrubbed, bounded."""
    out: dict[str, Any] = {
        "ts": round(record.created, 6),
        "level": record.levelname.lower(),
        "logger": record.name,
        "msg": scrub(record.getMessage(), _MAX_LOG_TEXT),
    }
    for key in _LOG_FIELDS:
        value = record.__dict__.get(key)
        if value is not None:
            if type(value) is str:
                out[key] = scrub(value, _MAX_LOG_TEXT)
            elif isinstance(value, int | float):
                out[key] = value
            else:
                out[key] = scrub_data(value)
    if record.exc_info and record.exc_info[0] is not None:
        out["exc_type"] = record.exc_info[0].__name__
    return out


class JsonFormatter(logging.Formatter):
    """One JSON object per line (exceptions reduced to their type: texts may hold secrets)."""

    def format(self, record: logging.LogRecord) -> str:
        return one_line(orjson.dumps(_record_fields(record), default=str)).decode()


class KeyValueFormatter(logging.Formatter):
    """``key=value`` pairs, one record per line."""

    def format(self, record: logging.LogRecord) -> str:
        parts = []
        for key, value in _record_fields(record).items():
            text = str(value)
            if not text or not text.isprintable() or any(c in text for c in ' "='):
                text = _quoted(text)
            parts.append(f"{key}={text}")
        return " ".join(parts)


def _quoted(text: str) -> str:
    """``text`` as a JSON string in which no character can end or start a line: JSON
    escapes the C0 controls; every other unprintable character (NEL, U+2028, U+2029,
    the C1 controls, ...) -- which some log readers also take for a line break -- is
    escaped here too. A value with a newline cannot forge a log line."""
    quoted = orjson.dumps(text).decode()
    if quoted.isprintable():
        return quoted
    return "".join(c if c.isprintable() else _escape(c) for c in quoted)


def _escape(c: str) -> str:
    """``c`` as a JSON ``\\uXXXX`` escape (a surrogate pair past the BMP)."""
    code = ord(c)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


class ScrubbingFormatter(logging.Formatter):
    """Other libraries' log lines (grpc, asyncio), tracebacks included, scrubbed whole."""

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))


def _shown(obj: object) -> str:
    """``repr(obj)`` for a report, bounded; a hostile ``__repr__`` gives a fixed text."""
    try:
        text = repr(obj)
    # Hostile input: the object of an "Exception ignored" report may be anything.
    except BaseException:  # noqa: BLE001
        text = f"<unprintable {type(obj).__name__}>"
    return safe_text(text, 2000)


def _scrubbing_excepthook(stream: TextIO | None) -> None:
    """Uncaught exceptions (the main thread's, a thread's) and exceptions Python can only
    report (a failing ``__del__``, a callback of a collected object, gRPC's Cython layer:
    ``sys.unraisablehook``) print scrubbed tracebacks."""

    def write(exc: BaseException | None, head: str = "") -> None:
        if exc is None:
            return
        text = head + "".join(traceback.format_exception(exc))
        (stream if stream is not None else sys.stderr).write(scrub(text))

    def on_thread(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is not SystemExit:
            write(args.exc_value)

    def on_unraisable(args: sys.UnraisableHookArgs) -> None:
        head = args.err_msg or "Exception ignored in"
        if args.object is not None:
            head = f"{head}: {_shown(args.object)}"
        write(args.exc_value, head + "\n")

    sys.excepthook = lambda kind, exc, tb: write(exc)
    threading.excepthook = on_thread
    sys.unraisablehook = on_unraisable


def configure_logging(
    fmt: str = "json", level: str | int = "INFO", stream: TextIO | None = None
) -> None:
    """Send ``capability_packs.*`` logs to ``stream`` (stderr) as JSON lines or key=value.

    Everything else the process prints goes through the scrubber too: other libraries'
    log records (a root handler, when none is configured) and uncaught exceptions'
    tracebacks.
    """
    # Written by a thread of its own through a bounded queue: a stderr nobody drains
    # drops (and counts) lines instead of stopping the server (runtime.log_queue).
    handler = QueuedStreamHandler(stream)
    handler.setFormatter(JsonFormatter() if fmt == "json" else KeyValueFormatter())
    root = logging.getLogger("capability_packs")
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level if isinstance(level, int) else level.upper())
    root.propagate = False
    top = logging.getLogger()
    if not top.handlers:
        other = QueuedStreamHandler(stream)
        other.setFormatter(ScrubbingFormatter("%(levelname)s %(name)s: %(message)s"))
        top.addHandler(other)
    # Warnings (``warnings.warn`` in a pack or a library) as log records of ``py.warnings``:
    # through the handlers above, so scrubbed, instead of printed raw by the warnings module.
    logging.captureWarnings(True)
    _scrubbing_excepthook(stream)


# -- the service -----------------------------------------------------------------------


class ControlPlaneServicer:
    """``ControlPlaneService`` over one :class:`Invoker` (registered by
    :func:`~control_plane._features.grpc.decoding.add_service`). Its replies go to grpc serialized
    (:class:`~control_plane._features.grpc.answers.Answer`), so it is not the generated servicer
    class, whose methods return messages."""

    def __init__(
        self,
        invoker: Invoker,
        *,
        max_send_bytes: int,
        observability: Observability | None = None,
    ) -> None:
        self.invoker = invoker
        self.max_send_bytes = max_send_bytes
        #: Metrics, error events and incidents (``None``: only what the invoker does).
        self.observability = observability
        registry = invoker.registry
        # Serialized once: each call hands grpc the same bytes.
        self._list = Answer(listing_message(registry).SerializeToString())
        self._describe = {
            p.name: Answer(description_message(p).SerializeToString(), p.version) for p in registry
        }

    async def ListPacks(
        self, request: pb.ListPacksRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Answer:
        """Every loaded pack and every load failure (built once)."""
        return self._list

    async def DescribePack(
        self, request: pb.DescribePackRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Answer:
        """One pack's effective schemas and vocabulary (built once)."""
        found = self._describe.get(request.name)
        if found is None:
            try:
                self.invoker.registry.get(request.name)
            except RequestRejected as exc:
                await context.abort_with_status(wire.refusal(exc))
            raise AssertionError("unreachable")  # pragma: no cover
        return found

    async def InvokePack(
        self, request: pb.InvokePackRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Answer:
        """Run one pack; failures end with the mapped status and the rich details."""
        started = time.perf_counter()
        name = request.pack
        obs = self.observability
        try:
            remaining = context.time_remaining()
            # The caller's correlation ids go on the call's events: the invoker reads them.
            outcome = await self.invoker.invoke(
                name,
                request.input or b"{}",
                strict=request.strict,
                fail_on=_FAIL_ON.get(request.fail_on, "fail"),
                request_id=request.request_id or None,
                timeout=None if remaining is None else deadline_budget(remaining),
                metadata=context.invocation_metadata(),
            )
            if outcome.error is None:
                if type(outcome.result) is LargeResult:
                    result = await _encode_large(outcome)
                    outcome = _freed_later(outcome)
                else:
                    result = orjson.dumps(outcome.result)
                reply = _reply(outcome, result)
                if len(reply) > self.max_send_bytes:  # the checks count too
                    await self._too_large(outcome, len(reply), context)
                if call_logger.isEnabledFor(logging.DEBUG):
                    self._log(logging.DEBUG, "ok", outcome, "OK", started)
                return Answer(reply, outcome.version)
        except RequestRejected as exc:
            rid = clip(request.request_id, MAX_REQUEST_ID)  # echoed: keep it bounded
            call_logger.info(
                "rejected",
                extra={
                    "event": "rejected",
                    "request_id": rid or None,
                    "pack": clip(name, MAX_PACK_NAME),
                    "status": exc.rejection.grpc_status,
                    "reason": exc.reason,
                    "elapsed_ms": _ms(started),
                },
            )
            if obs is not None and not exc.reported:  # the invoker's own: reported there
                correlation = correlation_from_metadata(context.invocation_metadata())
                obs.emit_rejection(exc, request_id=rid or None, correlation=correlation)
            await context.abort_with_status(wire.refusal(exc, rid))
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        # The wire boundary: anything else is a bug; never let its text reach the caller.
        except Exception as exc:  # noqa: BLE001
            outcome = self._internal(name, request.request_id, exc)
            if obs is not None:
                obs.record_outcome(outcome, time.perf_counter() - started)
        # Total: every outcome encodes (bounded, made encodable), else internal_error.
        encoded = wire.encode_failure(
            outcome, reference=lambda exc: self._encoding_incident(outcome, exc)
        )
        if encoded.last_resort:
            outcome = self._last_resort(outcome, encoded, started)
        # internal_error at WARNING; a classified, declared failure at DEBUG only: its error
        # event (same facts, plus the message) is already one line on the event stream.
        error = outcome.error
        internal = error is not None and error.code == INTERNAL_ERROR
        level = logging.WARNING if internal else logging.DEBUG
        if call_logger.isEnabledFor(level):
            self._log(level, "failed", outcome, encoded.status.code.name, started)
        await context.abort_with_status(encoded.status)
        raise AssertionError("unreachable")  # pragma: no cover

    def _encoding_incident(self, outcome: Outcome, exc: BaseException) -> str:
        return self.invoker.incidents.record(
            exc,
            pack=outcome.pack,
            request_id=outcome.request_id,
            kind="encoding",
            summary=f"the {outcome.code} outcome could not be encoded; sent internal_error",
        )

    def _last_resort(self, outcome: Outcome, encoded: wire.Encoded, started: float) -> Outcome:
        """What the caller got instead of ``outcome``: recorded in metrics and events."""
        sent = Outcome.build(
            outcome.pack,
            outcome.version,
            outcome.request_id,
            error=ErrorEnvelope.internal(encoded.reference_id or None),
        )
        if self.observability is not None:
            self.observability.record_outcome(sent, time.perf_counter() - started)
        return sent

    async def _too_large(
        self, outcome: Outcome, size: int, context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        message = (
            f"the result of {outcome.pack} is {size} bytes, over the server's maximum message "
            f"size of {self.max_send_bytes} bytes (packctl serve --max-message-bytes)"
        )
        rejection = Rejection.of(
            "result_too_large", message, pack=outcome.pack, request_id=outcome.request_id
        )
        call_logger.warning(
            rejection.message,
            extra={
                "event": "too_large",
                "request_id": rejection.request_id,
                "pack": rejection.pack,
                "status": rejection.grpc_status,
            },
        )
        if self.observability is not None:
            self.observability.emit_rejection(rejection)
        await context.abort_with_status(wire.refusal(rejection))

    def _internal(self, name: str, request_id: str, exc: BaseException) -> Outcome:
        rid = request_id or "-"
        ref = self.invoker.incidents.record(
            exc, pack=name, request_id=rid, kind="server", summary="control plane failure"
        )
        registry = self.invoker.registry
        version = registry.get(name).version if name in registry else ""
        return Outcome.build(name[:MAX_PACK_NAME], version, rid, error=ErrorEnvelope.internal(ref))

    @staticmethod
    def _log(level: int, event: str, outcome: Outcome, status: str, started: float) -> None:
        error = outcome.error
        call_logger.log(
            level,
            "%s %s %s",
            outcome.pack,
            event,
            error.code if error is not None else "ok",
            extra={
                "event": event,
                "request_id": outcome.request_id,
                "pack": outcome.pack,
                "version": outcome.version,
                "code": error.code if error is not None else None,
                "status": status,
                "reference_id": error.reference_id if error is not None else None,
                "elapsed_ms": _ms(started),
            },
        )


#: The key of ``InvokePackResponse.result`` (field 1, length-delimited).
_RESULT_KEY = b"\x0a"


def _reply(outcome: Outcome, result: bytes) -> bytes:
    """The serialized ``InvokePackResponse`` of a success: ``result`` is copied once, into
    the reply, and not into a protobuf message first (whose serialization would be a
    third copy, held beside it while the answer waits to be sent)."""
    rest = pb.InvokePackResponse(
        pack=outcome.pack, pack_version=outcome.version, request_id=outcome.request_id
    )
    if outcome.validation is not None:
        rest.validation.CopyFrom(wire.validation_to_proto(outcome.validation))
    if not result:
        return rest.SerializeToString()
    return b"".join((_RESULT_KEY, _varint(len(result)), result, rest.SerializeToString()))


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


async def _encode_large(outcome: Outcome) -> bytes:
    """A large result as JSON bytes, in a thread and piece by piece
    (:func:`~control_plane._kernel.returned.encode_result`): encoding an 8 MiB result on the
    loop held it for a quarter of a second on a busy machine."""
    return await asyncio.to_thread(encode_result, outcome.result)


def _freed_later(outcome: Outcome) -> Outcome:
    """``outcome`` without its result, the one with it handed to a thread to be freed:
    freeing a large result's million objects on the loop held it for 0.15-0.25 s. The
    thread is handed it once the loop is done with this step of the call (the caller's
    references are gone by then)."""
    box = [outcome]
    asyncio.get_running_loop().call_soon(_free_in_thread, box)
    return outcome.model_copy(update={"result": {}})


def _free_in_thread(box: list[Outcome]) -> None:
    try:
        asyncio.get_running_loop().run_in_executor(None, box.clear)
    except RuntimeError:  # the executor is shut down (the server is stopping): here
        box.clear()


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


# -- server lifecycle ------------------------------------------------------------------


class PackServer:
    """A started-or-not control plane server: the ``grpc.aio`` server plus its parts."""

    def __init__(
        self,
        server: grpc.aio.Server,
        servicer: ControlPlaneServicer,
        health_servicer: health.aio.HealthServicer,
        *,
        runtime: Runtime,
        address: str,
        port: int,
        owns_runtime: bool,
        drain: Drain,
        answers: AnswerBudget | None = None,
    ) -> None:
        self.grpc_server = server
        self.servicer = servicer
        self.health = health_servicer
        #: Holds, then refuses, the calls picked up while stopping (:meth:`stop`).
        self.drain = drain
        #: Bytes of answers held unsent (``None``: no budget).
        self.answers = answers
        self.runtime = runtime
        self.address = address
        self.port = port
        self._owns_runtime = owns_runtime
        self._stopped = False
        #: The loop's longest stall and stall count (``event_loop_*`` metrics).
        self.loop_health = LoopHealth()

    @property
    def invoker(self) -> Invoker:
        return self.servicer.invoker

    @property
    def registry(self) -> Registry:
        return self.servicer.invoker.registry

    async def start(self) -> None:
        """Start serving; health turns ``SERVING`` (failed packs ``NOT_SERVING``)."""
        serving = health_pb2.HealthCheckResponse.SERVING
        not_serving = health_pb2.HealthCheckResponse.NOT_SERVING
        await self.health.set("", serving)
        await self.health.set(SERVICE_NAME, serving)
        for name in self.registry.names():
            await self.health.set(name, serving)
        for failure in self.registry.failures:
            if failure.pack and failure.pack not in self.registry:
                await self.health.set(failure.pack, not_serving)
        await self._follow_pack_health()
        self.loop_health.start()
        observability = self.runtime.observability
        if observability is not None:
            observability.metrics.watch_loop(self.loop_health.read)
            if self.answers is not None:
                observability.metrics.watch_answers(self.answers.read)
        await self.grpc_server.start()
        logger.info(
            "serving %d pack(s) on port %d",
            len(self.registry),
            self.port,
            extra={
                "event": "serving",
                "address": self.address,
                "port": self.port,
                # the loop's package: "asyncio" or "uvloop" (packctl serve --loop)
                "loop": type(asyncio.get_running_loop()).__module__.partition(".")[0],
            },
        )

    async def _follow_pack_health(self) -> None:
        """Per-pack health from the runtime's sources that change it (the MCP servers):
        set now, then followed."""
        sources = self.runtime.pack_health_sources
        if not sources:
            return
        loop = asyncio.get_running_loop()
        serving = health_pb2.HealthCheckResponse.SERVING
        not_serving = health_pb2.HealthCheckResponse.NOT_SERVING

        async def apply(pack: str, up: bool) -> None:
            if not self._stopped:
                await self.health.set(pack, serving if up else not_serving)

        def changed(pack: str, up: bool) -> None:
            # From the source's thread; the loop may be closing at shutdown.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(lambda: asyncio.ensure_future(apply(pack, up)))

        for source in sources:
            for pack, up in source.pack_health().items():
                await apply(pack, up)
            source.watch(changed)

    async def stop(self, grace: float | None = DEFAULT_GRACE) -> None:
        """Refuse new calls, let in-flight ones finish within ``grace`` seconds, stop.

        First the drain (:mod:`control_plane._features.grpc.drain`, part of the grace period): calls
        picked up from then on are held until the transport's queue is empty; then the
        transport stops and the held calls are refused (``UNAVAILABLE``, did not run).
        """
        if not self._stopped:
            self._stopped = True
            await self.health.enter_graceful_shutdown()
            logger.info("stopping (grace %ss)", grace, extra={"event": "stopping"})
            window = drain_window(grace)
            if window and grace is not None:
                self.drain.begin()
                grace = max(0.0, grace - await self.drain.settle(window))
        stopping = asyncio.ensure_future(self.grpc_server.stop(grace))
        # The stop's first step shuts the transport down (GOAWAY) before it waits, so the
        # refused callers cannot send their next call on this connection.
        await asyncio.sleep(0)
        self.drain.release()
        await stopping
        await self.loop_health.stop()
        if self.drain.refused:
            logger.info(
                "refused %d call(s) that came while stopping (UNAVAILABLE, not run)",
                self.drain.refused,
                extra={"event": "stopped_refusing"},
            )
        if self._owns_runtime:
            self.runtime.close()

    async def wait_for_termination(self, timeout: float | None = None) -> bool:
        """Block until the server stops; ``True`` if it did within ``timeout``."""
        return bool(await self.grpc_server.wait_for_termination(timeout))


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """How the gRPC server listens and what it admits; how packs run is the Runtime's.

    ``max_message_bytes`` caps requests and responses; ``max_concurrent_rpcs`` is grpc's
    own cap; ``connections`` bounds what one connection may hold (streams, age, idle,
    keepalive); ``grpc_options`` are extra channel arguments, overriding those; ``limits``
    sets in-flight limits (``OVERLOADED`` rejections); ``max_input_bytes`` caps the input
    document; ``auth`` requires bearer tokens; ``tls`` serves TLS (mutual TLS with a client CA). See
    docs/reliability.md.
    """

    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    max_concurrent_rpcs: int | None = None
    grpc_options: tuple[tuple[str, Any], ...] = ()
    limits: AdmissionLimits | None = None
    max_input_bytes: int | None = None
    auth: TokenAuth | None = None
    tls: ServerTls | None = None
    #: One OpenTelemetry span per call (:mod:`control_plane._features.grpc.tracing`); the caller
    #: closes it.
    tracing: Tracing | None = None
    #: ``SO_REUSEPORT``: several processes share the port (the workers of ``packctl serve
    #: --workers N``, :mod:`control_plane._features.grpc.workers`). Off by default, so a second
    #: server on a taken port fails to bind instead of silently joining it.
    reuse_port: bool = False
    #: What one connection may make the server hold
    #: (:mod:`control_plane._features.grpc.connections`).
    connections: ConnectionLimits = field(default_factory=ConnectionLimits)
    #: Bytes of answers held unsent over all connections
    #: (:mod:`control_plane._features.grpc.answers`); ``None`` turns the budget off.
    answer_budget: int | None = DEFAULT_ANSWER_BUDGET


def _interceptors(auth: TokenAuth | None, tracing: Tracing | None) -> list[Any] | None:
    """Tracing first (so refused calls get a span too), then authentication."""
    chain: list[Any] = []
    if tracing is not None:
        from control_plane._features.grpc.tracing import TracingInterceptor

        chain.append(TracingInterceptor(tracing))
    if auth is not None:
        chain.append(BearerAuthInterceptor(auth))
    return chain or None


def create_server(
    address: str = DEFAULT_ADDRESS,
    runtime: Runtime | None = None,
    options: ServerOptions | None = None,
) -> tuple[PackServer, int]:
    """Build a control plane bound to ``address``; returns the server and its port.

    Call it from the event loop that will run the server, then ``await server.start()``.
    Packs, isolation, deadlines and observability come from ``runtime`` (by default
    :func:`~control_plane._runtime.runtime.build_runtime` with the built-in and
    entry-point plugins, owned and closed by the server); ``options`` say how to listen.
    """
    options = options if options is not None else ServerOptions()
    budget_bytes, max_message_bytes = options.answer_budget, options.max_message_bytes
    if budget_bytes is not None and budget_bytes < max_message_bytes:
        raise ConfigError(
            f"the answer budget ({budget_bytes} bytes, --answer-budget) must hold at least "
            f"one answer of the largest size ({max_message_bytes} bytes, --max-message-bytes)"
        )
    owns_runtime = runtime is None
    if runtime is None:
        runtime = build_runtime()
    server = grpc.aio.server(
        options=grpc_server_options(
            [
                ("grpc.max_receive_message_length", max_message_bytes),
                ("grpc.max_send_message_length", max_message_bytes),
                ("grpc.so_reuseport", 1 if options.reuse_port else 0),
            ],
            options.connections,
            options.grpc_options,
        ),
        maximum_concurrent_rpcs=options.max_concurrent_rpcs,
        interceptors=_interceptors(options.auth, options.tracing),
    )
    servicer = ControlPlaneServicer(
        runtime.invoker, max_send_bytes=max_message_bytes, observability=runtime.observability
    )
    drain = Drain(runtime.observability)
    ports: list[int] = []
    budget = (
        AnswerBudget(
            options.answer_budget,
            lambda peer: close_connection(peer, ports),
            trim_freed_memory,
        )
        if options.answer_budget is not None
        else None
    )
    # Not the generated add_ControlPlaneServiceServicer_to_server: malformed requests
    # must end as INVALID_ARGUMENT, not UNKNOWN (control_plane._features.grpc.decoding).
    add_service(
        guard(servicer, runtime.registry.names(), options.limits, options.max_input_bytes),
        server,
        drain,
        budget,
        options.limits.retry_after if options.limits is not None else DEFAULT_RETRY_AFTER,
    )
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    if options.tls is not None:
        port = server.add_secure_port(address, options.tls.credentials())
    else:
        port = server.add_insecure_port(address)
    ports.append(port)
    return (
        PackServer(
            server,
            servicer,
            health_servicer,
            runtime=runtime,
            address=address,
            port=port,
            owns_runtime=owns_runtime,
            drain=drain,
            answers=budget,
        ),
        port,
    )


async def serve(
    address: str = DEFAULT_ADDRESS,
    *,
    grace: float = DEFAULT_GRACE,
    ready: Callable[[PackServer], None] | None = None,
    runtime: Runtime | None = None,
    options: ServerOptions | None = None,
) -> None:
    """Run a control plane until SIGTERM or SIGINT, then stop gracefully.

    ``ready`` is called once the server is listening. ``runtime`` and ``options`` go to
    :func:`create_server`.
    """
    server, _ = create_server(address, runtime, options)
    await server.start()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    for signum in IGNORED_SIGNALS:
        loop.add_signal_handler(signum, _ignored, signum)
    if ready is not None:
        ready(server)
    try:
        waiter = asyncio.ensure_future(server.wait_for_termination())
        stopper = asyncio.ensure_future(stop.wait())
        await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if not waiter.done():
            await server.stop(grace)
        await waiter
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT, *IGNORED_SIGNALS):
            loop.remove_signal_handler(signum)


#: Signals whose default action would end the process with calls in flight, and that
#: mean nothing to a server: ignored and logged (docs/reliability.md). ``SIGTERM`` and
#: ``SIGINT`` drain; ``SIGHUP`` (a closed terminal, a reload habit) and ``SIGUSR1`` /
#: ``SIGUSR2`` (a stray ``kill -USR1``) must not drop every call in flight. The handlers
#: are the loop's, so child processes (git, a pack's tools) start with the default ones.
IGNORED_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)


def _ignored(signum: int) -> None:
    logger.warning(
        "ignored signal %s (SIGTERM or SIGINT stop the server)",
        signal.Signals(signum).name,
        extra={"event": "signal_ignored"},
    )
