"""``packctl-mcp.toml``: which MCP servers to wrap as packs, their vocabularies and rules."""

from __future__ import annotations

import functools
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema

from control_plane._features.mcp.source.rules import (
    BUILTIN_CODES,
    BUILTIN_RULES,
    DEFAULT_CODES,
    Rule,
)
from control_plane._kernel.errors import CapabilityPackError
from control_plane._kernel.limits import ConfigError
from control_plane._kernel.pack import CodeDoc
from control_plane._kernel.vocabulary import BASELINE, INTERNAL_ERROR
from control_plane._resources import load_schema_file
from control_plane._runtime.tomlfile import TomlLocator, one_line, schema_problem, where

__all__ = [
    "DEFAULT_FILE",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ENV_CONFIG",
    "McpConfig",
    "McpConfigError",
    "ServerConfig",
    "ToolVocabulary",
    "find_config",
    "load_config",
]

#: Read from the current directory when neither ``--mcp-config`` nor the variable is set.
DEFAULT_FILE = "packctl-mcp.toml"
#: Environment variable naming the config file (an empty value: no MCP servers).
ENV_CONFIG = "PACKCTL_MCP_CONFIG"

StartMode = Literal["eager", "lazy"]

#: Default of ``max_message_bytes``: the largest JSON-RPC message read from a server (the
#: control plane's own gRPC maximum, so a result that could travel is never cut).
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024


class McpConfigError(CapabilityPackError, ConfigError):
    """A config file that cannot be used; the message names the file, the line and the key."""

    #: The problem's kind in ``packctl``'s JSON output.
    kind = "mcp_config"


@dataclass(frozen=True)
class ToolVocabulary:
    """What one tool's pack declares, and how its failures map onto it."""

    codes: tuple[str, ...]
    docs: Mapping[str, CodeDoc]
    rules: tuple[Rule, ...]
    jsonrpc_errors: Mapping[int, str]
    #: Whether a text no rule matched is read by the classification engine (the built-in
    #: reading, with the built-in rules: ``builtin_rules``).
    engine: bool = True

    @functools.cached_property
    def reachable(self) -> frozenset[str]:
        """Declared codes, plus baseline codes a declared pack code absorbs."""
        out = set(self.codes)
        for code in self.codes:
            doc = self.docs.get(code)
            if doc is not None:
                out.update(doc.absorbs)
        return frozenset(out)


@dataclass(frozen=True)
class ToolSettings:
    """Per-tool overrides from ``[servers.NAME.tool.TOOL]``."""

    name: str | None = None
    summary: str | None = None
    codes: tuple[str, ...] | None = None
    code_docs: Mapping[str, CodeDoc] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()
    jsonrpc_errors: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ServerConfig:
    """One ``[servers.NAME]`` table."""

    name: str
    file: Path
    line: int | None
    prefix: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    tools: tuple[str, ...] | None = None
    version: str | None = None
    start: StartMode = "eager"
    startup_timeout: float = 30.0
    call_timeout: float = 300.0
    health_interval: float = 5.0
    restart_backoff: float = 0.5
    restart_backoff_max: float = 30.0
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    codes: tuple[str, ...] = DEFAULT_CODES
    code_docs: Mapping[str, CodeDoc] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()
    builtin_rules: bool = True
    jsonrpc_errors: Mapping[int, str] = field(default_factory=dict)
    tool_settings: Mapping[str, ToolSettings] = field(default_factory=dict)

    @property
    def entry(self) -> str:
        """``FILE:LINE: servers.NAME``: how load failures and logs name this entry."""
        where_ = f"{self.file}:{self.line}" if self.line else str(self.file)
        return f"{where_}: servers.{self.name}"

    @property
    def plugin(self) -> str:
        """The plugin name its packs are registered under (``mcp:NAME``)."""
        return f"mcp:{self.name}"

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "streamable-http"

    def settings(self, tool: str) -> ToolSettings:
        return self.tool_settings.get(tool, ToolSettings())

    def vocabulary(self, tool: str) -> ToolVocabulary:
        """The vocabulary of ``tool``'s pack: its own settings over the server's."""
        own = self.settings(tool)
        codes = own.codes if own.codes is not None else self.codes
        docs = {**BUILTIN_CODES, **self.code_docs, **own.code_docs}
        rules = (*own.rules, *self.rules, *(BUILTIN_RULES if self.builtin_rules else ()))
        return ToolVocabulary(
            codes=codes,
            docs={c: docs[c] for c in codes if c not in BASELINE},
            rules=rules,
            jsonrpc_errors={**self.jsonrpc_errors, **own.jsonrpc_errors},
            engine=self.builtin_rules,
        )


@dataclass(frozen=True)
class McpConfig:
    """A validated config file."""

    path: Path
    servers: tuple[ServerConfig, ...]


# -- finding and reading -------------------------------------------------------------


def find_config(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """The config file to read, or ``None`` for no MCP servers.

    ``explicit`` (``--mcp-config``) must exist; ``$PACKCTL_MCP_CONFIG`` too (an empty value
    turns the default off); ``./packctl-mcp.toml`` is read only when present.
    """
    if explicit is not None and str(explicit) != "":
        path = Path(explicit)
        if not path.is_file():
            raise McpConfigError(f"{path}: no such MCP config file")
        return path
    env = os.environ.get(ENV_CONFIG)
    if env is not None:
        if not env:
            return None
        path = Path(env)
        if not path.is_file():
            raise McpConfigError(f"{path}: no such MCP config file (from ${ENV_CONFIG})")
        return path
    default = Path(DEFAULT_FILE)
    return default if default.is_file() else None


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = load_schema_file("mcp-source.schema.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def load_config(path: str | os.PathLike[str]) -> McpConfig:
    """Read and validate ``path``; :class:`McpConfigError` if it cannot be used."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise McpConfigError(f"{path}: no such MCP config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise McpConfigError(f"{path}: cannot read the MCP config file: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise McpConfigError(f"{path}: not valid TOML: {one_line(str(exc))}") from None
    locator = TomlLocator(text)
    _check_schema(path, data, locator)
    base = path.resolve().parent
    servers = tuple(
        _server(path, base, name, raw, locator) for name, raw in data["servers"].items()
    )
    return McpConfig(path=path, servers=servers)


def _check_schema(path: Path, data: dict[str, Any], locator: TomlLocator) -> None:
    def explain(error: jsonschema.exceptions.ValidationError) -> str | None:
        if error.validator == "oneOf" and isinstance(error.instance, dict):
            if "command" in error.instance and "url" in error.instance:
                return "give either command (stdio) or url (streamable HTTP), not both"
            return "a server needs command (stdio) or url (streamable HTTP)"
        if error.validator == "anyOf" and error.context:
            return f'{error.instance!r} is neither "all" nor a list of tool names'
        return None

    problem = schema_problem(_validator(), data, path, locator, explain)
    if problem is not None:
        raise McpConfigError(problem)


# -- one server ----------------------------------------------------------------------


def _fault(
    path: Path, locator: TomlLocator, keys: Sequence[str | int], text: str
) -> McpConfigError:
    return McpConfigError(where(path, locator, keys) + text)


def _docs(
    path: Path, locator: TomlLocator, keys: list[str | int], raw: Mapping[str, Any]
) -> dict[str, CodeDoc]:
    out: dict[str, CodeDoc] = {}
    for code, doc in raw.items():
        if code in BASELINE:
            raise _fault(
                path,
                locator,
                [*keys, code],
                f"{code!r} is a baseline code, documented by the vocabulary; remove it here",
            )
        for absorbed in doc.get("absorbs", ()):
            if absorbed not in BASELINE:
                raise _fault(
                    path,
                    locator,
                    [*keys, code, "absorbs"],
                    f"{absorbed!r} is not a baseline code",
                )
        out[code] = CodeDoc(
            description=doc["description"],
            retryable=bool(doc.get("retryable", False)),
            recovery_hint=doc["recovery_hint"],
            absorbs=tuple(doc.get("absorbs", ())),
        )
    return out


def _rules(
    path: Path, locator: TomlLocator, keys: list[str | int], raw: Sequence[Mapping[str, Any]]
) -> tuple[Rule, ...]:
    rules: list[Rule] = []
    for index, item in enumerate(raw):
        try:
            pattern = re.compile(item["match"], re.IGNORECASE)
        except re.error as exc:
            raise _fault(
                path, locator, [*keys, index, "match"], f"not a regular expression: {exc}"
            ) from None
        line = locator.line([*keys, index])
        rules.append(
            Rule(
                pattern=pattern,
                code=item["code"],
                message=item.get("message"),
                retry_after=item.get("retry_after"),
                origin=f"{path}:{line}" if line else str(path),
            )
        )
    return tuple(rules)


def _jsonrpc(raw: Mapping[str, str]) -> dict[int, str]:
    return {int(key): code for key, code in raw.items()}


def _check_codes(
    path: Path,
    locator: TomlLocator,
    keys: list[str | int],
    codes: Sequence[str],
    docs: Mapping[str, CodeDoc],
) -> None:
    for index, code in enumerate(codes):
        if code == INTERNAL_ERROR:
            raise _fault(
                path, locator, [*keys, "codes"], "internal_error is always declared; remove it"
            )
        if code not in BASELINE and code not in docs and code not in BUILTIN_CODES:
            raise _fault(
                path,
                locator,
                [*keys, "codes"],
                f"codes[{index}] {code!r} is neither a baseline code nor a built-in MCP code "
                f"({', '.join(sorted(BUILTIN_CODES))}): document it under code_docs.{code}",
            )
    for code in docs:
        if code not in codes:
            raise _fault(
                path,
                locator,
                [*keys, "code_docs", code],
                f"{code!r} is documented but not declared in codes",
            )


def _check_targets(
    path: Path,
    locator: TomlLocator,
    keys: list[str | int],
    codes: Sequence[str],
    docs: Mapping[str, CodeDoc],
    rules: Sequence[Rule],
    jsonrpc: Mapping[str, str],
) -> None:
    reachable = set(codes)
    for code in codes:
        doc = docs.get(code) or BUILTIN_CODES.get(code)
        if doc is not None:
            reachable.update(doc.absorbs)
    for index, rule in enumerate(rules):
        if rule.code not in reachable:
            raise _fault(
                path,
                locator,
                [*keys, "rules", index, "code"],
                f"{rule.code!r} is not declared in codes",
            )
    for key, code in jsonrpc.items():
        if code not in reachable:
            raise _fault(
                path,
                locator,
                [*keys, "jsonrpc_errors", key],
                f"{code!r} is not declared in codes",
            )


def _server(
    path: Path, base: Path, name: str, raw: Mapping[str, Any], locator: TomlLocator
) -> ServerConfig:
    keys: list[str | int] = ["servers", name]
    codes = tuple(raw.get("codes", DEFAULT_CODES))
    docs = _docs(path, locator, [*keys, "code_docs"], raw.get("code_docs", {}))
    _check_codes(path, locator, keys, codes, docs)
    rules = _rules(path, locator, [*keys, "rules"], raw.get("rules", ()))
    _check_targets(path, locator, keys, codes, docs, rules, raw.get("jsonrpc_errors", {}))
    tools_raw = raw.get("tools", "all")
    tools = None if tools_raw == "all" else tuple(tools_raw)
    settings: dict[str, ToolSettings] = {}
    for tool, own in raw.get("tool", {}).items():
        tkeys: list[str | int] = [*keys, "tool", tool]
        if tools is not None and tool not in tools:
            raise _fault(path, locator, tkeys, f"tool {tool!r} is configured but not in tools")
        own_docs = _docs(path, locator, [*tkeys, "code_docs"], own.get("code_docs", {}))
        own_codes = tuple(own["codes"]) if "codes" in own else None
        eff_codes = own_codes if own_codes is not None else codes
        all_docs = {**docs, **own_docs}
        if own_codes is not None:
            _check_codes(path, locator, tkeys, own_codes, own_docs)
        own_rules = _rules(path, locator, [*tkeys, "rules"], own.get("rules", ()))
        _check_targets(
            path,
            locator,
            tkeys,
            eff_codes,
            all_docs,
            [*own_rules, *rules],
            {**raw.get("jsonrpc_errors", {}), **own.get("jsonrpc_errors", {})},
        )
        settings[tool] = ToolSettings(
            name=own.get("name"),
            summary=own.get("summary"),
            codes=own_codes,
            code_docs=own_docs,
            rules=own_rules,
            jsonrpc_errors=_jsonrpc(own.get("jsonrpc_errors", {})),
        )
    command = raw.get("command")
    if command is not None and "/" in command and not os.path.isabs(command):
        command = str(base / command)
    cwd = raw.get("cwd")
    return ServerConfig(
        name=name,
        file=path,
        line=locator.line(keys),
        prefix=raw["prefix"],
        command=command,
        args=tuple(raw.get("args", ())),
        env=dict(raw.get("env", {})),
        cwd=(base / cwd) if cwd is not None else None,
        url=raw.get("url"),
        headers=dict(raw.get("headers", {})),
        tools=tools,
        version=raw.get("version"),
        start=raw.get("start", "eager"),
        startup_timeout=float(raw.get("startup_timeout", 30.0)),
        call_timeout=float(raw.get("call_timeout", 300.0)),
        health_interval=float(raw.get("health_interval", 5.0)),
        restart_backoff=float(raw.get("restart_backoff", 0.5)),
        restart_backoff_max=float(raw.get("restart_backoff_max", 30.0)),
        max_message_bytes=int(raw.get("max_message_bytes", DEFAULT_MAX_MESSAGE_BYTES)),
        codes=codes,
        code_docs=docs,
        rules=rules,
        builtin_rules=bool(raw.get("builtin_rules", True)),
        jsonrpc_errors=_jsonrpc(raw.get("jsonrpc_errors", {})),
        tool_settings=settings,
    )
