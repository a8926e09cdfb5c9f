"""Issue 42 item 4: a key whose name says password, passphrase or private key, in any
spelling, with any assignment, is a secret -- in text, URLs, JSON and YAML alike."""

from __future__ import annotations

import json

import pytest

from control_plane._kernel.redact import scrub, scrub_data

SECRET = "Zq7hunter2xyz"

#: Names that say password, passphrase or private key, as code and config spell them.
NAMES = (
    *("DB_PASS", "db_pass", "db-pass", "db.pass", "dbPass", "DbPass", "KEY_PASS"),
    *("mysql_root_pass", "SMTP_PASS", "userPwd", "user_pwd", "USER-PWD", "dbPw", "rootPW"),
    *("user_pw", "pass_phrase", "passPhrase", "SSH_PASS_PHRASE", "sshPassPhrase"),
    *("pass_word", "privKey", "privateKey", "priv_key", "PRIVATE_KEY", "signingPrivKey"),
)

#: Each assignment: text ``k=v``, ``k: v``, ``k = "v"``, JSON, YAML, a URL query.
FORMS = (
    "{k}={v}",
    "{k}: {v}",
    '{k} = "{v}"',
    '{{"{k}": "{v}", "user": "bob"}}',
    "config:\n  {k}: {v}\n  host: db",
    "https://db.example.invalid/connect?{k}={v}&user=bob",
    "export {k}='{v}'",
)


@pytest.mark.parametrize("name", NAMES)
def test_a_key_named_for_a_password_is_redacted_in_every_form(name: str) -> None:
    for form in FORMS:
        text = form.format(k=name, v=SECRET)
        out = scrub(text)
        assert SECRET not in out, (text, out)
        assert name in out, (text, out)  # the key stays: the reader sees what was hidden


@pytest.mark.parametrize("name", NAMES)
def test_in_structured_data(name: str) -> None:
    data = {name: SECRET, "nested": [{name: SECRET}], "user": "bob"}
    out = scrub_data(data)
    assert SECRET not in json.dumps(out), out
    assert out["user"] == "bob"


@pytest.mark.parametrize(
    "text",
    [
        "bypass=true",
        "compass=north",
        "passage: long",
        "OLDPWD=/home/app/old",
        "first_pass: 3",
        "dry_pass: no",
        "tests_pass: true",
        "surpass=12",
        "private: true",
        "privileges: admin",
        "pwdump is a tool",
        "the db_pass was rotated yesterday",
    ],
)
def test_words_that_only_contain_the_letters_stay(text: str) -> None:
    assert scrub(text) == text
