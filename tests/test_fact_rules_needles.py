"""The literal pre-check of the fact tables never changes what a search finds.

:func:`required_literal` names a substring every match of a pattern holds; ASCII texts are
narrowed by it before any regex runs. A literal that is not really required would make a
row miss: each row is searched for in texts built from its own pattern's matches (found by
the regex itself in mutated phrases), in every case variant, against the plain search.
"""

from __future__ import annotations

import random
import re

import pytest

from control_plane._kernel import fact_rules
from control_plane._kernel.fact_rules import FactRule, required_literal

TABLES = {
    name: table
    for name, table in vars(fact_rules).items()
    if name.endswith(("RULES", "PHRASES")) and isinstance(table, tuple) and table
}


@pytest.mark.parametrize(
    ("pattern", "needle"),
    [
        ("connection refused", "connection refused"),
        (r"no pg_hba\.conf entry", "conf entry"),
        (r"\btimed? ?out\b", "time"),
        ("(Service)?Quota_?Exceeded(Exception)?", "exceeded"),
        ("foo|barbaz", None),  # either side may match
        ("ab{123}", None),  # a repeat count is not text, and "b" may repeat
        ("xyz{2,}abc", "abc"),
        ("[]abc]xyz", "xyz"),  # "]" first in a class is a member
        ("[^]abc]xyz", "xyz"),
        ("(?x)a b c d", None),  # verbose: spaces mean nothing
        ("abcd+", "abc"),
        ("abcd*?", "abc"),
        ("(abc|def)ghi", "ghi"),
        ("^(WRONGPASS|NOAUTH)\\b", None),
        ("é-accentué", "-accentu"),  # only ASCII characters are taken
        ("Access denied", "access denied"),
    ],
)
def test_required_literal(pattern: str, needle: str | None) -> None:
    assert required_literal(pattern) == needle


def _plain_search(rules: tuple[FactRule, ...], texts: list[str]) -> FactRule | None:
    for row in rules:
        if any(row.compiled().search(text) for text in texts):
            return row
    return None


def _variants(text: str, rng: random.Random) -> list[str]:
    swapped = "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)
    return [text, text.upper(), text.lower(), swapped, f"error: {text} (code 7)"]


def _samples(row: FactRule, rng: random.Random) -> list[str]:
    """Texts the row's own regex matches: its needle and pattern's plain parts glued with
    what its classes allow, kept only where the regex agrees."""
    seeds = [row.pattern, re.sub(r"\\.", "", row.pattern), row.pattern.replace("\\b", "")]
    found = []
    for seed in seeds:
        text = re.sub(r"\[\^?[^\]]*\]\*?|\\[wdsb]\*?|[()?*+^$|]", "", seed)
        for variant in _variants(text, rng):
            if row.compiled().search(variant):
                found.append(variant)
    return found


@pytest.mark.parametrize("table", sorted(TABLES))
def test_narrowed_search_finds_what_the_plain_search_finds(table: str) -> None:
    rules = TABLES[table]
    rng = random.Random(table)
    # U+017F (long s) and U+212A (Kelvin) match "s" and "k" case-insensitively: a text
    # holding them is not ASCII and takes the regex of every row
    texts: list[str] = ["", "nothing to see", "connection refu\u017fed", "\u212aey expired"]
    for row in rules:
        texts += _samples(row, rng)
        if row.needle is not None:
            texts += _variants(row.needle, rng)
    matched = 0
    for text in texts:
        expected = _plain_search(rules, [text])
        assert fact_rules.search(rules, [text]) is expected, (table, text)
        assert fact_rules.search(rules, ["unrelated", text]) is expected, (table, text)
        matched += expected is not None
    assert matched >= len(rules)  # every row was exercised by some text


def test_a_row_with_a_wrong_needle_would_be_caught() -> None:
    # The check above can fail: a row whose literal is not required misses its match.
    row = FactRule("phrase", "timed? ?out", "timeout", "m")
    object.__setattr__(row, "needle", "timed")
    assert _plain_search((row,), ["timeout"]) is row
    assert fact_rules.search((row,), ["timeout"]) is None
