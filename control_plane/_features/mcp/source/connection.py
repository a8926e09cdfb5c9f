"""One MCP server: its process or endpoint, its session, and a supervisor that pings and restarts
it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from control_plane._features.mcp.source.config import ServerConfig
from control_plane._kernel.errors import CapabilityPackError
from control_plane._kernel.reach import Confinement, PackReach, Reaches
from control_plane._kernel.redact import scrub
from control_plane._runtime import stderr_relay

if TYPE_CHECKING:
    from control_plane._features.mcp.source.transport import StdoutNoise

__all__ = ["ServerConnection", "ServerUnavailable", "State"]

logger = logging.getLogger("capability_packs.mcp_source")

State = Literal["stopped", "starting", "serving", "idle", "down"]

#: Longest wait for a health ping's answer.
PING_TIMEOUT = 5.0


class ServerUnavailable(CapabilityPackError):
    """The server cannot take a call now: it did not start, died, or is restarting."""

    def __init__(self, server: str, state: str, reason: str, public: str = "") -> None:
        super().__init__(f"MCP server {server} is {state}: {reason}")
        self.server = server
        self.state = state
        self.reason = reason
        #: What the caller may be told (our own words, never the server's text): why the
        #: connection was dropped when the control plane dropped it.
        self.public = public


def describe(exc: BaseException) -> str:
    """An exception as one scrubbed line (exception groups: their first leaf).

    A pydantic ``ValidationError`` (a line that is not JSON-RPC, a ``tools/list`` the SDK
    refuses) is told without the input it quotes: that is the server's own output, which
    may hold a secret the scrubber cannot recognise once pydantic has cut it.
    """
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    raw = _validation_text(exc) if isinstance(exc, ValidationError) else str(exc)
    text = " ".join(raw.split())
    return scrub(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)[:500]


def _validation_text(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    parts = [
        f"{'.'.join(str(p) for p in error['loc']) or 'message'}: {error['msg']}"
        for error in errors[:3]
    ]
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"{exc.error_count()} validation error(s) for {exc.title}: {'; '.join(parts)}{more}"


class GrantRefused(CapabilityPackError):
    """A grant an MCP server cannot be held to (its server does not start)."""


def server_confinement(cfg: ServerConfig, reaches: Reaches) -> Confinement | None:
    """What the kernel holds ``cfg``'s server process to: the operator's grant of its packs
    (``PREFIX.TOOL``), one grant for all of them (they share the process). ``None`` when
    none is granted (the server runs unconfined, as start-up says). A grant to the packs of
    a streamable-HTTP server, or different grants to packs of one process, cannot be
    enforced: :class:`GrantRefused` (the server does not start)."""
    granted = {
        name: grant
        for name, grant in reaches.grants.by_pack.items()
        if name.startswith(cfg.prefix + ".")
    }
    if not granted:
        return None
    if cfg.command is None:
        raise GrantRefused(
            f"{', '.join(sorted(granted))}: a grant cannot hold a streamable-HTTP MCP server "
            "(it runs elsewhere); remove the grant (docs/grants.md)"
        )
    grants = set(granted.values())
    if len(grants) > 1:
        raise GrantRefused(
            f"{', '.join(sorted(granted))}: the tools of one MCP server run in one process; "
            "grant them all the same (docs/grants.md)"
        )
    (grant,) = grants
    return PackReach(
        f"{cfg.prefix}.*", grant.over(None), start_dir=reaches.start_dir, scratch=reaches.scratch
    ).confinement()


class ServerConnection:
    """The supervised connection to one configured MCP server."""

    def __init__(
        self,
        config: ServerConfig,
        on_state: Callable[[ServerConnection], None],
        *,
        errlog: Any = None,
        reaches: Reaches | None = None,
    ) -> None:
        self.config = config
        #: The runtime's grants (the server is confined to its packs' grant).
        self.reaches = reaches if reaches is not None else Reaches()
        self.state: State = "stopped"
        #: The tools the server listed at its last start, by MCP name.
        self.tools: dict[str, Any] = {}
        #: The tools of that listing the SDK refuses (their definition does not fit the
        #: protocol's models): name (``#INDEX`` without one) -> why. Skipped, not served.
        self.skipped_tools: dict[str, str] = {}
        self.server_version: str | None = None
        self.last_error = ""
        #: Why the control plane dropped the connection (its own words), for the calls in
        #: flight then; reset by the next start.
        self.violation = ""
        self.restarts = 0
        self._on_state = on_state
        # The server's stderr: a pipe to the scrubbing relay (it may print secrets).
        self._owned_errlog: Any = None
        if errlog is None:
            errlog = self._owned_errlog = open(  # noqa: SIM115 - closed by stop()
                stderr_relay.relay().pipe(f"MCP server {config.name}"),
                "w",
                encoding="utf-8",
                errors="replace",
            )
        self._errlog = errlog
        #: The lines on the server's stdout that are not JSON-RPC (stdio), skipped and
        #: logged within bounds; made with the first transport (it needs the mcp extra).
        self._noise: StdoutNoise | None = None
        self._session: Any = None
        self._supervisor: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None
        self._dead: asyncio.Event | None = None
        self._stopping = False
        self._first: asyncio.Future[None] | None = None

    # -- state ---------------------------------------------------------------------

    def _set(self, state: State) -> None:
        if state != self.state:
            self.state = state
            logger.info(
                "MCP server %s: %s", self.config.name, state, extra={"event": f"mcp_{state}"}
            )
            self._on_state(self)

    @property
    def serving(self) -> bool:
        """Whether calls can be taken (``idle``: a lazy server starts on the first call)."""
        return self.state in ("serving", "idle")

    # -- lifecycle -----------------------------------------------------------------

    async def start(self) -> None:
        """Start and list the tools; raises what stopped the first start."""
        loop = asyncio.get_running_loop()
        self._first = loop.create_future()
        self._ready = asyncio.Event()
        self._dead = asyncio.Event()
        self._supervisor = asyncio.create_task(self._supervise(), name=f"mcp:{self.config.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._first), self.config.startup_timeout)
        except TimeoutError:
            await self.stop()
            # The stop may end the start with an error of its own: nobody awaits it now.
            if self._first.done() and not self._first.cancelled():
                self._first.exception()
            raise TimeoutError(self._no_answer()) from None
        except BaseException:
            await self.stop()
            raise
        if self.config.start == "lazy":
            await self._halt(final=False)
            self._set("idle")

    def _no_answer(self) -> str:
        """Why a start timed out: no answer, and what the server wrote instead if it wrote
        only lines that are not JSON-RPC (a server logging on stdout, never answering)."""
        text = f"did not answer initialize and tools/list within {self.config.startup_timeout:g}s"
        skipped = self._noise.total if self._noise is not None else 0
        if skipped:
            text += (
                f"; it wrote {skipped} line(s) on stdout that are not JSON-RPC, skipped "
                "(see the log): stdout must carry the MCP messages"
            )
        return text

    async def _halt(self, *, final: bool) -> None:
        """Stop the supervisor, and so the server (its session closes: stdin closed, then
        SIGTERM/SIGKILL to its process group). ``final``: for good (shutdown)."""
        self._stopping = True
        task, self._supervisor = self._supervisor, None
        if self._dead is not None:
            self._dead.set()
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), 10.0)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._stopping = final

    async def stop(self) -> None:
        """Stop the server for good (shutdown)."""
        await self._halt(final=True)
        self._set("stopped")
        if self._owned_errlog is not None:
            self._owned_errlog.close()  # the relay flushes the server's last line
            self._owned_errlog = None

    async def _wake(self, timeout: float) -> None:
        """A lazy server's first call: start it and wait for its session."""
        if self._supervisor is None:
            self._ready = asyncio.Event()
            self._dead = asyncio.Event()
            self._first = None  # a failed wake is retried with backoff, not fatal
            self._supervisor = asyncio.create_task(
                self._supervise(), name=f"mcp:{self.config.name}"
            )
        assert self._ready is not None
        try:
            await asyncio.wait_for(self._ready.wait(), min(timeout, self.config.startup_timeout))
        except TimeoutError:
            raise ServerUnavailable(
                self.config.name, "starting", "did not start in time for this call"
            ) from None

    async def _supervise(self) -> None:
        delay = self.config.restart_backoff
        while not self._stopping:
            self._set("starting")
            served = False
            try:
                served = await self._session_once()
            except asyncio.CancelledError:
                raise
            # Process boundary: a server that fails to start or dies may surface as any
            # exception of the SDK, anyio, httpx or the OS; each is reported, then retried.
            except BaseException as exc:  # noqa: BLE001
                self.last_error = describe(exc)
                if self._first is not None and not self._first.done():
                    self._first.set_exception(
                        exc if isinstance(exc, Exception) else RuntimeError(describe(exc))
                    )
                    return
                logger.warning(
                    "MCP server %s failed: %s",
                    self.config.name,
                    self.last_error,
                    extra={"event": "mcp_failed"},
                )
            if self._stopping:
                break
            if served:
                delay = self.config.restart_backoff
            self._set("down")
            self.restarts += 1
            logger.warning(
                "MCP server %s is down; restarting in %.1fs",
                self.config.name,
                delay,
                extra={"event": "mcp_restart"},
            )
            assert self._dead is not None
            with contextlib.suppress(TimeoutError):
                # A stop during the backoff ends the wait at once.
                self._dead.clear()
                await asyncio.wait_for(self._dead.wait(), delay)
            delay = min(delay * 2, self.config.restart_backoff_max)

    def _transport(self) -> Any:
        """The bounded transport (:mod:`.transport`): no message past ``max_message_bytes``."""
        # Imported here: the transport needs anyio and httpx2, which come with the ``mcp``
        # extra; ``packctl`` imports this module without it.
        from control_plane._features.mcp.source.transport import (
            StdoutNoise,
            http_transport,
            stdio_transport,
        )

        cfg = self.config
        confinement = server_confinement(cfg, self.reaches)
        if cfg.command is not None:
            if self._noise is None:
                self._noise = StdoutNoise(cfg.name)
            return stdio_transport(
                cfg.command,
                list(cfg.args),
                env=dict(cfg.env) or None,
                cwd=cfg.cwd,
                confinement=confinement,
                errlog=self._errlog,
                max_message_bytes=cfg.max_message_bytes,
                on_oversize=self._broken,
                on_noise=self._noise.skipped,
            )
        assert cfg.url is not None
        return http_transport(
            cfg.url,
            dict(cfg.headers),
            max_message_bytes=cfg.max_message_bytes,
            on_oversize=self._broken,
        )

    def _broken(self, exc: BaseException) -> None:
        """The server broke the protocol (a message too long): drop the connection."""
        self.last_error = describe(exc)
        limit = self.config.max_message_bytes
        self.violation = f"it sent a message larger than max_message_bytes ({limit} bytes)"
        logger.warning(
            "MCP server %s: %s; restarting it",
            self.config.name,
            self.last_error,
            extra={"event": "mcp_protocol_violation"},
        )
        if self._dead is not None:
            self._dead.set()

    async def _session_once(self) -> bool:
        """One connection: open, initialize, list tools, watch. True if it served."""
        from mcp.client.session import ClientSession

        from control_plane._features.mcp.source.listing import ToolListing

        cfg = self.config
        assert self._dead is not None and self._ready is not None
        self._dead.clear()

        async def on_message(message: Any) -> None:
            if isinstance(message, Exception):
                # A transport failure (HTTP refused, a broken pipe): the connection is gone.
                self.last_error = describe(message)
                self._dead.set()  # type: ignore[union-attr]

        served = False
        self.violation = ""
        async with contextlib.AsyncExitStack() as stack:
            stack.callback(self._flush_noise)  # last, once the transport is closed
            read, write = await stack.enter_async_context(self._transport())
            # One tool the SDK would refuse is dropped from the listing, not the listing.
            listing = ToolListing()
            read, write = listing.streams(read, write)
            session = await stack.enter_async_context(
                ClientSession(read, write, message_handler=on_message)
            )
            try:
                async with asyncio.timeout(cfg.startup_timeout):
                    init, tools = await self._unless_dead(
                        _handshake(session, listing), "during its start"
                    )
            except TimeoutError:
                raise TimeoutError(self._no_answer()) from None
            self.server_version = getattr(init.server_info, "version", None)
            self.tools = {tool.name: tool for tool in tools}
            self.skipped_tools = dict(listing.skipped)
            self._session = session
            served = True
            self._ready.set()
            if self._first is not None and not self._first.done():
                self._first.set_result(None)
            self._set("serving")
            try:
                await self._watch(session)
            finally:
                self._session = None
                self._ready.clear()
        return served

    def _flush_noise(self) -> None:
        if self._noise is not None:
            self._noise.flush()

    async def _watch(self, session: Any) -> None:
        """Return when the connection is dead (or a stop was asked)."""
        assert self._dead is not None
        while not self._stopping:
            try:
                await asyncio.wait_for(self._dead.wait(), self.config.health_interval)
                return  # a call saw the connection close, or the transport failed
            except TimeoutError:
                pass
            try:
                async with asyncio.timeout(min(PING_TIMEOUT, self.config.health_interval * 4)):
                    await session.send_ping()
            except asyncio.CancelledError:
                raise
            # Process boundary: the SDK reports a dead peer as MCPError, anyio stream
            # errors or OSError; any of them means the connection is gone.
            except Exception as exc:  # noqa: BLE001
                self.last_error = describe(exc)
                return

    # -- calls ---------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> Any:
        """``tools/call`` on the live session; :class:`ServerUnavailable` when there is none."""
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        waking = not self._stopping and (
            self._supervisor is None or self.state in ("idle", "starting")
        )
        if self._session is None and self.config.start == "lazy" and waking:
            await self._wake(timeout)  # the first call of a lazy server waits for it
        session = self._session
        if session is None:
            reason = self.last_error or "not connected"
            state = "starting" if self.state in ("starting", "idle") else "restarting"
            raise ServerUnavailable(
                self.config.name, "stopped" if self._stopping else state, reason
            )
        request = types.CallToolRequest(
            params=types.CallToolRequestParams(name=tool, arguments=arguments)
        )
        try:
            return await self._unless_dead(
                session.send_request(
                    request, types.CallToolResult, request_read_timeout_seconds=timeout
                ),
                "during the call",
            )
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED and self._dead is not None:
                self._dead.set()
            raise

    async def _unless_dead(self, coro: Any, when: str) -> Any:
        """Await ``coro``, unless the connection dies first (a transport failure the SDK
        reports to the session rather than to the request, as streamable HTTP does):
        then :class:`ServerUnavailable`."""
        dead = self._dead
        assert dead is not None
        work = asyncio.ensure_future(coro)
        watch = asyncio.ensure_future(dead.wait())
        try:
            await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watch.cancel()
            if not work.done():
                work.cancel()
        # A request that failed because the connection died under it (the SDK turns a
        # response cut by max_message_bytes into a parse error) reports the death.
        if work.done() and not work.cancelled() and (not dead.is_set() or not work.exception()):
            return work.result()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await work  # let the cancelled request finish its cleanup
        reason = self.last_error or "the connection closed"
        raise ServerUnavailable(
            self.config.name, "restarting", f"{reason} ({when})", public=self.violation
        )


async def _handshake(session: Any, listing: Any) -> tuple[Any, list[Any]]:
    init = await session.initialize()
    listing.version = getattr(session, "protocol_version", None) or getattr(
        init, "protocol_version", None
    )
    return init, await _list_tools(session)


async def _list_tools(session: Any) -> list[Any]:
    """Every tool, following ``nextCursor`` (bounded)."""
    import mcp_types as types

    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(100):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools
