"""Transports to an MCP server (stdio, streamable HTTP) that never read a message past
``max_message_bytes``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.abc
import httpx2

from control_plane._features.grants.tool_process import confined
from control_plane._kernel.reach import Confinement
from control_plane._kernel.redact import WINDOW, scrub

__all__ = ["MessageTooLarge", "StdoutNoise", "http_client", "http_transport", "stdio_transport"]

logger = logging.getLogger("capability_packs.mcp_source")

#: Bytes read from the server's stdout at a time.
READ_CHUNK = 65536
#: Seconds a server gets to exit once its stdin is closed, then after SIGTERM.
EXIT_GRACE = 2.0
#: Seconds the writer gets to flush accepted messages on close.
FLUSH_GRACE = 0.5

#: The SDK's HTTP timeouts: to connect, write and wait for a pooled connection; to read (a
#: server may hold an SSE stream open).
HTTP_TIMEOUT = 30.0
HTTP_READ_TIMEOUT = 300.0

OnOversize = Callable[["MessageTooLarge"], None]
OnNoise = Callable[[bytes], None]

#: Lines on stdout that are not JSON-RPC logged one record each, at most, at once ...
NOISE_BURST = 10
#: ... then one more record per this many seconds at most (each saying how many lines were
#: skipped without a record since the last one).
NOISE_INTERVAL = 30.0
#: Characters of a skipped line quoted in its record (after scrubbing).
NOISE_EXCERPT = 200


class MessageTooLarge(httpx2.StreamError):
    """The server sent a message longer than ``max_message_bytes``; it was not decoded.

    A ``httpx2.StreamError`` so that the SDK's HTTP client, reading a JSON body, treats it
    as an unreadable response of that one request rather than a crash of the transport.
    """

    def __init__(self, limit: int, transport: str) -> None:
        super().__init__(
            f"the MCP server sent a message larger than max_message_bytes ({limit} bytes) "
            f"over {transport}; it was dropped unread"
        )
        self.limit = limit


# -- stdio -------------------------------------------------------------------------------


class StdoutNoise:
    """The lines a stdio server wrote on its stdout that are not JSON-RPC, skipped.

    Each is counted (:attr:`total`); a record is logged for each of the first
    :data:`NOISE_BURST`, then for one every :data:`NOISE_INTERVAL` seconds at most (a token
    bucket): a server printing a line per message, or a flood, costs the log a bounded number
    of records, each quoting at most :data:`NOISE_EXCERPT` scrubbed characters of a line (the
    line itself is never kept: ``max_message_bytes`` bounds it while it is read).
    :meth:`flush` logs how many were skipped without a record, at the connection's end.
    """

    def __init__(
        self,
        server: str,
        *,
        burst: int = NOISE_BURST,
        interval: float = NOISE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.server = server
        #: Lines skipped since this object was made (over every restart of the server).
        self.total = 0
        self._burst = burst
        self._interval = interval
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()
        self._unlogged = 0

    def skipped(self, line: bytes) -> None:
        """One line was skipped: count it, and log it unless the bucket is empty."""
        self.total += 1
        now = self._clock()
        self._tokens = min(float(self._burst), self._tokens + (now - self._last) / self._interval)
        self._last = now
        if self._tokens < 1.0:
            self._unlogged += 1
            return
        self._tokens -= 1.0
        unlogged, self._unlogged = self._unlogged, 0
        since = (
            f" ({unlogged} more skipped without logging since the last record)" if unlogged else ""
        )
        logger.warning(
            "MCP server %s wrote a line on stdout that is not JSON-RPC (%d bytes); skipped: %s%s",
            self.server,
            len(line),
            excerpt(line),
            since,
            extra={"event": "mcp_stdout_skipped"},
        )

    def flush(self) -> None:
        """Log how many lines were skipped without a record since the last one."""
        unlogged, self._unlogged = self._unlogged, 0
        if unlogged:
            logger.warning(
                "MCP server %s: %d more line(s) on stdout that are not JSON-RPC were skipped "
                "without logging (%d in all)",
                self.server,
                unlogged,
                self.total,
                extra={"event": "mcp_stdout_skipped"},
            )


def excerpt(line: bytes, limit: int = NOISE_EXCERPT) -> str:
    """The start of ``line`` as one printable line, scrubbed, then cut to ``limit``
    characters (scrubbed with a window past the cut, so no secret is cut in two unseen)."""
    head = line[: limit * 4 + 4 * WINDOW].decode("utf-8", "replace")
    text = " ".join("".join(c if c.isprintable() else " " for c in head).split())
    return repr(scrub(text, limit))


def meant_as_jsonrpc(line: bytes) -> bool:
    """Whether a line the SDK could not read was meant as a JSON-RPC message: a JSON object
    naming ``jsonrpc`` (decoded leniently: a message that is not UTF-8 is still one), or
    text that starts like one and names it but is not JSON (a message cut or mangled).
    Anything else (a banner, a log line, a JSON log record) is noise to skip."""
    text = line.strip()
    if not text.startswith(b"{"):
        return False
    try:
        value = json.loads(text.decode("utf-8", "replace"))
    except (ValueError, RecursionError):  # not JSON (RecursionError: nested too deep)
        return b'"jsonrpc"' in text
    return isinstance(value, dict) and "jsonrpc" in value


def _environment(extra: dict[str, str] | None) -> dict[str, str]:
    from mcp.client.stdio import get_default_environment

    return get_default_environment() | (extra or {})


@contextlib.asynccontextmanager
async def stdio_transport(
    command: str,
    args: list[str],
    *,
    env: dict[str, str] | None,
    cwd: Path | None,
    errlog: TextIO,
    max_message_bytes: int,
    on_oversize: OnOversize,
    on_noise: OnNoise,
    confinement: Confinement | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` to a server started as ``command args``, held by the
    kernel to ``confinement`` (its packs' grant; ``_features/grants/confine_program.py``).

    A line that is not JSON-RPC is given to ``on_noise`` and skipped (:func:`meant_as_jsonrpc`).
    """
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    argv, child_env, child_cwd = confined(
        [command, *args], _environment(env), None if cwd is None else str(cwd), confinement
    )
    process = await anyio.open_process(
        argv,
        env=child_env,
        stderr=errlog,
        cwd=child_cwd,
        start_new_session=True,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    broken = False

    def parse(line: bytes) -> SessionMessage | Exception | None:
        """The message; the error of one meant as JSON-RPC that cannot be read; else None."""
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError as exc:  # pydantic's ValidationError (not JSON, not JSON-RPC, not UTF-8)
            return exc if meant_as_jsonrpc(line) else None

    async def deliver(line: bytes) -> bool:
        """Hand one line to the session; False once the session is gone."""
        if not line.strip():
            return True
        message = parse(line)
        if message is None:
            on_noise(line)
            return True
        try:
            await read_writer.send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return False
        return True

    async def reader() -> None:
        nonlocal broken
        stdout = process.stdout
        assert stdout is not None
        parts: list[bytes] = []
        size = 0
        try:
            async with read_writer:
                while True:
                    chunk = await stdout.receive(READ_CHUNK)
                    start = 0
                    while True:
                        end = chunk.find(b"\n", start)
                        piece = chunk[start:] if end < 0 else chunk[start:end]
                        size += len(piece)
                        if size > max_message_bytes:
                            broken = True
                            on_oversize(MessageTooLarge(max_message_bytes, "stdio"))
                            return
                        if end < 0:
                            if piece:
                                parts.append(piece)
                            break
                        parts.append(piece)
                        line = b"".join(parts)
                        parts.clear()
                        size = 0
                        start = end + 1
                        if not await deliver(line):
                            await _drain(stdout)
                            return
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            return  # the server closed its stdout (it died), or our close did

    async def writer() -> None:
        stdin = process.stdin
        assert stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send(data.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server stopped reading: end the session rather than leave a request hanging.
            await read_writer.aclose()
        finally:
            writer_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                with anyio.move_on_after(FLUSH_GRACE):
                    await writer_done.wait()
                await _stop(process, grace=0.0 if broken else EXIT_GRACE)
                for stream in (read_stream, write_stream, read_writer, write_reader):
                    await stream.aclose()
            tg.cancel_scope.cancel()


async def _drain(stdout: anyio.abc.ByteReceiveStream) -> None:
    """Discard what the server still writes, so that it is not stuck on a full pipe and can
    exit when its stdin closes (ends when its stdout closes: it exited or was killed)."""
    with anyio.CancelScope(shield=True):
        with contextlib.suppress(
            anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError
        ):
            while True:
                await stdout.receive(READ_CHUNK)


async def _stop(process: anyio.abc.Process, *, grace: float) -> None:
    """Close stdin, give the server ``grace`` seconds to exit, then SIGTERM its process group
    and SIGKILL what is left after :data:`EXIT_GRACE` (the MCP spec's shutdown sequence)."""
    quiet = (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError)
    if process.stdin is not None:
        with contextlib.suppress(*quiet):
            await process.stdin.aclose()
    if not await _exited(process, grace):
        pgid = process.pid  # the leader of a session of its own: its pid is the group's id
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
        if not await _exited(process, EXIT_GRACE):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            if not await _exited(process, EXIT_GRACE):
                logger.warning("MCP server process %d survived SIGKILL; abandoning it", pgid)
    if process.stdout is not None:
        with contextlib.suppress(*quiet):
            await process.stdout.aclose()
    # Not process.aclose(): it waits for the pipes' end too, which a child of the server
    # that left its group may hold open. Closing the subprocess transport releases them.
    close = getattr(getattr(process, "_transport", None), "close", None)
    if callable(close):
        with contextlib.suppress(OSError):
            close()


async def _exited(process: anyio.abc.Process, timeout: float) -> bool:
    """Whether the process exited within ``timeout`` (polled: ``wait()`` also waits for the
    pipes, which a child of the server may hold open)."""
    with anyio.move_on_after(timeout):
        while process.returncode is None:  # noqa: ASYNC110 - nothing signals an exit to await
            await anyio.sleep(0.01)
    return process.returncode is not None


# -- streamable HTTP ---------------------------------------------------------------------


class _Bounded(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, limit: int, on_oversize: OnOversize) -> None:
        self._inner = inner
        self._limit = limit
        self._on_oversize = on_oversize

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self._inner:
            size += len(chunk)
            if size > self._limit:
                raise self._too_large()
            yield chunk

    def _too_large(self) -> MessageTooLarge:
        exc = MessageTooLarge(self._limit, "HTTP")
        self._on_oversize(exc)
        return exc

    async def aclose(self) -> None:
        await self._inner.aclose()


class _BoundedTransport(httpx2.AsyncBaseTransport):
    """Response bodies (not SSE streams, bounded per event by the SDK) stop at ``limit``."""

    def __init__(self, limit: int, on_oversize: OnOversize) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._limit = limit
        self._on_oversize = on_oversize

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        if response.headers.get("content-type", "").lower().startswith("text/event-stream"):
            return response
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        bounded = _Bounded(stream, self._limit, self._on_oversize)
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self._limit:
            await stream.aclose()
            raise bounded._too_large()
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=bounded,
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def http_client(
    headers: dict[str, str], max_message_bytes: int, on_oversize: OnOversize
) -> httpx2.AsyncClient:
    """The SDK's default client settings (30 s to connect and write, 300 s to read a held
    stream), with the headers and the bounded transport."""
    return httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT),
        transport=_BoundedTransport(max_message_bytes, on_oversize),
    )


@contextlib.asynccontextmanager
async def http_transport(
    url: str, headers: dict[str, str], *, max_message_bytes: int, on_oversize: OnOversize
) -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` to a streamable HTTP server, the client closed after."""
    from mcp.client.streamable_http import streamable_http_client

    async with (
        http_client(headers, max_message_bytes, on_oversize) as client,
        streamable_http_client(
            url, http_client=client, max_sse_event_size=max_message_bytes
        ) as streams,
    ):
        yield streams[0], streams[1]
