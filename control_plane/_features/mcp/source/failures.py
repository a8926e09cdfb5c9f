"""MCP failures (``isError`` results, JSON-RPC errors, transport failures) to the pack's codes."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from control_plane._features.mcp.source.config import ToolVocabulary
from control_plane._features.mcp.source.rules import (
    BARE_ARGUMENT_CODES,
    ENGINE_CODES,
    first_line,
    first_match,
    retry_after_in,
)
from control_plane._kernel.errors import CapabilityPackError, PackError
from control_plane._kernel.evidence import CALLER_INPUT, read_lines
from control_plane._kernel.vocabulary import BASELINE

__all__ = [
    "CONNECTION_CLOSED",
    "INTERNAL_ERROR_CODE",
    "INVALID_PARAMS",
    "METHOD_NOT_FOUND",
    "REQUEST_TIMEOUT",
    "McpToolFailure",
    "from_is_error",
    "from_jsonrpc",
    "from_unavailable",
    "result_text",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR_CODE = -32603
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001

_UNKNOWN_TOOL = re.compile(r"unknown tool|tool \S+ not found|no such tool", re.IGNORECASE)


class McpToolFailure(CapabilityPackError):
    """A failure no rule classified: ``internal_error`` for the caller.

    Its message holds the server's raw text; the control plane records it in the incident
    store and sends the caller only the fixed text and the reference id.
    """

    def __init__(self, server: str, tool: str, kind: str, text: str) -> None:
        super().__init__(f"MCP server {server}, tool {tool}: unclassified {kind}: {text}")
        self.server = server
        self.tool = tool
        self.kind = kind
        self.text = text


def _typed(
    vocab: ToolVocabulary,
    candidates: Sequence[str],
    message: str,
    *,
    retry_after: float | None = None,
) -> PackError | None:
    """A PackError for the first candidate the pack can report, else ``None``."""
    for code in candidates:
        if code in vocab.codes or (code in BASELINE and code in vocab.reachable):
            if code == "schema_mismatch":
                return PackError(code, message, partial_result={})
            return PackError(
                code, message, retry_after=retry_after if code == "rate_limited" else None
            )
    return None


#: The prefix the Python SDK's servers put before a tool's exception text.
_SDK_PREFIX = re.compile(r"^(error executing tool \S+|mcp error -?\d+): ", re.IGNORECASE)


def _excerpt(text: str) -> str:
    """The text's first line, scrubbed and cut, without the SDK's boilerplate prefix."""
    return _SDK_PREFIX.sub("", first_line(text))


def _strings(value: Any, depth: int = 0) -> Iterator[str]:
    """The string values of a call's arguments (nested, bounded)."""
    if isinstance(value, str):
        yield value
    elif depth < 8 and isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item, depth + 1)
    elif depth < 8 and isinstance(value, list):
        for item in value[:100]:
            yield from _strings(item, depth + 1)


def _bare_argument(
    vocab: ToolVocabulary, tool: str, text: str, arguments: Mapping[str, Any] | None
) -> PackError | None:
    """The failure's whole text is one of the call's argument values (see
    :data:`~control_plane._features.mcp.source.rules.BARE_ARGUMENT_CODES`)."""
    if not arguments:
        return None
    said = _SDK_PREFIX.sub("", text.strip()).strip().strip("'\"")
    if not said or "\n" in said:
        return None
    if not any(said == value.strip() for value in _strings(arguments) if value.strip()):
        return None
    return _typed(
        vocab,
        BARE_ARGUMENT_CODES,
        f"{tool}: the MCP server could not use {first_line(said)!r} (missing, or not what "
        "the tool works on, such as a path that is not a repository)",
    )


def _by_rules(
    vocab: ToolVocabulary, tool: str, text: str, arguments: Mapping[str, Any] | None = None
) -> PackError | None:
    bare = _bare_argument(vocab, tool, text, arguments)
    if bare is not None:
        return bare
    rule = first_match(vocab.rules, text, vocab.reachable)
    if rule is None:
        return _by_engine(vocab, tool, text) if vocab.engine else None
    message = rule.message or f"{tool}: {_excerpt(text) or rule.code}"
    retry_after = rule.retry_after if rule.retry_after is not None else retry_after_in(text)
    return _typed(vocab, [rule.code], message, retry_after=retry_after)


def _by_engine(vocab: ToolVocabulary, tool: str, text: str) -> PackError | None:
    """``text`` read by the classification engine as a tool's output is (its first line
    that says something; quoted values and paths are not read), the engine's code mapped to
    the pack's by :data:`~control_plane._features.mcp.source.rules.ENGINE_CODES`."""
    found = read_lines(_SDK_PREFIX.sub("", text.strip()))
    if found is None:
        return None
    code, _, phrase = found
    candidates = ENGINE_CODES.get("input" if phrase in CALLER_INPUT else code, ())
    message = f"{tool}: {_excerpt(text) or code}"
    return _typed(vocab, candidates, message, retry_after=retry_after_in(text))


def result_text(result: Any) -> str:
    """The text of a tool result: its text blocks joined (the structured content else)."""
    parts = [
        str(getattr(block, "text", ""))
        for block in (getattr(result, "content", None) or ())
        if getattr(block, "type", None) == "text"
    ]
    text = "\n".join(p for p in parts if p)
    if not text and getattr(result, "structured_content", None) is not None:
        text = str(result.structured_content)
    return text


def from_is_error(
    vocab: ToolVocabulary,
    server: str,
    tool: str,
    result: Any,
    arguments: Mapping[str, Any] | None = None,
) -> PackError | McpToolFailure:
    """A result with ``isError: true`` (``arguments``: the call's, see
    :func:`_bare_argument`)."""
    text = result_text(result)
    typed = _by_rules(vocab, tool, text, arguments)
    return typed or McpToolFailure(server, tool, "isError result", text)


def from_jsonrpc(
    vocab: ToolVocabulary,
    server: str,
    tool: str,
    code: int,
    message: str,
    arguments: Mapping[str, Any] | None = None,
) -> PackError | McpToolFailure:
    """A JSON-RPC error answering ``tools/call``."""
    if code in vocab.jsonrpc_errors:
        mapped = _typed(
            vocab,
            [vocab.jsonrpc_errors[code]],
            f"{tool}: {_excerpt(message) or 'error ' + str(code)}",
            retry_after=retry_after_in(message),
        )
        if mapped is not None:
            return mapped
    typed: PackError | None = None
    if code == CONNECTION_CLOSED:
        typed = from_unavailable(vocab, server, "the connection closed during the call")
    elif code == REQUEST_TIMEOUT:
        typed = _typed(vocab, ["timeout"], f"{tool}: the MCP server did not answer in time")
    elif code == METHOD_NOT_FOUND or (code == INVALID_PARAMS and _UNKNOWN_TOOL.search(message)):
        typed = _typed(
            vocab, ["tool_unavailable"], f"{tool}: the MCP server does not offer this tool"
        )
    elif code == INVALID_PARAMS:
        typed = _by_rules(vocab, tool, message) or _typed(
            vocab,
            ["invalid_arguments", "schema_mismatch"],
            f"{tool}: the MCP server refused the arguments: {_excerpt(message)}",
        )
    elif code in (PARSE_ERROR, INVALID_REQUEST):
        typed = None  # our own request was refused: a bug, not the caller's
    else:  # internal error and server-defined codes: the text may still say what happened
        typed = _by_rules(vocab, tool, message, arguments)
    return typed or McpToolFailure(server, tool, f"JSON-RPC error {code}", message)


def from_unavailable(vocab: ToolVocabulary, server: str, reason: str) -> PackError | None:
    """The server is not there (transport failure): ``server_unavailable``/``network_error``."""
    message = f"the MCP server {server} is not available ({reason}); it is restarted with backoff"
    return _typed(vocab, ["server_unavailable", "network_error"], message)
