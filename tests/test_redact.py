"""The secret scrubber on header-shaped text: every credential form goes, prose stays."""

from __future__ import annotations

import pytest

from control_plane.core.redact import REDACTED, scrub

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
