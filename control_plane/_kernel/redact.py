"""The secret scrubber: :func:`scrub` (linear, scrubs before it cuts) and :func:`scrub_data`."""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from control_plane._kernel.secret_rules import (
    CANARIES,
    LONG_RUN,
    REDACTED,
    RULES,
    normalize_escapes,
)

__all__ = [
    "MAX_SCRUB",
    "REDACTED",
    "WINDOW",
    "leaking_rules",
    "require_scrubber",
    "scrub",
    "scrub_data",
    "scrub_head",
    "scrub_tail",
]


#: Longest text scrubbed whole; longer texts are cut to this first (no outgoing string of
#: the control plane is longer: messages are cut to 1000 characters, tracebacks to less).
MAX_SCRUB = 64 * 1024
#: With a ``limit``, how far past it the text is scrubbed before it is cut: a secret that
#: starts before the limit and is shorter than this is recognised whole.
WINDOW = 1024

#: Lower-case trigger words of every rule (the fast exit on every string out).
_TRIGGER_WORDS: tuple[str, ...] = tuple(sorted({w for rule in RULES for w in rule.triggers}))
#: Each trigger word with the positions in ``RULES`` of the rules it calls for.
_BY_TRIGGER: tuple[tuple[str, tuple[int, ...]], ...] = tuple(
    (word, tuple(i for i, rule in enumerate(RULES) if word in rule.triggers))
    for word in _TRIGGER_WORDS
)
#: Positions of the rules a long run of key characters calls for.
_RUN_INDICES: tuple[int, ...] = tuple(i for i, rule in enumerate(RULES) if rule.run)


#: Recently seen texts that hold nothing to scrub (key == value), so a text that comes back
#: (the same exception message, check message, pack name) skips even the fast exit. Only
#: clean texts are kept: a secret is never retained here. Bounded: emptied when full.
_CLEAN: dict[str, str] = {}
_CLEAN_MAX = 4096
_CLEAN_LONGEST = 512


def _cut_marker(dropped: int) -> str:
    return f"...[cut: {dropped} more characters]"


def scrub(text: str, limit: int | None = None) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED]``.

    ``limit``: the caller keeps at most this many characters: the text is scrubbed with a
    window past the cut and cut to ``limit`` (plus ``"..."``), see :func:`scrub_head`.
    Without it, texts longer than :data:`MAX_SCRUB` are cut to about that (with a marker).
    Linear in ``min(len(text), bound)``, whatever the text.
    """
    if limit is not None:
        if len(text) <= limit:
            return scrub(text)
        return scrub_head(text, limit) + "..."
    if len(text) > MAX_SCRUB:
        head = scrub_head(text, MAX_SCRUB - WINDOW)
        return head + _cut_marker(len(text) - len(head))
    return _scrub(text)


#: How many times a window is widened when what it scrubbed shrank (see :func:`scrub_head`).
_WIDENINGS = 4


def scrub_head(text: str, keep: int) -> str:
    """At most ``keep`` characters of ``text``'s start, scrubbed: whatever is kept had at
    least :data:`WINDOW` characters of scrubbed text after it.

    Scrubbing ``text[:keep + WINDOW]`` and cutting is not enough: a long secret replaced
    by ``[REDACTED]`` pulls later text inside the kept part, up to the half of a secret
    the window cut (which no rule matches any more). So the last :data:`WINDOW` scrubbed
    characters are never kept, and the window widens by what the replacements took (a few
    times; short of that less than ``keep`` is returned). Linear in ``keep + WINDOW`` plus
    the replaced secrets' lengths.
    """
    end = keep + WINDOW
    for _ in range(_WIDENINGS):
        clean = _scrub(text[:end])
        if end >= len(text):  # the whole text was scrubbed: nothing was cut mid-way
            return clean[:keep]
        room = len(clean) - WINDOW
        if room >= keep:
            return clean[:keep]
        end += keep - room
    return clean[: max(0, len(clean) - WINDOW)][:keep]


def scrub_tail(text: str, keep: int) -> str:
    """:func:`scrub_head` from the end: at most ``keep`` characters of ``text``'s end,
    scrubbed, each with at least :data:`WINDOW` characters of scrubbed text before it."""
    start = keep + WINDOW
    for _ in range(_WIDENINGS):
        clean = _scrub(text[-start:])
        if start >= len(text):
            return clean[-keep:] if keep else ""
        room = len(clean) - WINDOW
        if room >= keep:
            return clean[-keep:] if keep else ""
        start += keep - room
    room = max(0, len(clean) - WINDOW)
    return clean[len(clean) - min(room, keep) :]


#: Case folding that keeps every position: ASCII capitals, and the four non-ASCII letters
#: ``re`` matches case-insensitively with an ASCII one (U+0130 and U+0131 with ``i``, the
#: long s U+017F with ``s``, the Kelvin sign U+212A with ``k``). Other characters stay: no
#: ASCII-only rule can match them either way.
_FOLD: Mapping[int, int] = MappingProxyType(
    {
        **{c: c + 32 for c in range(ord("A"), ord("Z") + 1)},
        0x130: ord("i"),
        0x131: ord("i"),
        0x17F: ord("s"),
        0x212A: ord("k"),
    }
)


def _fold(text: str) -> str:
    """``text`` folded for the rules' case-sensitive twins (same length and positions)."""
    return text.lower() if text.isascii() else text.translate(_FOLD)


#: The trigger words as one case-insensitive regex: what :func:`_triggered` must agree with
#: (``tests/test_bench.py`` checks it on random text, non-ASCII case folds included).
_TRIGGER = re.compile("(?i)" + "|".join(re.escape(word) for word in _TRIGGER_WORDS))


def _triggered(text: str) -> bool:
    """Whether any rule's trigger word occurs in ``text``, case-insensitively."""
    return bool(_rules_for(_fold(text)))


def _substring_rules(low: str) -> set[int]:
    """The positions of the rules whose trigger words occur in the folded text ``low``:
    one substring test per word."""
    return {i for word, rules in _BY_TRIGGER if word in low for i in rules}


def _automaton_scanner() -> Callable[[str], set[int]] | None:
    """:func:`_substring_rules` as one pass of an Aho-Corasick automaton over the text
    (``ahocorasick-rs``, native; the figures: docs/redaction.md). ``None`` where the package
    is not installed (it is a dependency; the substring scan is the fallback). Overlapping
    matches, so a word inside another (``pass`` in ``password``) is found too; at most a few
    matches end at any one position."""
    try:
        from ahocorasick_rs import AhoCorasick
    except ImportError:  # pragma: no cover - a dependency, present wherever we test
        return None
    automaton = AhoCorasick(list(_TRIGGER_WORDS))
    find = automaton.find_matches_as_indexes
    by_word = tuple(rules for _, rules in _BY_TRIGGER)

    def rules_for(low: str) -> set[int]:
        try:
            found = find(low, overlapping=True)
        # The automaton reads UTF-8: a lone surrogate (text decoded with
        # ``surrogateescape``, a hostile ``str``) cannot be passed to it, so such a text
        # takes the substring scan. Scrubbing never fails on a ``str``.
        except UnicodeEncodeError:
            return _substring_rules(low)
        chosen: set[int] = set()
        for word in {match[0] for match in found}:
            chosen.update(by_word[word])
        return chosen

    return rules_for


#: The rules a folded text calls for by its trigger words (the scan runs on every text out
#: that is not known clean).
_rules_for: Callable[[str], set[int]] = _automaton_scanner() or _substring_rules


def _scrub(text: str) -> str:
    if text in _CLEAN:
        return text
    original = text
    text = normalize_escapes(text)  # an escaped key is still a key
    low = _fold(text)
    # The rules whose trigger words occur (usually none), and the ``run`` rules when the
    # text holds a long run of key characters; in the rules' own order, so a later rule
    # sees an earlier one's output.
    chosen = _rules_for(low)
    if len(text) >= 20 and LONG_RUN.search(text) is not None:
        chosen.update(_RUN_INDICES)
    for i in sorted(chosen):
        scrubbed = RULES[i].apply(text, low)
        if scrubbed is not text:
            text = scrubbed
            low = _fold(text)
    if text is original:  # nothing to scrub: the next time, not even the word scan
        _remember_clean(text)
    return text


def _remember_clean(text: str) -> None:
    if len(text) <= _CLEAN_LONGEST:
        if len(_CLEAN) >= _CLEAN_MAX:
            _CLEAN.clear()
        _CLEAN[text] = text


def scrub_data(value: Any, *, max_nodes: int | None = None) -> Any:
    """Scrub every string (keys and values) inside a JSON-like value, and keep it JSON.

    Tuples become lists, non-finite floats become ``None``, and anything JSON cannot carry
    (bytes, sets, objects) becomes a ``[REDACTED <type>]`` marker: raw bodies never travel.
    With ``max_nodes``, at most that many values are copied (keys not counted) and the work
    is bounded by it, not by the value's size: a container reached after the budget ran out
    keeps what fit plus one marker (``"[REDACTED 1499000 more values]"``; for a mapping, a
    key of that text with the value ``None``).
    """
    return _scrub_value(value, 0, [_UNBOUNDED if max_nodes is None else max_nodes])


_UNBOUNDED = 1 << 62


def _cut_marker_items(left: int) -> str:
    return f"[REDACTED {left} more values]"


def _scrub_value(value: Any, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    kind = type(value)  # exact JSON types first: no ABC checks on the hot path
    if kind is str:
        return scrub(value)
    if value is None or kind is int or kind is bool:
        return value
    if kind is list and depth <= 64:
        return _scrub_items(value, depth, budget)
    if kind is dict and depth <= 64:
        return _scrub_mapping(value, depth, budget)
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth > 64:
        return REDACTED
    if isinstance(value, Mapping):
        return _scrub_mapping(value, depth, budget)
    if isinstance(value, list | tuple):
        return _scrub_items(value, depth, budget)
    return f"[REDACTED {type(value).__name__}]"


def _scrub_mapping(value: Mapping[Any, Any], depth: int, budget: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for count, (k, v) in enumerate(value.items()):
        if budget[0] <= 0:
            out[_cut_marker_items(len(value) - count)] = None
            break
        key = k if type(k) is str else str(k)
        kind = type(v)
        scalar = (kind is str and v) or kind is int or kind is float
        if scalar and _judged_with_key(key[-_KEY_TAIL:]):
            budget[0] -= 1
            out[scrub(key)] = _secret_value(key, v)
            continue
        out[scrub(key)] = _scrub_value(v, depth + 1, budget)
    return out


#: The end of a key judged by :func:`_judged_with_key` (the rules look at how a key ends).
_KEY_TAIL = 128


@functools.lru_cache(maxsize=4096)
def _judged_with_key(key: str) -> bool:
    """Whether the value under ``key`` (its last :data:`_KEY_TAIL` characters) must be
    judged with it: the key holds a trigger word of some rule (``password``, ``token``,
    ``_key``, ``auth``...). A key without one leaves its value to the rules the value's
    own words call for. Remembered per key (keys repeat: rows, a check's fields)."""
    return bool(_rules_for(_fold(normalize_escapes(key))))


def _secret_value(key: str, value: str | int | float) -> Any:
    """A scalar under a key that may name a secret, judged as the text rules judge the pair
    written as JSON: ``[REDACTED]`` when they change it (``{"password": "hunter2pw"}``,
    ``{"password": 12345678}``), else the value scrubbed alone (``{"pass": 3}``, a count,
    as ``pass=3`` in a text; ``{"token_type": "bearer"}``)."""
    if type(value) is float and not math.isfinite(value):
        return None
    head = value[:WINDOW] if type(value) is str else value  # the rules read a value's start
    pair = "{" + json.dumps(key[-_KEY_TAIL:], ensure_ascii=False) + ": "
    pair += json.dumps(head, ensure_ascii=False) + "}"
    if scrub(pair) != pair:
        return REDACTED
    return scrub(value) if type(value) is str else value


def _scrub_items(value: list[Any] | tuple[Any, ...], depth: int, budget: list[int]) -> list[Any]:
    kept: list[Any] = []
    for count, v in enumerate(value):
        if budget[0] <= 0:
            kept.append(_cut_marker_items(len(value) - count))
            break
        kept.append(_scrub_value(v, depth + 1, budget))
    return kept


# -- the start-up self-test ----------------------------------------------------------------


def leaking_rules() -> list[str]:
    """The rules whose canary (:data:`~control_plane._kernel.secret_rules.CANARIES`, one per
    rule) survives, alone or through :func:`scrub`, or whose text around it is eaten;
    ``[]`` when the scrubber works on this interpreter. A few milliseconds."""
    by_name = {rule.name: rule for rule in RULES}
    failing = [rule.name for rule in RULES if rule.name not in {c.rule for c in CANARIES}]
    for canary in CANARIES:
        rule = by_name.get(canary.rule)
        outs = [scrub(canary.text)]
        if rule is not None:
            outs.append(rule.apply(canary.text, _fold(canary.text)))
        if rule is None or any(canary.secret in out or canary.kept not in out for out in outs):
            failing.append(canary.rule)
    return failing


@functools.lru_cache(maxsize=1)
def _self_test() -> tuple[str, ...]:
    """:func:`leaking_rules` of this interpreter, run once per process (the rules and the
    ``re`` module do not change while it runs)."""
    return tuple(leaking_rules())


def require_scrubber() -> None:
    """Refuse to run a process whose scrubber leaks: every runtime is built through this
    check (``build_runtime``), so ``packctl serve``, ``worker``, ``mcp`` and ``--local``
    commands stop before serving, with a message naming the interpreter and the failing
    families, and exit status 1 (:class:`SystemExit`)."""
    failing = _self_test()
    if failing:
        raise SystemExit(
            "capability-packs: refusing to start: the secret scrubber's self-test failed on "
            f"this Python ({sys.executable}, {sys.version.split()[0]}: {sys.version}); "
            f"a canary secret of {len(failing)} rule(s) was not redacted: "
            f"{', '.join(failing)}. Serving would leak secrets of these families; "
            "see docs/redaction.md (self-test)."
        )
