"""The rule table: an MCP server's failure text to a declared code, configured rules first,
then the built-in ones (data: ``builtin.toml``)."""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from control_plane._kernel.pack import CodeDoc
from control_plane._kernel.redact import scrub
from control_plane._kernel.vocabulary import WELL_KNOWN_PACK_CODES

__all__ = [
    "BARE_ARGUMENT_CODES",
    "BUILTIN_CODES",
    "BUILTIN_RULES",
    "DEFAULT_CODES",
    "ENGINE_CODES",
    "MAX_TEXT_MESSAGE",
    "Rule",
    "first_line",
    "retry_after_in",
]

#: The longest excerpt of a server's text that goes into a caller's message (scrubbed).
MAX_TEXT_MESSAGE = 300


@dataclass(frozen=True)
class Rule:
    """``pattern`` found in a failure's text -> ``code``.

    ``message`` replaces the text in the caller's message (default: the text's first line,
    scrubbed and cut); ``retry_after`` is the delay of a ``rate_limited`` code (default: a
    number of seconds found in the text). ``origin`` says where the rule was written
    (``FILE:LINE`` or ``builtin``), for logs and docs.
    """

    pattern: re.Pattern[str]
    code: str
    message: str | None = None
    retry_after: float | None = None
    origin: str = "builtin"

    def matches(self, text: str) -> bool:
        return self.pattern.search(text) is not None


with Path(__file__).with_name("builtin.toml").open("rb") as _handle:
    _BUILTIN: dict[str, Any] = tomllib.load(_handle)


def _doc(code: str, raw: Mapping[str, Any]) -> CodeDoc:
    known: Mapping[str, Any] = WELL_KNOWN_PACK_CODES[code] if raw.get("well_known") else raw
    return CodeDoc(
        description=known["description"],
        retryable=bool(raw.get("retryable", False)),
        recovery_hint=known["recovery_hint"],
        absorbs=tuple(raw.get("absorbs", ())),
    )


#: Built-in rules (``builtin.toml``, in the format of a config's ``[[rules]]``), in the
#: order they are tried (after the configured ones). Narrow before broad: "path outside
#: allowed directories" is a permission problem even though the text also names a path.
BUILTIN_RULES: tuple[Rule, ...] = tuple(
    Rule(re.compile(row["match"], re.IGNORECASE), row["code"]) for row in _BUILTIN["rules"]
)
#: The code of a failure whose whole text is one of the call's own argument values (after
#: the SDK's "Error executing tool T: " prefix): the server's exception named only what it
#: was looking up (mcp-server-git's ``NoSuchPathError``: ``Error executing tool git_status:
#: /some/path``, a ``KeyError('name')``). Tried before the rules: the words of a caller's
#: path ("/tmp/timeout") are not the server's.
BARE_ARGUMENT_CODES: tuple[str, ...] = tuple(_BUILTIN["bare_argument_codes"])
#: Pack codes the MCP source can produce, with their documentation (a config may override
#: a description or hint under ``code_docs``).
BUILTIN_CODES: Mapping[str, CodeDoc] = {
    code: _doc(code, raw) for code, raw in _BUILTIN["code_docs"].items()
}
#: After the rules, a failure's text read by the classification engine: the engine's code
#: (``input``: the caller's input refused) -> the MCP codes it stands for, the first the
#: pack declares (``[engine]`` of ``builtin.toml``).
ENGINE_CODES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {code: tuple(codes) for code, codes in _BUILTIN["engine"].items()}
)
#: What a server declares when its config names no ``codes``.
DEFAULT_CODES: tuple[str, ...] = tuple(_BUILTIN["codes"])

_RETRY_AFTER = re.compile(
    r"(?:retry[ -]?after|try again in|wait|reset(?:s)? in)\D{0,12}?(\d+(?:\.\d+)?)\s*"
    r"(ms|milliseconds?|s|sec(?:ond)?s?|m|min(?:ute)?s?)?\b",
    re.IGNORECASE,
)


def retry_after_in(text: str) -> float | None:
    """Seconds to wait as the text says it ("retry after 30s", "try again in 2 minutes")."""
    match = _RETRY_AFTER.search(text)
    if match is None:
        return None
    value = float(match.group(1))
    unit = (match.group(2) or "s").lower()
    if unit.startswith("ms") or unit.startswith("milli"):
        value /= 1000.0
    elif unit.startswith("m"):
        value *= 60.0
    return value if math.isfinite(value) and value >= 0 else None


def first_line(text: str, limit: int = MAX_TEXT_MESSAGE) -> str:
    """The first non-empty line of ``text``, scrubbed, then cut to ``limit`` characters."""
    for line in text.splitlines():
        if line.strip():
            clean = scrub(line.strip())
            return clean if len(clean) <= limit else clean[:limit] + "..."
    return ""


def first_match(rules: Iterable[Rule], text: str, declared: frozenset[str]) -> Rule | None:
    """The first rule that matches ``text`` and whose code is in ``declared``."""
    for rule in rules:
        if rule.code in declared and rule.matches(text):
            return rule
    return None
