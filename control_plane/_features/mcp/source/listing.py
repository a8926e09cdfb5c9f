"""A ``tools/list`` answer checked tool by tool: a tool the SDK refuses is skipped alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

__all__ = ["NAMELESS", "ToolListing"]

#: The version the SDK assumes before the handshake settles one.
DEFAULT_VERSION = "2025-11-25"
#: Longest tool name quoted (a name is the server's text).
MAX_NAME = 200
#: The end of the label of a tool listed without a name: ``#INDEX (no name)``.
NAMELESS = " (no name)"


class ToolListing:
    """The tools/list answers of one session, filtered tool by tool."""

    def __init__(self) -> None:
        # Imported here: the SDK comes with the ``mcp`` extra; ``source.py``, which
        # ``packctl`` imports without it, imports this module for NAMELESS.
        import mcp_types as types
        from mcp_types.methods import validate_server_result

        self._request = types.JSONRPCRequest
        self._response = types.JSONRPCResponse
        self._answer = (types.JSONRPCResponse, types.JSONRPCError)
        self._validate: Callable[..., None] = validate_server_result
        #: The negotiated protocol version (set once ``initialize`` answered).
        self.version: str | None = None
        #: Tools dropped from a listing: their name (``#INDEX (no name)`` without one) -> why.
        self.skipped: dict[str, str] = {}
        self._pending: set[Any] = set()

    def streams(self, read: Any, write: Any) -> tuple[Any, Any]:
        """The transport's streams, seen through this listing."""
        return _Read(read, self), _Write(write, self)

    def sent(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, self._request) and message.method == "tools/list":
            self._pending.add(message.id)

    def received(self, item: Any) -> Any:
        message = getattr(item, "message", None)
        if isinstance(message, self._answer) and message.id in self._pending:
            self._pending.discard(message.id)
            if isinstance(message, self._response):
                self._filter(message.result)
        return item

    def _filter(self, result: dict[str, Any]) -> None:
        tools = result.get("tools")
        if not isinstance(tools, list):
            return  # the SDK refuses the listing whole, and says why
        version = self.version or DEFAULT_VERSION
        if self._refusal(version, result) is None:
            return  # every tool is valid: the usual case, one validation
        if self._refusal(version, {**result, "tools": []}) is not None:
            return  # wrong outside its tools: nothing to skip, the SDK refuses it
        kept = []
        for index, tool in enumerate(tools):
            refused = self._refusal(version, {**result, "tools": [tool]})
            if refused is None:
                kept.append(tool)
            else:
                self.skipped[_label(tool, index)] = refused
        result["tools"] = kept

    def _refusal(self, version: str, result: dict[str, Any]) -> str | None:
        """Why the SDK refuses ``result`` (its errors' places and kinds, not the input),
        else ``None``; ``None`` too for a version it does not know (it decides then)."""
        try:
            self._validate("tools/list", version, result)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_input=False, include_context=False)
            parts = []
            for error in errors[:3]:
                place = ".".join(str(p) for p in error["loc"][2:])  # past ("tools", index)
                parts.append(f"{place or 'the tool'}: {error['msg']}")
            more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
            return "; ".join(parts) + more
        except (KeyError, ValueError):  # not a method or version of the SDK's tables
            return None
        return None


def _label(tool: Any, index: int) -> str:
    name = tool.get("name") if isinstance(tool, dict) else None
    if isinstance(name, str) and name:
        return name if len(name) <= MAX_NAME else name[:MAX_NAME] + "..."
    return f"#{index}{NAMELESS}"


class _Read:
    """The transport's read stream; answers to ``tools/list`` filtered on the way."""

    def __init__(self, inner: Any, listing: ToolListing) -> None:
        self._inner = inner
        self._listing = listing

    @property
    def last_context(self) -> Any:  # the SDK's dispatcher reads it when there is one
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        return self._listing.received(await self._inner.receive())

    def __aiter__(self) -> _Read:
        return self

    async def __anext__(self) -> Any:
        return self._listing.received(await self._inner.__anext__())

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Read:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Write:
    """The transport's write stream; ``tools/list`` requests noted on the way."""

    def __init__(self, inner: Any, listing: ToolListing) -> None:
        self._inner = inner
        self._listing = listing

    async def send(self, item: Any) -> None:
        self._listing.sent(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Write:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
