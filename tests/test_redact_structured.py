"""Secrets in structured data: a value under a key that names a secret is redacted.

``scrub_data`` scrubs every string of a partial result, a check's ``expected``/``actual``,
an opted-in result, an event; each string alone would never show that ``"hunter2pw"`` is a
password, its key does. A mapping item is judged as the text rules judge the same pair
written as JSON (``{"password": "hunter2pw"}``), so the structured and the text forms of
one value agree.
"""

from __future__ import annotations

import json
import random
from collections import OrderedDict

import pytest

from control_plane._kernel.outcome import CheckRecord, ErrorEnvelope
from control_plane._kernel.redact import REDACTED, scrub, scrub_data

SECRET_KEYS = [
    "password",
    "Password",
    "DB_PASSWORD",
    "passwd",
    "passphrase",
    "pw",
    "token",
    "access_token",
    "accessToken",
    "refresh_token",
    "api_key",
    "apiKey",
    "x-api-key",
    "X-Auth-Token",
    "client_secret",
    "secret",
    "aws_secret_access_key",
    "SecretAccessKey",
    "private_key",
    "Authorization",
    "cookie",
    "Set-Cookie",
    "sessionid",
    "credentials",
    "signature",
]
PLAIN_KEYS = ["name", "id", "user", "tokens", "count", "password_hint", "token_type", "path"]
VALUE = "hunter2-Zq7xK"


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_a_value_under_a_secret_key_is_redacted(key: str) -> None:
    assert scrub_data({key: VALUE}) == {key: REDACTED}


@pytest.mark.parametrize("key", PLAIN_KEYS)
def test_a_value_under_another_key_is_kept(key: str) -> None:
    assert scrub_data({key: VALUE}) == {key: VALUE}


def test_nested_mappings_lists_and_other_mapping_types() -> None:
    data = {
        "db": {"host": "db.internal", "password": VALUE},
        "users": [{"name": "bob", "token": VALUE}, {"name": "eve", "api_key": VALUE}],
        "headers": OrderedDict([("Accept", "*/*"), ("Authorization", VALUE)]),
        "pairs": [("password", VALUE)],  # a list of two strings: no key to go by
    }
    out = scrub_data(data)
    assert out["db"] == {"host": "db.internal", "password": REDACTED}
    assert out["users"] == [
        {"name": "bob", "token": REDACTED},
        {"name": "eve", "api_key": REDACTED},
    ]
    assert out["headers"] == {"Accept": "*/*", "Authorization": REDACTED}
    assert VALUE not in json.dumps(out["db"]) + json.dumps(out["users"])


def test_numbers_follow_the_text_rules() -> None:
    """A numeric secret is redacted; a count under ``pass`` is not (as ``pass=3`` in text)."""
    assert scrub_data({"password": 12345678}) == {"password": REDACTED}
    assert scrub_data({"pin_token": 4711.5}) == {"pin_token": REDACTED}
    assert scrub_data({"pass": 3}) == {"pass": 3}


def test_what_says_nothing_is_kept() -> None:
    """None, booleans and an empty string reveal no secret; containers go by their own keys."""
    data = {"password": None, "token": True, "secret": "", "credentials": {"user": "bob"}}
    assert scrub_data(data) == data


def test_a_non_string_key_is_judged_by_its_text() -> None:
    class Key:
        def __str__(self) -> str:
            return "password"

    assert scrub_data({Key(): VALUE}) == {"password": REDACTED}


def test_structured_and_text_forms_agree() -> None:
    """Randomized: the value is redacted in the mapping exactly when the text rules redact
    it in the same pair written as JSON."""
    rng = random.Random(20261124)
    words = ["pass", "word", "token", "api", "key", "_", "-", "secret", "db", "id", "x", "Auth"]
    values = [VALUE, "abc", "true", "12345", "s3cr3t/Value", "bob"]
    for _ in range(3000):
        key = "".join(rng.choice(words) for _ in range(rng.randint(1, 4)))
        value = rng.choice(values)
        pair = json.dumps({key: value})
        text_redacts = json.dumps(value) not in scrub(pair).split(":", 1)[1]
        out = scrub_data({key: value})[key]
        assert (out == REDACTED) == text_redacts, (key, value, scrub(pair))


def test_long_and_hostile_keys_stay_bounded() -> None:
    key = "x" * 1_000_000 + "password"
    assert scrub_data({key: VALUE})[scrub(key)] == REDACTED
    many = {f"field{i}": VALUE for i in range(20_000)}
    assert scrub_data(many) == many


def test_the_caller_facing_constructors_redact_by_key() -> None:
    """The one-constructor guarantee: a partial result and a check's values."""
    env = ErrorEnvelope.build(
        "schema_mismatch",
        "bad",
        retryable=False,
        origin="pack",
        partial_result={"rows": 1, "connection": {"password": VALUE}},
    )
    assert env.partial_result == {"rows": 1, "connection": {"password": REDACTED}}
    check = CheckRecord.build("creds", "fail", "x", expected={"token": VALUE}, actual=[{"pw": 1}])
    assert check.expected == {"token": REDACTED}
    assert VALUE not in json.dumps(check.expected)
