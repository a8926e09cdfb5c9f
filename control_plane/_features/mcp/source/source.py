""":class:`McpSource`: configured MCP servers, one pack per exposed tool, on a loop of its own."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from control_plane._features.mcp.source.config import (
    McpConfig,
    McpConfigError,
    ServerConfig,
    ToolVocabulary,
)
from control_plane._features.mcp.source.connection import (
    ServerConnection,
    ServerUnavailable,
    describe,
)
from control_plane._features.mcp.source.failures import (
    McpToolFailure,
    from_is_error,
    from_jsonrpc,
    from_unavailable,
)
from control_plane._features.mcp.source.listing import NAMELESS
from control_plane._kernel.errors import PackError, PluginLoadError
from control_plane._kernel.pack import Context, Pack
from control_plane._kernel.reach import Reaches
from control_plane._kernel.registry import LoadFailure, Registry

__all__ = ["HealthWatcher", "McpSource", "open_source", "pack_name", "tool_pack"]

logger = logging.getLogger("capability_packs.mcp_source")

HealthWatcher = Callable[[str, bool], None]

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_NAME = re.compile(r"[^a-z0-9]+")

#: Longest wait for every server's first start, beyond each server's own startup_timeout.
START_SLACK = 5.0


def pack_name(prefix: str, tool: str) -> str:
    """``PREFIX.tool_name``: camelCase, dashes and dots become snake_case."""
    snake = _NOT_NAME.sub("_", _CAMEL.sub("_", tool).lower()).strip("_")
    if not snake or not snake[0].isalpha():
        snake = f"tool_{snake}" if snake else "tool"
    return f"{prefix}.{snake}"


def _error_node(codes: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["code", "message"],
        "properties": {"code": {"enum": codes}, "message": {"type": "string"}},
    }


#: The output document of a tool without an ``outputSchema``: its content blocks.
CONTENT_SCHEMA: dict[str, Any] = {
    "type": "array",
    "description": "The tool's MCP content blocks (text, image, audio, resource, resource_link).",
    "items": {
        "type": "object",
        "required": ["type"],
        "properties": {
            "type": {"type": "string"},
            "text": {"type": "string"},
            "data": {"type": "string"},
            "mimeType": {"type": "string"},
            "uri": {"type": "string"},
        },
    },
}


def output_schema(tool: Any, codes: list[str]) -> dict[str, Any]:
    """The pack's output schema: the tool's ``outputSchema`` (its structured content) when it
    has one, else ``{content, text, structuredContent}``; ``error`` carries the vocabulary."""
    declared = getattr(tool, "output_schema", None)
    if isinstance(declared, dict) and declared:
        schema = dict(declared)
        schema["properties"] = {**dict(schema.get("properties") or {}), "error": _error_node(codes)}
        schema.setdefault("type", "object")
        return schema
    return {
        "type": "object",
        "required": ["content", "text"],
        "properties": {
            "content": CONTENT_SCHEMA,
            "text": {"type": "string", "description": "The text blocks, joined by newlines."},
            "structuredContent": {"type": "object"},
            "error": _error_node(codes),
        },
    }


def input_schema(tool: Any) -> dict[str, Any]:
    schema = dict(getattr(tool, "input_schema", None) or {})
    schema.setdefault("type", "object")
    return schema


def tool_pack_name(server: ServerConfig, tool: str) -> str:
    """The pack name of ``server``'s tool ``tool``: its ``name`` setting, else
    :func:`pack_name`."""
    settings = server.settings(tool)
    return f"{server.prefix}.{settings.name}" if settings.name else pack_name(server.prefix, tool)


def _summary(server: ServerConfig, tool: Any, override: str | None) -> str:
    if override:
        return override
    for text in (getattr(tool, "title", None), getattr(tool, "description", None)):
        if isinstance(text, str):
            for raw in text.splitlines():
                line = raw.strip()
                if line:
                    return line if len(line) <= 200 else line[:197] + "..."
    return f"MCP tool {tool.name} of server {server.name}"


def _docs(server: ServerConfig, tool: Any, vocab: ToolVocabulary) -> str:
    where = server.command if server.command is not None else server.url
    lines = [
        f"Tool `{tool.name}` of the MCP server `{server.name}` ({server.transport}: `{where}`), "
        f"configured at {server.entry}.",
        "",
    ]
    description = getattr(tool, "description", None)
    if isinstance(description, str) and description.strip():
        lines += [description.strip(), ""]
    lines.append("Failure texts are mapped by these rules, first match wins:")
    for rule in vocab.rules:
        if rule.code in vocab.reachable:
            lines.append(f"- `{rule.pattern.pattern}` -> `{rule.code}` ({rule.origin})")
    return "\n".join(lines)


def tool_pack(
    source: McpSource, server: ServerConfig, tool: Any, version: str
) -> tuple[Pack, ToolVocabulary]:
    """The pack serving ``tool`` of ``server`` through ``source``.

    Its schemas are checked where every pack's are, by the registry
    (:mod:`control_plane._kernel.outside_schema`: nothing fetched, bounded, linear patterns).
    """
    vocab = server.vocabulary(tool.name)
    settings = server.settings(tool.name)
    name = tool_pack_name(server, tool.name)
    has_output = isinstance(getattr(tool, "output_schema", None), dict) and bool(tool.output_schema)
    tool_name = tool.name

    async def handler(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return await source.call(server, tool_name, vocab, doc, ctx, structured=has_output)

    # Isolation has nothing to add: the tool runs in the server's process (--isolate all
    # skips the pack, naming it is refused).
    handler.out_of_process = f"the MCP server {server.name}"  # type: ignore[attr-defined]

    pack = Pack(
        name=name,
        version=version,
        summary=_summary(server, tool, settings.summary),
        input_schema=input_schema(tool),
        output_schema=output_schema(tool, list(vocab.codes)),
        handler=handler,
        codes=dict(vocab.docs),
        docs=_docs(server, tool, vocab),
    )
    return pack, vocab


def _output(result: Any, structured: bool) -> dict[str, Any]:
    if structured:
        content = getattr(result, "structured_content", None)
        return dict(content) if isinstance(content, Mapping) else {}
    blocks = [
        block.model_dump(mode="json", by_alias=True, exclude_none=True)
        for block in (result.content or ())
    ]
    text = "\n".join(
        str(getattr(b, "text", "")) for b in (result.content or ()) if b.type == "text"
    )
    out: dict[str, Any] = {"content": blocks, "text": text}
    if isinstance(getattr(result, "structured_content", None), Mapping):
        out["structuredContent"] = dict(result.structured_content)
    return out


class McpSource:
    """Configured MCP servers, their tools as packs, on a loop and thread of their own."""

    def __init__(self, config: McpConfig, reaches: Reaches | None = None) -> None:
        self.config = config
        #: The runtime's grants: each server is confined to its packs' grant.
        self.reaches = reaches if reaches is not None else Reaches()
        self.connections: dict[str, ServerConnection] = {}
        #: pack name -> server name, for the packs registered by :meth:`start`.
        self.packs: dict[str, str] = {}
        self._watchers: list[HealthWatcher] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="mcp-source", daemon=True
        )
        self._thread.start()
        self._closed = False

    # -- health --------------------------------------------------------------------

    def watch(self, watcher: HealthWatcher) -> None:
        """Call ``watcher(pack, serving)`` whenever a pack's server changes state.

        It runs on the source's thread: hand the work to your own loop.
        """
        with self._lock:
            self._watchers.append(watcher)

    def pack_health(self) -> dict[str, bool]:
        """Each pack's health now: whether its server can take calls."""
        return {
            pack: self.connections[server].serving
            for pack, server in self.packs.items()
            if server in self.connections
        }

    def _on_state(self, conn: ServerConnection) -> None:
        serving = conn.serving
        with self._lock:
            watchers = list(self._watchers)
        for pack, server in list(self.packs.items()):
            if server == conn.config.name:
                for watcher in watchers:
                    try:
                        watcher(pack, serving)
                    # Callback boundary: a broken watcher must not stop the supervisor.
                    except Exception:
                        logger.exception("health watcher failed")

    # -- lifecycle -----------------------------------------------------------------

    def _run(self, coro: Any, timeout: float | None) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def start(self, registry: Registry) -> None:
        """Start every server, register its tools' packs; failures go to ``registry``."""
        servers = self.config.servers
        for server in servers:
            self.connections[server.name] = ServerConnection(
                server, self._on_state, reaches=self.reaches
            )
        budget = max((s.startup_timeout for s in servers), default=0.0) + START_SLACK
        try:
            results = self._run(self._start_all(), budget)
        except concurrent.futures.TimeoutError:
            results = [TimeoutError("did not start in time")] * len(servers)
            self._run(self._stop_all(), 30.0)
        for server, result in zip(servers, results, strict=True):
            conn = self.connections[server.name]
            if isinstance(result, BaseException):
                reason = f"{server.entry}: the MCP server did not start: {describe(result)}"
                registry.record_failure(LoadFailure(server.plugin, reason))
                continue
            self._register(registry, server, conn)

    async def _start_all(self) -> list[BaseException | None]:
        conns = list(self.connections.values())
        results = await asyncio.gather(*(c.start() for c in conns), return_exceptions=True)
        return list(results)

    def _register(self, registry: Registry, server: ServerConfig, conn: ServerConnection) -> None:
        version = server.version
        if version is None:
            reported = conn.server_version or ""
            version = reported if _SEMVER.match(reported) else "0.0.0"
        wanted = server.tools
        available = conn.tools
        skipped = conn.skipped_tools
        offered = {*available, *skipped}
        if wanted is not None:
            for missing in [t for t in wanted if t not in offered]:
                registry.record_failure(
                    LoadFailure(
                        server.plugin,
                        f"{server.entry}: tools lists {missing!r}, which the server does not "
                        f"offer (it offers: {', '.join(sorted(offered)) or 'none'})",
                    )
                )
        names = [t for t in (wanted or sorted(offered)) if t in offered]
        served = 0
        for tool_name in names:
            # A tool that cannot be served is a load failure of its own (the load-failure
            # channel: ListPacks, packctl serve and list); the server's other tools load.
            tool = available.get(tool_name)
            nameless = tool_name.startswith("#") and tool_name.endswith(NAMELESS)
            would_be = None if nameless else tool_pack_name(server, tool_name)
            if tool is None:
                registry.record_failure(
                    LoadFailure(
                        server.plugin,
                        f"{server.entry}: tool {tool_name!r} skipped: its definition in "
                        f"tools/list does not fit the MCP protocol ({skipped[tool_name]})",
                        would_be,
                    )
                )
                continue
            try:
                pack, _ = tool_pack(self, server, tool, version)
                registry.register(pack, server.plugin)
            except PluginLoadError as exc:
                registry.record_failure(
                    LoadFailure(
                        exc.plugin, f"{server.entry}: tool {tool_name!r}: {exc.reason}", exc.pack
                    )
                )
                continue
            # Registry boundary: a tool whose schema breaks the registry's own checks.
            except (TypeError, ValueError) as exc:
                registry.record_failure(
                    LoadFailure(
                        server.plugin, f"{server.entry}: tool {tool_name!r}: {exc}", would_be
                    )
                )
                continue
            self.packs[pack.name] = server.name
            served += 1
        if names and not served:
            # Nothing of it can be called: a load failure of the server, which is stopped.
            registry.record_failure(
                LoadFailure(
                    server.plugin,
                    f"{server.entry}: none of the {len(names)} tool(s) it exposes could be "
                    "loaded (each is a load failure of its own); the MCP server is stopped",
                )
            )
            self._run(conn.stop(), 30.0)

    def close(self, timeout: float = 15.0) -> None:
        """Stop every server and the source's loop (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._run(self._stop_all(), timeout)
        except concurrent.futures.TimeoutError:
            logger.warning("MCP servers did not stop within %ss", timeout)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)
            if not self._loop.is_running():
                self._loop.close()

    async def _stop_all(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()))

    # -- calls ---------------------------------------------------------------------

    async def call(
        self,
        server: ServerConfig,
        tool: str,
        vocab: ToolVocabulary,
        doc: dict[str, Any],
        ctx: Context,
        *,
        structured: bool,
    ) -> dict[str, Any]:
        """Call ``tool``; a failure raises a declared PackError or an unclassified one."""
        from mcp.shared.exceptions import MCPError

        conn = self.connections[server.name]
        timeout = ctx.remaining(default=server.call_timeout)
        future = asyncio.run_coroutine_threadsafe(conn.call(tool, doc, timeout), self._loop)
        try:
            result = await asyncio.wrap_future(future)
        except ServerUnavailable as exc:
            reason = f"{exc.public}; it is {exc.state}" if exc.public else f"it is {exc.state}"
            raise from_unavailable(vocab, server.name, reason) or exc from None
        except MCPError as exc:
            raise from_jsonrpc(vocab, server.name, tool, exc.code, exc.message, doc) from None
        except (OSError, EOFError) as exc:  # a transport that broke under the call
            raise from_unavailable(vocab, server.name, "the transport failed") or exc from None
        if getattr(result, "is_error", False):
            failure: PackError | McpToolFailure = from_is_error(
                vocab, server.name, tool, result, doc
            )
            raise failure
        return _output(result, structured)


def open_source(config: McpConfig, registry: Registry, reaches: Reaches | None = None) -> McpSource:
    """Start ``config``'s servers and register their packs into ``registry``, each server
    confined to its packs' grant in ``reaches`` (the runtime's grants; none by default).

    Raises :class:`McpConfigError` when the ``mcp`` SDK is not installed.
    """
    try:
        import mcp.client.session  # noqa: F401
    except ImportError as exc:
        raise McpConfigError(
            f"{config.path}: MCP servers need the MCP SDK ({exc}); "
            "install it with: pip install 'capability-packs[mcp]'"
        ) from None
    source = McpSource(config, reaches)
    source.start(registry)
    return source
