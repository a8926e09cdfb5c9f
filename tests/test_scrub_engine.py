"""The scrubber's rules mean the same on every CPython: no compiled rule uses a possessive
repeat or an atomic group (matched wrongly by CPython before 3.11.5 and by unpatched
Debian 3.11.2), and the portable form agrees with the rules as written."""

from __future__ import annotations

import random
import re
import re._constants as sre
import re._parser as sre_parse

import pytest
from secret_corpus import ORDINARY, SECRETS

from control_plane._kernel import secret_rules
from control_plane._kernel.portable_regex import portable
from control_plane._kernel.secret_rules import RULES, written

#: Every pattern the scrubber compiles (the rules, their case-sensitive twins, the helpers).
PATTERNS: list[re.Pattern[str]] = [
    *(r.pattern for r in RULES),
    *(r.low for r in RULES if r.low is not None),
    *(v for v in vars(secret_rules).values() if isinstance(v, re.Pattern)),
]

#: python/cpython#106052: the possessive repeat of a body that can backtrack matched where
#: the greedy one does not. True on the interpreters whose own possessive repeats are wrong.
ENGINE_BUGGY = re.fullmatch("(?:ab?c)*+", "a") is not None


def _ops(pattern: re.Pattern[str]) -> set[str]:
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, sre_parse.SubPattern):
            for op, av in node.data:
                found.add(str(op))
                walk(av)
        elif isinstance(node, list | tuple):
            for item in node:
                walk(item)

    walk(sre_parse.parse(pattern.pattern, pattern.flags))
    return found


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.pattern[:40])
def test_no_compiled_pattern_relies_on_possessive_or_atomic_matching(
    pattern: re.Pattern[str],
) -> None:
    assert not _ops(pattern) & {str(sre.POSSESSIVE_REPEAT), str(sre.ATOMIC_GROUP)}


def test_the_rules_are_written_possessive_and_compiled_portable() -> None:
    """The check above is not vacuous: the rules as written use possessive repeats."""
    possessive = [
        r for r in RULES if str(sre.POSSESSIVE_REPEAT) in _ops(re.compile(written(r.pattern)))
    ]
    assert len(possessive) >= 30


@pytest.mark.parametrize(
    ("pattern", "text", "span"),
    [
        ("(?:ab?c)*+$", "a", None),  # cpython#106052: matched on 3.11.0-3.11.4
        ("(?:ab?c)*+", "aca", (0, 2)),
        ("(?>(?:ab?c)+)", "aca", (0, 2)),
        ("a*+a", "aaaa", None),  # nothing given back
        ("a*a", "aaaa", (0, 4)),
        ("x{1,2}+$", "xxx", None),
        ('[^"\\\\]++(?:\\\\.[^"\\\\]*+)*+"', 'ab\\"c"', (0, 6)),
        ("(?P<q>['\"])[^'\"]*+(?P=q)", "'abc'", (0, 5)),
        ("(?<![a-z])k[a-z]{2}+=", "key=", (0, 4)),
        ("\\{[a-z]++\\}", "{ab}", (0, 4)),
        ("[]a]++b", "]a]b", (0, 4)),
    ],
)
def test_portable_means_what_possessive_means(
    pattern: str, text: str, span: tuple[int, int] | None
) -> None:
    found = re.match(portable(pattern), text)
    assert (found.span() if found else None) == span
    assert str(sre.POSSESSIVE_REPEAT) not in _ops(re.compile(portable(pattern)))


def test_portable_refuses_what_it_cannot_rewrite() -> None:
    with pytest.raises(ValueError, match="look-behind"):
        portable("(?<=a++)b")
    with pytest.raises(ValueError, match="missing"):
        portable("(a")


def _texts() -> list[str]:
    """The corpus, ordinary texts, and each cut and doubled (partial matches, repeats)."""
    rng = random.Random(7)
    base = [s.text for s in SECRETS] + ORDINARY
    extra = [t[: rng.randrange(1, len(t) + 1)] for t in base] + [t + " " + t for t in base[:200]]
    return base + extra


@pytest.mark.skipif(ENGINE_BUGGY, reason="this interpreter's possessive repeats are wrong")
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_the_portable_rule_matches_exactly_what_the_written_rule_matches(
    rule: secret_rules.Rule,
) -> None:
    as_written = re.compile(written(rule.pattern), rule.pattern.flags)
    for text in _texts():
        expected = [m.span() for m in as_written.finditer(text)]
        assert [m.span() for m in rule.pattern.finditer(text)] == expected, text
