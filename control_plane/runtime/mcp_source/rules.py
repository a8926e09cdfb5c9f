"""The rule table: an MCP server's failure text to a declared code, configured rules first."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from control_plane.core.pack import CodeDoc
from control_plane.core.redact import scrub
from control_plane.core.vocabulary import WELL_KNOWN_PACK_CODES

__all__ = [
    "BARE_ARGUMENT_CODES",
    "BUILTIN_CODES",
    "BUILTIN_RULES",
    "DEFAULT_CODES",
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


def _rule(pattern: str, code: str) -> Rule:
    return Rule(re.compile(pattern, re.IGNORECASE), code)


#: Built-in rules, in the order they are tried (after the configured ones). Narrow before
#: broad: "path outside allowed directories" is a permission problem even though the text
#: also names a path, and "Invalid timezone: no time zone found" is an invalid argument.
BUILTIN_RULES: tuple[Rule, ...] = (
    _rule(
        r"rate[ _-]?limit|too many requests|\bquota\b|\b429\b|throttl",
        "rate_limited",
    ),
    _rule(
        r"timed? ?out\b|deadline exceeded|\bETIMEDOUT\b",
        "timeout",
    ),
    _rule(
        r"access denied|permission denied|\bEACCES\b|\bEPERM\b|outside (of )?(the )?allowed"
        r"|not (in|within) (the )?allowed|\bforbidden\b|not permitted|unauthori[sz]ed access"
        # mcp-server-fetch: robots.txt refuses autonomous fetching
        r"|autonomous fetching (of this page )?is not allowed",
        "permission_denied",
    ),
    # git "Cannot create branch 'x': refs/heads/x already exists", filesystem
    # "EEXIST: file already exists, mkdir '...'" and "Destination already exists: ..."
    _rule(r"already exists|\bEEXIST\b", "already_exists"),
    _rule(
        r"(^|: )(invalid|malformed) [a-z]|validation error|input validation"
        r"|cannot specify both|invalid arguments?\b|\bmissing required\b|-32602"
        # filesystem: a file where a directory is expected, or the other way round
        r"|\bENOTDIR\b|\bEISDIR\b|not a directory|illegal operation on a directory",
        "invalid_arguments",
    ),
    _rule(
        r"\bENOENT\b|no such (file|directory|path)|\bnot found\b|does not exist|doesn'?t exist"
        r"|did not resolve|unknown revision|no such \w+"
        # git "pathspec 'x' did not match any files", "No item found with id x" (a base
        # branch), filesystem "Could not find exact match for edit", fetch "status code 404"
        r"|did not match any|\bno \w+ found\b|could not find|status code (404|410)\b",
        "not_found",
    ),
)

#: The code of a failure whose whole text is one of the call's own argument values (after
#: the SDK's "Error executing tool T: " prefix): the server's exception named only what it
#: was looking up -- mcp-server-git's InvalidGitRepositoryError and NoSuchPathError
#: (``Error executing tool git_status: /some/path``), a ``KeyError('name')``. Tried before
#: the rules: the words of a caller's path ("/tmp/timeout") are not the server's.
BARE_ARGUMENT_CODES: tuple[str, ...] = ("not_found", "invalid_arguments")

#: Pack codes the MCP source can produce, with their documentation (a config may override
#: a description or hint under ``code_docs``).
BUILTIN_CODES: Mapping[str, CodeDoc] = {
    "invalid_arguments": CodeDoc(
        description=(
            "The MCP server refused the arguments (JSON-RPC invalid params, or a failure text "
            "saying an argument is invalid) although they matched the tool's input schema."
        ),
        retryable=False,
        recovery_hint=(
            "Fix the argument the message names (format, range, combination); retrying "
            "unchanged fails the same way."
        ),
    ),
    "permission_denied": CodeDoc(
        description=(
            "The MCP server refused access: a path outside its allowed roots or repository, "
            "or a permission its process lacks."
        ),
        retryable=False,
        recovery_hint=(
            "Use a path inside the server's allowed directories; if the access is needed, "
            "ask the operator to widen the server's roots."
        ),
    ),
    "server_unavailable": CodeDoc(
        description=(
            "The MCP server is not running or not answering: its process died or did not "
            "start, it is being restarted, or its HTTP endpoint refused the connection."
        ),
        retryable=True,
        recovery_hint=(
            "Retry after a few seconds: the control plane restarts the server with backoff. "
            "If it persists, the operator should read the server's log."
        ),
        absorbs=("network_error",),
    ),
    "already_exists": CodeDoc(
        description=WELL_KNOWN_PACK_CODES["already_exists"]["description"],
        retryable=False,
        recovery_hint=WELL_KNOWN_PACK_CODES["already_exists"]["recovery_hint"],
    ),
    "tool_unavailable": CodeDoc(
        description=(
            "The MCP server no longer offers this tool (JSON-RPC method not found, or "
            "'unknown tool'): it changed since the control plane listed it."
        ),
        retryable=False,
        recovery_hint="Do not retry; list the packs again or tell the operator.",
    ),
}

#: What a server declares when its config names no ``codes``.
DEFAULT_CODES: tuple[str, ...] = (
    "not_found",
    "timeout",
    "rate_limited",
    "invalid_arguments",
    "permission_denied",
    "already_exists",
    "server_unavailable",
    "tool_unavailable",
)

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
