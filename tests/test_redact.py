"""The secret scrubber on header-shaped text: every credential form goes, prose stays."""

from __future__ import annotations

import json
import random
import string

import pytest

from control_plane._kernel.incidents import _bounded_traceback
from control_plane._kernel.redact import MAX_SCRUB, REDACTED, WINDOW, scrub

LEAKS = [
    ("Authorization: Bearer shorttok", "shorttok"),
    ("authorization: bearer abc123", "abc123"),
    ("Proxy-Authorization: Basic dXNlcjpw", "dXNlcjpw"),
    ('{"authorization": "shorttok"}', "shorttok"),
    ('{\\"Authorization\\": \\"Bearer tok\\"}', "tok"),
    ("Authorization: Negotiate YIIabc", "YIIabc"),
    ("Cookie: session=abc; theme=dark", "session=abc"),
    ("Set-Cookie: sid=xyz; Path=/; HttpOnly", "sid=xyz"),
    ("https://admin:pw@db.internal/x", "pw@"),
    ("password=hunter2", "hunter2"),
]


@pytest.mark.parametrize(("text", "secret"), LEAKS)
def test_header_credentials_are_scrubbed(text: str, secret: str) -> None:
    out = scrub(text)
    assert secret not in out
    assert REDACTED in out


@pytest.mark.parametrize(
    "text",
    [
        "the authorization failed for user bob",
        "a basic example of a bearer token flow",
        "cookies are not sent",
    ],
)
def test_prose_is_left_alone(text: str) -> None:
    assert scrub(text) == text


@pytest.mark.parametrize(("text", "secret"), LEAKS)
def test_scrubbing_twice_changes_nothing(text: str, secret: str) -> None:
    """Stores re-scrub at rest: a second pass must leave the first pass's text alone."""
    once = scrub(text)
    assert scrub(once) == once


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DB_PASSWORD=Tr0ub4dor&3xQ!zz", "DB_PASSWORD=[REDACTED]"),
        ("export X_TOKEN=ab;cd; echo ok", "export X_TOKEN=[REDACTED]; echo ok"),
        ("password=&abc", "password=[REDACTED]"),
        ("(user=bob password=Abc123!)", "(user=bob password=[REDACTED])"),
        # A URL query or a connection string: the value stops at the next pair.
        ("GET /a?password=x1&user=y", "GET /a?password=[REDACTED]&user=y"),
        ("id_token=abc123&state=xyz", "id_token=[REDACTED]&state=xyz"),
        ("Password=abc1;Server=db", "Password=[REDACTED];Server=db"),
        ("/a?password=&user=y", "/a?password=&user=y"),
    ],
)
def test_an_assignments_value_runs_to_whitespace_short_of_the_next_pair(
    text: str, expected: str
) -> None:
    assert scrub(text) == expected


# -- cuts: what is kept never ends in the half of a secret -------------------------------------

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _b64(n: int, seed: int) -> str:
    rnd = random.Random(seed)
    return "".join(rnd.choice(_B64) for _ in range(n))


def _pem(lines: int, seed: int = 1) -> str:
    body = "\n".join(_b64(64, seed + i) for i in range(lines))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"


def test_a_replaced_secret_does_not_pull_a_cut_one_inside_the_limit() -> None:
    """A 1.6 KB key replaced by a short marker moves later text inside the kept part, up to
    a password the scrub window cut in half (a review's repro: 'postgres://app:S3cretDb')."""
    password = "S3cretDbPassw0rd"
    prefix = "config load failed: {'tls_key': '" + _pem(25).replace("\n", "\\n") + "', 'db': '"
    for into in range(1, len(password)):
        pad = 1000 + WINDOW - len(prefix) - len("postgres://app:") - into
        text = prefix + "x" * pad + f"postgres://app:{password}@db.internal:5432/app'}}"
        out = scrub(text, 1000)
        assert password[:6] not in out, into
        assert len(out) <= 1003


def test_a_secret_at_the_64k_cut_is_not_kept_in_part() -> None:
    password = "S3cretDbPassw0rd"
    for into in (3, 8, 15):
        text = "x" * (MAX_SCRUB - len("postgres://app:") - into) + f"postgres://app:{password}@db"
        out = scrub(text)
        assert password[:3] not in out, into
        assert "[cut:" in out


def test_key_material_without_its_begin_line_is_scrubbed() -> None:
    """The tail of a long traceback starts inside a key: its body lines alone still go."""
    key = _pem(50)
    body = key.splitlines()[1:-1]
    assert all(line not in scrub("\n".join(body[10:])) for line in body[10:])
    # Inside JSON or a repr the lines are joined by a literal \n or \r\n.
    for joined in (json.dumps("\n".join(body[10:]) + "\n-----END"), repr("\r\n".join(body[10:]))):
        assert all(line not in scrub(joined) for line in body[10:]), joined
    text = "Traceback\n" + '  File "x.py", line 1, in f\n' * 400 + "ValueError: bad key "
    text += key + "\n" + "z" * 6700
    kept = _bounded_traceback(text)
    assert [line for line in body if line in kept] == []


def test_a_tools_stderr_tail_is_scrubbed_before_it_is_cut() -> None:
    from control_plane._kernel.stderr import ToolFailed

    failed = ToolFailed("tool", 1, "password=Abcdefghijkl123456 " + "x" * 3990)
    assert "123456" not in failed.stderr  # a plain cut kept "jkl123456"


# -- the fast path: only the rules a text calls for run ----------------------------------------


def _every_rule(text: str) -> str:
    """What the scrubber would give running every rule, in order, on every text."""
    from control_plane._kernel.redact import _fold
    from control_plane._kernel.secret_rules import RULES, normalize_escapes

    text = normalize_escapes(text)
    low = _fold(text)
    for rule in RULES:
        done = rule.apply(text, low)
        if done is not text:
            text, low = done, _fold(done)
    return text


def test_running_only_the_triggered_rules_changes_nothing() -> None:
    """Trigger words (and gates) only skip work: on 20,000 random texts made of every rule's
    trigger words, separators, delimiters and key characters, the scrubber gives exactly
    what running every rule gives."""
    from control_plane._kernel import redact
    from control_plane._kernel.secret_rules import RULES

    words = sorted({w for rule in RULES for w in rule.triggers})
    words += [w.upper() for w in words] + ["Password", "DB_PASSWORD", "value", "AKIA", "bot"]
    pieces = [
        "=",
        ":",
        " ",
        "  ",
        "\n",
        "\\n",
        "'",
        '"',
        "&",
        ";",
        ",",
        ")",
        "}",
        "]",
        "|",
        "<",
        ">",
        "/",
        "://",
        "@",
        "%",
        "-",
        "_",
        ".",
        "?",
        '="',
        "='",
        "by ",
        "pass:",
        "0123456789",
        "aB3+/aB3+/aB3+/aB3+/aB3+",
        "s3cr3tVALUE9",
        "x" * 20,
        "QUJD" * 16 + "\n",
    ]
    from secret_corpus import ORDINARY, SECRETS

    rnd = random.Random(20261124)
    redact._CLEAN.clear()
    for _ in range(20_000):
        text = "".join(rnd.choice(words if rnd.random() < 0.35 else pieces) for _ in range(12))
        assert redact._scrub(text) == _every_rule(text), text
    # The corpus, alone and spliced with random pieces: structured secrets (XML, SQL,
    # command lines) that random words rarely form.
    texts = [s.text for s in SECRETS] + list(ORDINARY)
    for text in texts:
        assert redact._scrub(text) == _every_rule(text), text
    for _ in range(5_000):
        text = rnd.choice(pieces).join(rnd.sample(texts, 2)) + rnd.choice(pieces)
        assert redact._scrub(text) == _every_rule(text), text


def test_the_trigger_automaton_finds_what_the_substring_scan_finds() -> None:
    """The native one-pass scan (Aho-Corasick, overlapping matches) picks the same rules as
    one substring test per trigger word: words inside words (``pass`` in ``password``),
    words overlapping each other, repeated words, case folds, non-ASCII text."""
    from control_plane._kernel import redact

    scanner = redact._automaton_scanner()
    assert scanner is not None, "ahocorasick-rs is a dependency"
    assert redact._rules_for is not redact._substring_rules  # the automaton serves
    words = list(redact._TRIGGER_WORDS)
    # Lone surrogates too: the automaton reads UTF-8, which cannot hold them.
    alphabet = string.printable + "\u017f\u212a\u0131\u0130\u00df\u00e9\u4e2d\udcff\ud800"
    rnd = random.Random(1124)
    for _ in range(20_000):
        text = "".join(
            rnd.choice(words)
            if rnd.random() < 0.4
            else "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 6)))
            for _ in range(rnd.randint(0, 8))
        )
        low = redact._fold(text)
        assert scanner(low) == redact._substring_rules(low), text
    # Every word alone, glued to its neighbours, and the overlapping pairs.
    for word in words:
        assert scanner(word) == redact._substring_rules(word) != set(), word
    glued = "".join(words)
    assert scanner(glued) == redact._substring_rules(glued)


@pytest.mark.parametrize("text", ["password=abc\udcffdef rest", "\ud800 token=Abc123456789xyz"])
def test_a_text_with_lone_surrogates_is_scrubbed_not_an_error(text: str) -> None:
    """A ``str`` holding lone surrogates (bytes decoded with ``surrogateescape``, a hostile
    value) cannot be encoded to UTF-8; the scrubber still scrubs it and never raises."""
    out = scrub(text)
    assert REDACTED in out
    assert "abc" not in out and "Abc123456789xyz" not in out
