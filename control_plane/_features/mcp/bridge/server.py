"""The MCP server: every loaded pack as a tool, over stdio or streamable HTTP."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable, Mapping
from typing import Any

from mcp import types
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from control_plane._features.cli.backends import Backend, catalogue
from control_plane._features.grpc.client import DeadlineExceeded, TransportError
from control_plane._features.mcp.bridge.cli import is_loopback
from control_plane._features.mcp.bridge.tools import (
    ToolNaming,
    ToolSpec,
    build_tools,
    error_content,
    malformed_call,
    rejected_content,
    success_content,
)
from control_plane._kernel.errors import CapabilityPackError, RequestRejected, UnknownPack
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.rejection import Rejection
from control_plane._version import version as _version

__all__ = ["SERVER_NAME", "Bridge", "ListenError", "serve_http", "serve_stdio"]

logger = logging.getLogger("capability_packs.mcp")

SERVER_NAME = "capability-packs"
INSTRUCTIONS = (
    "Each tool is a capability pack. On failure a tool result has isError true and "
    "structuredContent.error.code is one of the codes listed in the tool's description "
    "(a closed set): branch on it, honour error.retryable and error.retry_after. "
    "structuredContent.rejected means the call never reached the pack (fix the arguments "
    "for invalid_input)."
)


class Bridge:
    """Packs of a backend as MCP tools; :attr:`server` is the SDK server."""

    def __init__(
        self,
        backend: Backend,
        *,
        naming: ToolNaming = "dotted",
        deadline: float | None = None,
    ) -> None:
        self.backend = backend
        self.naming: ToolNaming = naming
        self.deadline = deadline
        self.tools: dict[str, ToolSpec] = {}
        self._loaded = False
        self._lock = asyncio.Lock()
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=_version(),
            title="capability packs",
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            get_tool_input_schema=self._input_schema,
        )
        # Before the SDK validates the params: a malformed call is a typed result too.
        self.server.middleware.append(self._refuse_malformed_calls)

    # -- the catalogue ------------------------------------------------------------

    async def refresh(self) -> bool:
        """(Re)load the tools from the backend; False when it cannot be reached."""
        async with self._lock:
            try:
                descriptions, failures = await catalogue(self.backend)
            except CapabilityPackError as exc:  # unreachable, deadline, a pack gone meanwhile
                logger.warning("cannot list packs at %s: %s", self.backend.where, exc)
                return False
            self.tools = build_tools(descriptions, self.naming)
            self._loaded = True
            for failure in failures:
                logger.warning("load failure: %s", failure)
            return True

    @property
    def loaded(self) -> bool:
        """Whether the tool list has been read from the backend."""
        return self._loaded

    async def _ensure(self) -> None:
        if not self._loaded:
            await self.refresh()

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        spec = self.tools.get(name)
        return spec.input_schema if spec is not None else None

    def list_tools(self) -> list[types.Tool]:
        """The SDK tool models of the catalogue as loaded."""
        return [
            types.Tool(
                name=spec.name,
                title=spec.title,
                description=spec.description,
                input_schema=spec.input_schema,
                output_schema=spec.output_schema,
            )
            for spec in self.tools.values()
        ]

    async def _list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        await self._ensure()
        return types.ListToolsResult(tools=self.list_tools())

    # -- calls --------------------------------------------------------------------

    async def _refuse_malformed_calls(self, ctx: Any, call_next: CallNext) -> HandlerResult:
        """``tools/call`` params the SDK would answer with ``-32602`` (``arguments`` not an
        object, ``name`` not a string) become ``rejected: invalid_input`` results: no call
        is an MCP protocol error (docs/mcp.md)."""
        if ctx.method == "tools/call":
            refused = malformed_call(ctx.params)
            if refused is not None:
                structured, text = rejected_content(refused)
                return types.CallToolResult(
                    content=[types.TextContent(text=text)],
                    structured_content=structured,
                    is_error=True,
                )
        return await call_next(ctx)

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        structured, text, is_error = await self.call(params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content=structured,
            is_error=is_error,
        )

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None
    ) -> tuple[dict[str, Any], str, bool]:
        """``(structuredContent, text, isError)`` of one tool call; never raises."""
        await self._ensure()
        spec = self.tools.get(name)
        if spec is None and not self._loaded:
            message = f"cannot list the packs of the control plane at {self.backend.where}"
            return self._refused(Rejection.of("unavailable", message))
        if spec is None:
            names = sorted(self.tools)
            known = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
            message = f"no tool {name!r} (tools: {known or 'none'})"
            return self._refused(Rejection.of("unknown_pack", message, pack=name))
        doc, strict, fail_on, faults = spec.split_arguments(arguments)
        if faults:
            message = f"invalid arguments for {spec.name}"
            rejection = Rejection.of("invalid_input", message, pack=spec.pack, violations=faults)
            return self._refused(rejection)
        try:
            outcome = await self.backend.invoke(
                spec.pack, doc, strict=strict, fail_on=fail_on, deadline=self.deadline
            )
        except UnknownPack:
            self._loaded = False  # the control plane changed under us: relist next time
            message = f"the control plane no longer serves {spec.pack!r}"
            return self._refused(Rejection.of("unknown_pack", message, pack=spec.pack))
        except RequestRejected as exc:
            return self._refused(exc)
        except DeadlineExceeded as exc:
            return self._refused(exc.rejection)
        except TransportError as exc:
            if exc.rejection.reason != "unavailable":  # the control plane answered: its refusal
                return self._refused(exc.rejection)  # (overloaded, unauthenticated,
                # adapter_failed for an answer the client could not use)
            message = f"cannot reach the control plane at {self.backend.where} ({exc.status.name})"
            return self._refused(Rejection.of("unavailable", message))
        # The MCP boundary: a bug of the bridge must still answer in the documented shape.
        except Exception:
            logger.exception("bridge failure calling %s", spec.pack)
            failed = Rejection.of("adapter_failed", "the bridge failed; see its log")
            return self._refused(failed)
        return self._answer(spec, outcome)

    def _refused(self, rejection: Rejection | RequestRejected) -> tuple[dict[str, Any], str, bool]:
        """A refusal's tool result, told to the backend's ``request_refused`` hook first
        (once: a refusal the invoker raised was told already)."""
        self.backend.refused(rejection)
        return (*rejected_content(rejection), True)

    def _answer(self, spec: ToolSpec, outcome: Outcome) -> tuple[dict[str, Any], str, bool]:
        env = outcome.error
        if env is None:
            return (*success_content(outcome), False)
        if env.code not in spec.vocabulary:
            # Only a code the client library made up (a deadline the control plane did not
            # answer within): the pack never answered, so this is not the pack's error.
            message = f"no answer from the control plane: {env.message}"
            return (*rejected_content(Rejection.of("unavailable", message)), True)
        return (*error_content(outcome, spec), True)

    async def close(self) -> None:
        await self.backend.close()


# -- transports ------------------------------------------------------------------------


async def serve_stdio(bridge: Bridge, ready: Callable[[Bridge], None] | None = None) -> None:
    """Serve over this process's stdin/stdout until the client closes stdin."""
    await bridge.refresh()
    if ready is not None:
        ready(bridge)
    server = bridge.server
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


class ListenError(OSError):
    """The HTTP address could not be bound (in use, not local...)."""


#: Seconds a connection has to send a request's complete headers, from when it opens or its
#: previous response ends (uvicorn has no such bound: a client sending a byte now and then
#: would hold its connection, and so many such clients all descriptors, forever).
HEADER_TIMEOUT = 10.0


def _header_deadline_protocol(timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request headers are not complete
    ``timeout`` seconds after it opened or after its previous response (slowloris)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadlineProtocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def _arm_header_timer(self) -> None:
            self._disarm_header_timer()
            self._header_timer = self.loop.call_later(timeout, self._headers_overdue)

        def _disarm_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_overdue(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                logger.info("closing a connection that sent no complete headers in %gs", timeout)
                self.transport.close()

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._arm_header_timer()

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:
                self._disarm_header_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_header_timer()
            super().connection_lost(exc)

    return HeaderDeadlineProtocol


async def serve_http(
    bridge: Bridge,
    host: str,
    port: int,
    *,
    path: str = "/mcp",
    ready: Callable[[Bridge, str], None] | None = None,
    header_timeout: float = HEADER_TIMEOUT,
) -> None:
    """Serve streamable HTTP on ``host:port`` (loopback only) until cancelled or signalled.

    A connection that has not sent a request's complete headers ``header_timeout`` seconds
    after it opened (or after its previous response) is closed.
    """
    import uvicorn

    if not is_loopback(host):
        raise ValueError(f"{host} is not a loopback address: the MCP bridge has no auth")
    await bridge.refresh()
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((bare, port))
    except OSError as exc:
        sock.close()
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.set_inheritable(True)
    bound = sock.getsockname()[1]
    app = bridge.server.streamable_http_app(streamable_http_path=path, host=bare)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        http=_header_deadline_protocol(header_timeout),
    )
    # Listening before the URL is announced: a client that connects at once waits in the
    # backlog until uvicorn accepts, instead of being refused (a bound socket that does not
    # listen yet refuses; a test saw "All connection attempts failed").
    sock.listen(config.backlog)
    server = uvicorn.Server(config)
    url_host = f"[{bare}]" if family == socket.AF_INET6 else bare
    if ready is not None:
        ready(bridge, f"http://{url_host}:{bound}{path}")
    try:
        await server.serve(sockets=[sock])
    finally:
        sock.close()
