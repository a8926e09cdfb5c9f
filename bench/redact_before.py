"""main's scrubber as of f96328e, frozen for `python -m bench.redact` (the "before" figures).

Every string that leaves the control plane passes :func:`scrub`. ``internal_error``
never carries the original text: :class:`Incidents` keeps the full exception under a
reference id for operators, and the caller receives only that id.
"""

from __future__ import annotations

import logging
import math
import re
import secrets
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "INTERNAL_DETAIL",
    "INTERNAL_MESSAGE",
    "Incident",
    "Incidents",
    "new_reference_id",
    "scrub",
    "scrub_data",
]

INTERNAL_MESSAGE = "The pack failed in a way that could not be classified."
INTERNAL_DETAIL = "redacted: the original error is kept server-side under reference_id"
REDACTED = "[REDACTED]"

logger = logging.getLogger("capability_packs.incidents")

_KEYS = (
    r"access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|token|api[_-]?key|apikey"
    r"|x-api-key|secret|client[_-]?secret|secret[_-]?key|aws_secret_access_key|password"
    r"|passwd|pwd|passphrase|private[_-]?key|credentials?|session[_-]?id|sig|signature"
)

#: Characters of a credential after an auth scheme (RFC 7235 token68).
_CRED = r"[A-Za-z0-9._~+/=\-]"


def _looks_secret(value: str) -> bool:
    """Whether a word after ``Bearer``/``Basic`` or in a URL's user part is a credential.

    Credentials carry digits, inner capitals, base64 padding or ``+/_``; ordinary words
    ("a basic example", "the token expired", ``ssh://git@host``) carry none of them.
    """
    if any(c.isdigit() or c in "+/_" for c in value):
        return True
    if value.endswith("=") and len(value) % 4 == 0:  # base64 padding
        return True
    return any(c.isupper() for c in value[1:])


def _scheme(match: re.Match[str]) -> str:
    value = match.group(2)
    bearer = match.group(1).lower() == "bearer" and len(value) >= 16
    if not (bearer or _looks_secret(value)):
        return match.group(0)
    return f"{match.group(1)} {REDACTED}"


def _userinfo(match: re.Match[str]) -> str:
    user, password = match.group(2), match.group(3)
    if password is None and not _looks_secret(user):
        return match.group(0)
    return f"{match.group(1)}{REDACTED}@"


def _pair(match: re.Match[str]) -> str:
    quote = match.group("q") or ""  # set only when the value was quoted
    return f"{match.group('key')}{quote}{REDACTED}{quote}"


_RULES: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    # PEM private keys, whole or cut short.
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.S,
        ),
        "[REDACTED PRIVATE KEY]",
    ),
    # An Authorization header's credential, whatever it looks like ("Bearer abc").
    (
        re.compile(
            r"(?i)\b((?:proxy-)?authorization\\{0,3}[\"']?\s*[:=]\s*\\{0,3}[\"']?\s*"
            r"(?:[A-Za-z][A-Za-z0-9\-]*\s+)?)(" + _CRED + r"++)(?!\s*\[REDACTED)"
        ),
        lambda m: f"{m.group(1)}{REDACTED}",
    ),
    # Cookie headers carry sessions: the whole value goes.
    (re.compile(r"(?im)\b((?:set-)?cookie\s*:\s*)[^\r\n\"]+"), lambda m: m.group(1) + REDACTED),
    # Authorization schemes: "Bearer <token>", "Basic <base64>", ...
    (re.compile(r"(?i)\b(bearer|basic|digest|token)\s+(" + _CRED + r"{6,})"), _scheme),
    # Credentials in URLs: scheme://user:pass@host (the password may hold '@' or ':'),
    # or scheme://token@host.
    (
        re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^/\s:@?#]*)(?::([^/\s?#]*))?@"),
        _userinfo,
    ),
    # JSON Web Tokens.
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"), REDACTED),
    # Cloud and vendor keys (delimited by anything but key characters, '_' included).
    (
        re.compile(
            r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}(?![A-Z0-9])"
        ),
        REDACTED,
    ),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), REDACTED),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})\b"), REDACTED),
    (re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}\b"), REDACTED),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}\b"), REDACTED),
    (re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}\b"), REDACTED),
    # key=value, key: value, "key": "value" pairs; the key may be prefixed (DB_PASSWORD=),
    # a quoted value runs to its closing quote. Quotes may be backslash-escaped, as they are
    # when a JSON document is quoted inside another message (a validator's, a log line's).
    # Only the value is replaced, so the match starts at the key itself (cheaper to scan).
    (
        re.compile(
            r"(?i)(?P<key>(?<![A-Za-z0-9])(?:" + _KEYS + r")\b\\{0,3}[\"']?\s*[=:]\s*)"
            r"(?:(?P<q>\\{0,3}[\"'])(?P<qval>[^\"'\n]*?)(?P=q)|(?P<val>(?:\\(?![\"'])|[^\s\"'\\&,;}])+))"
        ),
        _pair,
    ),
)

#: Lower-case words one of which every rule above needs (case-insensitively) to match.
_TRIGGER_WORDS: tuple[str, ...] = (
    *("private key", "bearer", "basic", "digest", "token", "://", "eyj"),
    *("authorization", "cookie"),
    *("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "aiza"),
    *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "sk-"),
    *("key", "secret", "passw", "pwd", "passphrase", "credential", "session", "sig"),
)
_TRIGGER = re.compile("(?i)" + "|".join(re.escape(word) for word in _TRIGGER_WORDS))


def _triggered(text: str) -> bool:
    """Whether ``text`` may hold a secret (the scrub's fast exit, on every string out).

    ASCII text (nearly all of it) is lowered once and searched word by word, ten times
    faster than the case-insensitive alternation; for ASCII the two agree exactly. Other
    text takes the regex, whose Unicode case folding (long s for ``s``, the Kelvin sign for
    ``k``) ``str.lower`` does not reproduce.
    """
    if text.isascii():
        low = text.lower()
        for word in _TRIGGER_WORDS:  # noqa: SIM110 - a plain loop: any() costs a generator
            if word in low:
                return True
        return False
    return _TRIGGER.search(text) is not None


#: Recently seen texts that hold nothing to scrub (key == value), so a text that comes back
#: (the same exception message, check message, pack name) skips even the fast exit. Only
#: clean texts are kept: a secret is never retained here. Bounded: emptied when full.
_CLEAN: dict[str, str] = {}
_CLEAN_MAX = 4096
_CLEAN_LONGEST = 512


def scrub(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED]``."""
    if text in _CLEAN:
        return text
    if not _triggered(text):
        if len(text) <= _CLEAN_LONGEST:
            if len(_CLEAN) >= _CLEAN_MAX:
                _CLEAN.clear()
            _CLEAN[text] = text
        return text
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return text


def scrub_data(value: Any, _depth: int = 0) -> Any:
    """Scrub every string (keys and values) inside a JSON-like value, and keep it JSON.

    Tuples become lists, non-finite floats become ``None``, and anything JSON cannot carry
    (bytes, sets, objects) becomes a ``[REDACTED <type>]`` marker: raw bodies never travel.
    """
    kind = type(value)  # exact JSON types first: no ABC checks on the hot path
    if kind is str:
        return scrub(value)
    if value is None or kind is int or kind is bool:
        return value
    if kind is list and _depth <= 64:
        return [scrub_data(v, _depth + 1) for v in value]
    if kind is dict and _depth <= 64:
        return {
            scrub(k if type(k) is str else str(k)): scrub_data(v, _depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if _depth > 64:
        return REDACTED
    if isinstance(value, Mapping):
        return {scrub(str(k)): scrub_data(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_data(v, _depth + 1) for v in value]
    return f"[REDACTED {type(value).__name__}]"


def new_reference_id() -> str:
    """A fresh, unguessable reference id, e.g. ``ref_3f9c0a61d2b84e07``."""
    return "ref_" + secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class Incident:
    """What operators can recover behind a reference id. Scrubbed at rest."""

    reference_id: str
    pack: str
    request_id: str
    kind: str
    summary: str
    traceback: str
    created_at: float


class Incidents:
    """Bounded in-memory incident record, logged as it is written.

    Sinks (``add_sink``) receive every incident, e.g. a persistent store.
    """

    def __init__(self, capacity: int = 1000) -> None:
        self._capacity = capacity
        self._items: OrderedDict[str, Incident] = OrderedDict()
        self._lock = threading.Lock()
        self._sinks: list[Callable[[Incident], None]] = []

    def add_sink(self, sink: Callable[[Incident], None]) -> None:
        """Call ``sink(incident)`` for every incident recorded from now on."""
        with self._lock:
            self._sinks = [*self._sinks, sink]

    def remove_sink(self, sink: Callable[[Incident], None]) -> None:
        """Stop calling ``sink`` (no-op when it was never added)."""
        with self._lock:
            self._sinks = [s for s in self._sinks if s != sink]

    def record(
        self, exc: BaseException | None, *, pack: str, request_id: str, kind: str, summary: str
    ) -> str:
        """Keep ``exc`` (with its chain and traceback) under a new reference id."""
        ref = new_reference_id()
        tb = "".join(traceback.format_exception(exc)) if exc is not None else ""
        incident = Incident(
            reference_id=ref,
            pack=pack,
            request_id=request_id,
            kind=kind,
            summary=scrub(summary),
            traceback=scrub(tb),
            created_at=time.time(),
        )
        with self._lock:
            self._items[ref] = incident
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)
        logger.error(
            "incident %s pack=%s request_id=%s kind=%s: %s",
            ref,
            pack,
            request_id,
            kind,
            incident.summary,
            extra={"reference_id": ref, "pack": pack, "request_id": request_id},
        )
        for sink in self._sinks:
            try:
                sink(incident)
            # Sink boundary: a broken sink must not turn into the caller's failure.
            except Exception:
                logger.exception("incident sink %r raised; incident %s kept in memory", sink, ref)
        return ref

    def get(self, reference_id: str) -> Incident | None:
        with self._lock:
            return self._items.get(reference_id)

    def __len__(self) -> int:
        return len(self._items)
