"""The fact tables, data of the evidence engine (:mod:`control_plane._kernel.evidence`).

:data:`QUOTA_RULES` reads a quota's exhaustion in a text, :data:`STATUS_CODES` the HTTP
status, :data:`SQLSTATE_RULES` the SQLSTATE (most specific prefix first),
:data:`PHRASE_RULES` well-known phrases of drivers and servers. Which one decides when
they disagree is the engine's: specific evidence over generic (docs/classification.md).
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ParamSpec, TypeVar, cast

__all__ = [
    "DATA",
    "GENERIC_PHRASES",
    "PHRASE_RULES",
    "QUOTA_CODE",
    "QUOTA_RULES",
    "SQLSTATE_RULES",
    "STATUS_5XX_CODE",
    "STATUS_CODES",
    "FactRule",
    "Rows",
    "Verdict",
    "load",
    "message",
    "required_literal",
    "search",
    "type_cache",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def type_cache(
    default: Any = None, *, recompute: bool = False, maxsize: int = 4096
) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Cache a pure function of a class (and hashable arguments). A class from hostile input
    (a metaclass whose ``__hash__``/``__eq__`` raises) cannot be a cache key: the function
    then answers ``default``, or runs uncached when ``recompute``."""

    def wrap(fn: Callable[_P, _R]) -> Callable[_P, _R]:
        cached = cast(Callable[_P, _R], functools.lru_cache(maxsize=maxsize)(fn))

        @functools.wraps(fn)
        def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return cached(*args, **kwargs)
            # Hostile input: a metaclass's __hash__/__eq__ (the cache's lookup) may raise.
            except Exception:  # noqa: BLE001
                return fn(*args, **kwargs) if recompute else cast(_R, default)

        return call

    return wrap


#: The well-known code of a quota or billing exhaustion (``schemas/vocabulary.json``).
QUOTA_CODE = "quota_exhausted"


class Rows(tuple[Any, ...]):
    """A table of rules: a tuple whose hash is computed once, so a memo keyed by the table
    (:func:`functools.lru_cache`) finds it at once instead of hashing every row each time
    (which costs more than the search it saves). Equal to the plain tuple of its rows."""

    _hash: int

    def __new__(cls, rows: Iterable[Any]) -> Rows:
        made = super().__new__(cls, rows)
        made._hash = tuple.__hash__(made)
        return made

    def __hash__(self) -> int:
        return self._hash


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE | re.MULTILINE)


_META = frozenset(".^$*+?{}[]|()\\")
_QUANTIFIERS = frozenset("*+?")
_INLINE_FLAGS = re.compile(r"\(\?[aiLmsux-]")


def required_literal(pattern: str) -> str | None:
    """A run of plain ASCII characters every match of ``pattern`` contains, lower-cased
    (the longest of at least 3), or ``None`` when none can be told for sure: any ``|``
    outside a group, text inside groups or classes and escapes are not taken, and a
    character a quantifier follows is dropped from its run."""
    if _INLINE_FLAGS.search(pattern):
        return None  # (?x) would make spaces mean nothing, (?-i) case matter
    runs: list[str] = []
    run: list[str] = []
    depth, i = 0, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            runs.append("".join(run))
            run = []
            continue
        if char in "[{":  # a class or a repeat count: skipped whole
            close = "]" if char == "[" else "}"
            if char == "{" and run:
                run.pop()  # the repeated character is not required
            i += 1
            if char == "[":  # "[]...]" and "[^]...]": that first "]" is a member
                i += 1 if pattern[i : i + 1] == "^" else 0
                i += 1 if pattern[i : i + 1] == "]" else 0
            while i < len(pattern) and pattern[i] != close:
                i += 2 if pattern[i] == "\\" else 1
            i += 1
            runs.append("".join(run))
            run = []
            continue
        if char in _QUANTIFIERS and run:
            run.pop()  # the quantified character is not required
        if char == "|" and depth == 0:
            return None
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char in _META or depth > 0 or not char.isascii() or not char.isprintable():
            runs.append("".join(run))
            run = []
        else:
            run.append(char)
        i += 1
    runs.append("".join(run))
    longest = max(runs, key=len)
    return longest.lower() if len(longest) >= 3 else None


@dataclass(frozen=True, slots=True)
class FactRule:
    """One row: ``pattern`` (a regex, matched case-insensitively) means ``code``.

    ``kind`` says what it is matched against: ``code`` (an error-code string, whole),
    ``sqlstate`` (a prefix), ``phrase`` (found in the text), ``type`` (found in a class
    name). ``message`` is fixed text, true of every failure the row matches."""

    kind: str
    pattern: str
    code: str
    message: str
    weak: bool = False
    regex: re.Pattern[str] = field(init=False, compare=False, repr=False)

    needle: str | None = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", _compile(self.pattern))
        object.__setattr__(self, "needle", required_literal(self.pattern))

    def compiled(self) -> re.Pattern[str]:
        """The pattern, compiled (once, when the row is made)."""
        return self.regex


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the facts mean: a code, a fixed message, the rule, a delay, weakness."""

    code: str
    message: str
    rule: str
    retry_after: float | None = None
    weak: bool = False


def load(path: Path) -> dict[str, Any]:
    """A data file of the engine (TOML), read once by the module that owns it."""
    with path.open("rb") as handle:
        return tomllib.load(handle)


#: The evidence engine's data (``evidence.toml``): its vocabulary, number spaces and fact
#: tables, read once here and by :mod:`control_plane._kernel.evidence`.
DATA: dict[str, Any] = load(Path(__file__).with_name("evidence.toml"))


def message(text: str, data: Mapping[str, Any] = DATA) -> str:
    """A fixed message: ``"@name"`` names one of the ``[messages]`` of ``data``."""
    return str(data["messages"][text[1:]]) if text.startswith("@") else text


def _rows(table: str) -> tuple[FactRule, ...]:
    return Rows(
        FactRule(group["kind"], pattern, group["code"], message(group["message"]))
        for group in DATA["facts"][table]
        for pattern in group["patterns"]
    )


#: Quota or billing exhaustion said in a text (error-code words are the engine's WORDS).
QUOTA_RULES = _rows("quota_rules")
#: HTTP status -> code. A 429 is ``rate_limited``, and so is a 503 that states a delay.
STATUS_CODES: Mapping[int, str] = MappingProxyType(
    {int(k): v for k, v in DATA["http_status"].items()}
)
#: The code of a 5xx status :data:`STATUS_CODES` does not list.
STATUS_5XX_CODE = "network_error"
#: SQLSTATE prefix -> code, most specific first (PostgreSQL's classes, standard SQL).
SQLSTATE_RULES = _rows("sqlstate_rules")
#: Phrases of drivers and servers (libpq, Redis, SSH, resolvers) -> code.
PHRASE_RULES = _rows("phrase_rules")
#: Generic phrases (a timeout, a connection cut): strong only where the vocabulary reads
#: the same code in the same text (:mod:`control_plane._kernel.evidence`), or alone.
GENERIC_PHRASES = _rows("generic_phrases")


def search(rules: Sequence[FactRule], texts: Sequence[str]) -> FactRule | None:
    """The first row of ``rules`` found in one of ``texts``.

    ASCII texts are first narrowed by each row's :func:`required_literal` (a substring
    test, exact for ASCII under case folding): a row whose literal is absent cannot match.
    One case-insensitive regex of many alternatives costs ~40 us on 80 characters."""
    joined = "\n".join(texts)
    lowered = joined.lower() if joined.isascii() else None  # a needle has no newline
    for row in rules:
        needle = row.needle
        if lowered is not None and needle is not None and needle not in lowered:
            continue
        pattern = row.compiled()
        if any(pattern.search(text) for text in texts):
            return row
    return None
