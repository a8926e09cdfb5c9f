"""The scrubber against the secret corpus (>= 150 real-format secrets) and ordinary texts."""

from __future__ import annotations

import pytest
from secret_corpus import FAMILIES, ORDINARY, SECRETS, Sample

from control_plane._kernel import redact
from control_plane._kernel.redact import MAX_SCRUB, REDACTED, scrub, scrub_data

#: Families the issue names; each must hold several samples.
REQUIRED = {
    "aws",
    "azure",
    "gcp",
    "url",
    "bearer",
    "env",
    "quoted",
    "cli",
    "vendor",
    "private_key",
    "jwt",
}


def test_the_corpus_is_large_and_covers_every_family() -> None:
    assert len(SECRETS) >= 150
    assert set(FAMILIES) >= REQUIRED
    for family in REQUIRED:
        assert sum(s.family == family for s in SECRETS) >= 4, family


@pytest.mark.parametrize("sample", SECRETS, ids=lambda s: f"{s.family}:{s.text[:40]}")
def test_every_secret_is_scrubbed(sample: Sample) -> None:
    out = scrub(sample.text)
    for secret in sample.secrets:
        assert secret not in out, out
    assert "[REDACTED" in out


@pytest.mark.parametrize("sample", SECRETS, ids=lambda s: f"{s.family}:{s.text[:40]}")
def test_scrubbing_is_idempotent(sample: Sample) -> None:
    once = scrub(sample.text)
    assert scrub(once) == once


@pytest.mark.parametrize("sample", SECRETS[::7], ids=lambda s: f"{s.family}:{s.text[:40]}")
def test_secrets_inside_data_are_scrubbed(sample: Sample) -> None:
    data = {"message": sample.text, "items": [sample.text, {"nested": (sample.text,)}]}
    text = repr(scrub_data(data))
    for secret in sample.secrets:
        assert secret not in text


@pytest.mark.parametrize("sample", SECRETS[::5], ids=lambda s: f"{s.family}:{s.text[:40]}")
def test_a_secret_straddling_a_cut_is_scrubbed_before_the_cut(sample: Sample) -> None:
    """``scrub(text, limit)`` cuts after scrubbing: a cut half of a secret never shows."""
    for secret in sample.secrets:
        at = sample.text.index(secret)
        for cut in {at + 1, at + len(secret) // 2, at + len(secret) - 1}:
            out = scrub(sample.text, limit=cut)
            assert len(out) <= cut + 3
            # No 6 consecutive characters of the secret survive.
            for i in range(max(0, len(secret) - 6)):
                assert secret[i : i + 6] not in out or secret[i : i + 6] in sample.text[:at]


def test_long_texts_are_bounded_before_scrubbing() -> None:
    text = "x" * (MAX_SCRUB * 4) + " password=hunter2"
    out = scrub(text)
    assert len(out) < MAX_SCRUB + 100
    assert "cut:" in out and "hunter2" not in out
    assert scrub("password=hunter2 " + "y" * MAX_SCRUB).startswith(f"password={REDACTED} ")


def test_false_positive_rate_on_ordinary_texts_is_low() -> None:
    changed = [text for text in ORDINARY if scrub(text) != text]
    rate = len(changed) / len(ORDINARY)
    print(f"false positives: {len(changed)}/{len(ORDINARY)} = {rate:.1%}: {changed}")
    assert len(ORDINARY) >= 100
    assert rate <= 0.03, changed
    # The only ones allowed are bare 40-character ids shaped exactly like an AWS secret key.
    for text in changed:
        assert scrub(text).count(REDACTED) == 1 and text.startswith("thumbnail "), text


@pytest.mark.parametrize(
    "text",
    [
        "the authorization failed for user bob",
        "a basic example of a bearer token flow",
        "cookies are not sent",
        "ssh://git@github.com/org/repo.git",
        "https://host.invalid:8443/@scope/pkg",
        "mkdir -p /tmp/x",
        "status: pass, 3 checks",
        "the tokenizer produced 12 tokens",
    ],
)
def test_prose_and_plain_urls_are_left_alone(text: str) -> None:
    assert scrub(text) == text


def test_non_ascii_text_is_scrubbed_with_unicode_case_folding() -> None:
    """The long s (U+017F) folds to ``s`` in the rules' case-insensitive matching."""
    out = scrub("pa\u017f\u017fword=hunter2 \u00e9t\u00e9")
    assert "hunter2" not in out
    assert scrub("mot de passe: \u00e9t\u00e9 token=abc123XYZ") == (
        f"mot de passe: \u00e9t\u00e9 token={REDACTED}"
    )


def _reference(text: str) -> str:
    """Every rule, ungated, case-insensitive patterns on the original text: what the fast
    path (trigger words, case-sensitive twins on folded text) must agree with."""
    from control_plane._kernel.secret_rules import RULES, normalize_escapes

    text = normalize_escapes(text)
    for rule in RULES:
        text = rule.pattern.sub(rule.repl, text)
    return text


_ODD = ["\u017f", "\u212a", "\u0131", "\u0130", "\u00e9", "\u00a0", "\u2003", "S", "K", "I"]


@pytest.mark.parametrize("sample", SECRETS, ids=lambda s: f"{s.family}:{s.text[:40]}")
def test_the_fast_path_agrees_with_every_rule_run_plainly(sample: Sample) -> None:
    import random

    rng = random.Random(sample.text)
    variants = [sample.text, sample.text.upper(), sample.text.swapcase()]
    for _ in range(3):
        chars = list(sample.text)
        for _ in range(3):
            chars.insert(rng.randrange(len(chars) + 1), rng.choice(_ODD))
        variants.append("".join(chars))
    variants += [t.replace("s", "\u017f").replace("k", "\u212a") for t in variants[:1]]
    for text in variants:
        assert redact._scrub(text) == _reference(text), text
