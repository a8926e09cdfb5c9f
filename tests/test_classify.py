"""Unit tests of classification rules the failure corpus also provokes live.

Each rule here has corpus cases (``tests/failure_corpus/cases.py``) that make a real library
fail on loopback; these tests pin the rule itself on exceptions built from the same
library classes, so a regression names the rule, not a server.
"""

from __future__ import annotations

import warnings

import pytest
from failure_corpus.score import classifiers
from websockets.datastructures import Headers
from websockets.exceptions import (
    ConnectionClosedError,
    ConnectionClosedOK,
    InvalidMessage,
    InvalidStatus,
    InvalidURI,
)
from websockets.frames import Close
from websockets.http11 import Response

from control_plane.core.classify import Classification, classify

PLUGINS = classifiers()


def _code(exc: BaseException) -> Classification:
    with warnings.catch_warnings():
        # reading the deprecated ConnectionClosed.code would warn: the plugin must not
        warnings.simplefilter("error")
        found = classify(exc, PLUGINS)
    assert found is not None, repr(exc)
    return found


# -- websockets -------------------------------------------------------------------------


def _server_closed(code: int, reason: str = "") -> ConnectionClosedError:
    return ConnectionClosedError(Close(code, reason), Close(code, reason), True)


@pytest.mark.parametrize(
    ("close", "reason", "want"),
    [
        (1001, "restarting", "network_error"),
        (1008, "binary frames only", "internal_error"),
        (1008, "invalid token", "auth_failed"),
        (1008, "Unauthorized", "auth_failed"),
        (1009, "too big", "internal_error"),
        (1011, "boom", "network_error"),
        (1012, "", "network_error"),
        (1013, "overloaded", "rate_limited"),
        (1014, "", "network_error"),
        (3000, "", "auth_failed"),
        (4000, "app", "internal_error"),
    ],
)
def test_websockets_server_close_codes(close: int, reason: str, want: str) -> None:
    found = _code(_server_closed(close, reason))
    assert found.code == want
    assert found.rule.startswith(f"websockets:close:{close}")
    assert (found.retry_after is not None) == (want == "rate_limited")


def test_websockets_going_away_is_a_normal_close_that_still_retries() -> None:
    closed = ConnectionClosedOK(Close(1001, "bye"), Close(1001, "bye"), True)
    assert _code(closed).code == "network_error"


def test_websockets_a_close_the_client_started_is_not_the_servers() -> None:
    # the client refused a message over its max_size: a local limit, not the server's 1009
    too_big = ConnectionClosedError(Close(1009, "over size"), Close(1009, "over size"), False)
    assert _code(too_big).code == "internal_error"
    assert _code(too_big).rule == "websockets:sent:1009"
    keepalive = ConnectionClosedError(None, Close(1011, "keepalive ping timeout"))
    assert _code(keepalive).code == "timeout"


def test_websockets_no_close_frame_is_a_weak_network_error() -> None:
    dropped = ConnectionClosedError(None, None)
    assert _code(dropped).code == "network_error"
    # weak: what it wraps decides
    try:
        try:
            raise PermissionError(13, "denied")
        except PermissionError as inner:
            raise ConnectionClosedError(None, None) from inner
    except ConnectionClosedError as outer:
        assert _code(outer).code == "auth_failed"


def test_websockets_handshake_rejections_follow_the_http_table() -> None:
    for status, want in ((401, "auth_failed"), (404, "not_found"), (500, "network_error")):
        response = Response(status, "x", Headers())
        assert _code(InvalidStatus(response)).code == want


def test_websockets_a_server_that_hangs_up_during_the_handshake() -> None:
    try:
        try:
            raise EOFError("connection closed while reading HTTP status line")
        except EOFError as eof:
            raise InvalidMessage("did not receive a valid HTTP response") from eof
    except InvalidMessage as exc:
        assert _code(exc).code == "network_error"
    assert _code(InvalidMessage("garbage")).code == "internal_error"


def test_websockets_invalid_uri_is_the_packs_own_error() -> None:
    assert _code(InvalidURI("http://x/", "scheme isn't ws or wss")).code == "internal_error"
