"""Unit tests of classification rules the failure corpus also provokes live.

Each rule here has corpus cases (``tests/failure_corpus/cases.py``) that make a real library
fail on loopback; these tests pin the rule itself on exceptions built from the same
library classes, so a regression names the rule, not a server.
"""

from __future__ import annotations

import errno
import functools
import socket
import ssl
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
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

from control_plane._features.libraries import grpc as grpc_classifier
from control_plane._kernel.classify import (
    DEFAULT_RETRY_AFTER,
    MAX_GROUP_WORK,
    Classification,
    classify,
)
from control_plane._kernel.errors import PackError

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
        (1008, "invalid author field", "internal_error"),
        (1009, "too big", "internal_error"),
        (1011, "boom", "network_error"),
        (1012, "", "network_error"),
        (1013, "overloaded", "rate_limited"),
        (1014, "", "network_error"),
        (3000, "", "auth_failed"),
        # IANA's registry (3000-3999): 3003 "Forbidden" as HTTP 403, 3008 "Timeout" as 408
        (3003, "", "auth_failed"),
        (3008, "", "timeout"),
        (3001, "", "internal_error"),
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


def test_websockets_deprecated_properties_are_never_read() -> None:
    closed = _server_closed(1011, "boom")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert classify(closed, PLUGINS) is not None
        assert classify(RuntimeError("wrapped"), PLUGINS) is None
        try:
            raise RuntimeError("wrapper") from closed
        except RuntimeError as outer:
            assert classify(outer, PLUGINS) is not None
    assert [str(w.message) for w in seen] == []


# -- the pack's own TLS files -----------------------------------------------------------


def _raised(fn: Callable[[], object]) -> BaseException:
    try:
        fn()
    except BaseException as exc:  # the failure under test
        return exc
    raise AssertionError("did not fail")


def test_a_missing_ca_file_is_the_packs_configuration_not_a_missing_resource(
    tmp_path: Path,
) -> None:
    missing = str(tmp_path / "no-such-ca.pem")
    exc = _raised(lambda: ssl.create_default_context(cafile=missing))
    assert isinstance(exc, FileNotFoundError)  # the type table alone says not_found
    found = _code(exc)
    assert (found.code, found.rule) == ("internal_error", "tls:config_file")


def test_a_missing_client_certificate_or_key_is_the_packs_configuration(tmp_path: Path) -> None:
    def load(*files: str) -> None:
        ctx = ssl.create_default_context()
        ctx.load_cert_chain(*files)

    cert = str(tmp_path / "no-such-client.pem")
    assert _code(_raised(lambda: load(cert))).code == "internal_error"
    garbled = tmp_path / "garbled.pem"
    garbled.write_text("not a certificate\n")
    assert _code(_raised(lambda: load(str(garbled)))).code == "internal_error"


def test_an_unreadable_tls_file_is_not_a_rejected_credential() -> None:
    def load() -> None:
        ctx = ssl.create_default_context()  # noqa: F841 - the context being loaded
        # what _ssl raises for an unreadable file (root reads anything: not provoked live)
        raise PermissionError(errno.EACCES, "Permission denied")

    assert _code(_raised(load)).code == "internal_error"


def test_files_the_pack_names_itself_keep_their_codes(tmp_path: Path) -> None:
    def read_input() -> None:
        ctx = ssl.create_default_context()  # noqa: F841 - a context is around, unused here
        with open(tmp_path / "input.json"):  # names the file: the caller's input
            pass

    assert _code(_raised(read_input)).code == "not_found"

    def connect_unix() -> None:
        ctx = ssl.create_default_context()  # noqa: F841
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(tmp_path / "nobody.sock"))

    assert _code(_raised(connect_unix)).code == "network_error"


# -- gRPC status details quoting a TLS failure ------------------------------------------


class _StatusError(grpc.RpcError):
    """A gRPC error as an isolated worker records it: status name and details as data."""

    def __init__(self, status: str, details: str) -> None:
        super().__init__(details)
        setattr(self, grpc_classifier.FACTS_ATTR, (status, details, None))

    def __str__(self) -> str:  # as grpc's: the details are in the text
        return f"<_InactiveRpcError status = StatusCode.{self.args[0]}>"


_UPSTREAM_TLS = (
    "billing upstream: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
    "unable to get local issuer certificate (_ssl.c:1006)"
)
_CHANNEL_TLS = (
    "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:4443: Tls "
    "handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: error:1000007d:SSL routines:"
    "OPENSSL_internal:CERTIFICATE_VERIFY_FAILED: self signed certificate"
)


@pytest.mark.parametrize(
    ("status", "details", "want"),
    [
        # the server reports its own upstream's TLS failure: the status decides
        ("UNAVAILABLE", _UPSTREAM_TLS, "network_error"),
        ("UNKNOWN", f"Exception calling application: {_UPSTREAM_TLS}", "internal_error"),
        ("INTERNAL", _UPSTREAM_TLS, "internal_error"),
        # grpc core: this channel's own handshake failed
        ("UNAVAILABLE", _CHANNEL_TLS, "auth_failed"),
        (
            "UNAVAILABLE",
            "Ssl handshake failed: SSL_ERROR_SSL: CERTIFICATE_VERIFY_FAILED",
            "auth_failed",
        ),
        ("UNAVAILABLE", "failed to connect to all addresses; Connection refused", "network_error"),
    ],
)
def test_grpc_tls_words_in_status_details(status: str, details: str, want: str) -> None:
    exc = _StatusError(status, details)
    exc.args = (status,)
    assert _code(exc).code == want
    # and with the details in the exception's own text (the TLS plugin runs first)
    loud = _StatusError(status, details)
    assert _code(loud).code == want


# -- exception groups --------------------------------------------------------------------


def _refused() -> ConnectionRefusedError:
    return ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")


class _Status501(Exception):
    status_code = 501


@pytest.mark.parametrize("bug", [KeyError("k"), TypeError("t"), AttributeError("a")])
def test_a_bug_in_a_group_is_not_a_retryable_network_failure(bug: Exception) -> None:
    for members in ([bug, _refused()], [_refused(), bug]):
        found = _code(ExceptionGroup("tasks failed", members))
        assert (found.code, found.rule) == ("internal_error", "group:bug")


def test_a_permanent_member_makes_the_group_permanent_whatever_the_order() -> None:
    for members in ([_Status501(), _refused()], [_refused(), _Status501()]):
        assert _code(ExceptionGroup("g", members)).code == "internal_error"


def test_members_no_rule_knows_and_network_members_keep_network_error() -> None:
    # a ValueError is not a bug type: libraries raise it for bad data
    assert _code(ExceptionGroup("g", [ValueError("v"), _refused()])).code == "network_error"
    dns = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    assert _code(ExceptionGroup("g", [_refused(), dns])).code == "network_error"


def test_a_member_is_judged_by_its_own_chain() -> None:
    # a KeyError raised while handling a refused connection is a bug in the recovery code,
    # alone as outside a group; one raised deliberately ``from`` it keeps its code
    try:
        try:
            raise _refused()
        except ConnectionRefusedError:
            raise KeyError("fallback")  # noqa: B904 - the bug under test
    except KeyError as exc:
        handled = exc
    assert _code(handled).code == "internal_error"
    assert _code(ExceptionGroup("g", [handled, _refused()])).code == "internal_error"
    translated = KeyError("no such video")
    translated.__cause__ = handled.__context__
    assert _code(ExceptionGroup("g", [translated, _refused()])).code == "network_error"


def test_nested_groups_and_typed_errors() -> None:
    nested = ExceptionGroup("outer", [ExceptionGroup("inner", [IndexError(0)]), _refused()])
    assert _code(nested).code == "internal_error"
    typed = ExceptionGroup("g", [PackError("not_found", "no such video"), KeyError("k")])
    assert _code(typed).code == "not_found"  # a typed error wins, as anywhere in a chain


def test_hostile_groups_cost_a_bounded_amount_of_work() -> None:
    calls = 0

    def counting(exc: BaseException) -> Classification | None:
        nonlocal calls
        calls += 1
        return None

    leaf: BaseException = ValueError("leaf")
    for _ in range(12):  # 1000 members at every level, the same object repeated
        leaf = ExceptionGroup("wide", [leaf] * 1000)
    assert classify(leaf, (counting,)) is None
    assert calls <= MAX_GROUP_WORK + 64
    deep: BaseException = KeyError("k")
    for _ in range(1000):
        deep = ExceptionGroup("deep", [deep])
    # the walk's bounds (32 exceptions, groups judged 4 deep) end before the sibling and
    # the bug are reached: unclassified, which the caller receives as internal_error
    assert classify(ExceptionGroup("top", [deep, _refused()]), PLUGINS) is None


# -- retry_after defaults once, in Classification -----------------------------------------


class _Status(Exception):
    def __init__(self, status: int, retry_after: str | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.headers = {"Retry-After": retry_after} if retry_after is not None else {}


def test_rate_limited_without_retry_after_gets_the_default() -> None:
    assert Classification("rate_limited", "x").retry_after == DEFAULT_RETRY_AFTER
    assert Classification("rate_limited", "x", retry_after=7.5).retry_after == 7.5
    assert Classification("timeout", "x").retry_after is None
    # a Retry-After header still wins, absurd values are kept for the wire to clamp
    assert _code(_Status(429, "1e19")).retry_after == 1e19
    assert _code(_Status(429, "inf")).retry_after == DEFAULT_RETRY_AFTER


# -- a bug raised while handling a failure ----------------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _connect_refused() -> None:
    with socket.create_connection(("127.0.0.1", _closed_port()), timeout=5):
        pass


def test_a_bug_in_recovery_code_is_a_bug_not_the_failure_it_was_handling() -> None:
    """``except ConnectionError: <bug>``: Python chains the bug implicitly (``__context__``,
    "during handling of the above exception, another exception occurred"); the bug is what
    failed, and retrying runs into it again."""

    def missing_key() -> None:
        fallbacks: dict[str, str] = {}
        try:
            _connect_refused()
        except ConnectionError:
            fallbacks["mirror"]  # the bug under test

    def type_error() -> None:
        try:
            _connect_refused()
        except ConnectionError:
            retries: Any = None
            retries + 1  # the bug under test

    for handler in (missing_key, type_error):
        exc = _raised(handler)
        assert isinstance(exc.__context__, ConnectionRefusedError)
        found = _code(exc)
        assert (found.code, found.rule) == ("internal_error", "bug_while_handling"), handler
        # a wrapper that keeps it as its cause keeps its classification
        try:
            raise RuntimeError("the fetch failed") from exc
        except RuntimeError as outer:
            assert _code(outer).code == "internal_error"


def test_a_bug_in_recovery_code_of_a_real_client() -> None:
    import httpx

    def fetch() -> None:
        response = None
        try:
            with httpx.Client(timeout=5.0) as client:
                response = client.get(f"http://127.0.0.1:{_closed_port()}/")
        except httpx.ConnectError:
            response.json()  # type: ignore[union-attr] # AttributeError on None: a bug

    exc = _raised(fetch)
    assert isinstance(exc, AttributeError)
    assert _code(exc).code == "internal_error"


def test_deliberate_wrappers_keep_the_cause() -> None:
    def translated() -> None:
        try:
            _connect_refused()
        except ConnectionError as exc:
            raise LookupError("mirror unreachable") from exc  # explicit: the cause decides

    def implicit_wrapper() -> None:
        try:
            _connect_refused()
        except ConnectionError:
            raise ValueError("while fetching the mirror")  # noqa: B904 - not a bug type

    def suppressed() -> None:
        try:
            _connect_refused()
        except ConnectionError:
            raise KeyError("mirror") from None  # the author hid the cause

    assert _code(_raised(translated)).code == "network_error"
    assert _code(_raised(implicit_wrapper)).code == "network_error"
    assert classify(_raised(suppressed), PLUGINS) is None  # unclassified: internal_error
    assert classify(KeyError("alone"), PLUGINS) is None


# -- exception groups whose members disagree --------------------------------------------


@pytest.mark.parametrize(
    ("members", "want"),
    [
        # a permanent code beats a retryable one: retrying the whole cannot succeed
        ([_Status(401), _refused()], "auth_failed"),
        ([_Status(404), TimeoutError("slow")], "not_found"),
        # two permanent codes: the credentials first (a 404 behind a refused credential
        # may only hide the resource)
        ([_Status(404), _Status(403)], "auth_failed"),
        # retryable: the wait a throttled member asks for, then the more specific
        ([_refused(), _Status(429, "5")], "rate_limited"),
        ([_refused(), TimeoutError("slow")], "timeout"),
    ],
)
def test_a_group_takes_its_least_retryable_members_code(
    members: list[Exception], want: str
) -> None:
    for ordered in (members, members[::-1]):
        found = _code(ExceptionGroup("tasks failed", ordered))
        assert found.code == want, ordered


def test_a_group_of_throttled_members_waits_the_longest() -> None:
    members = [_Status(429, "5"), _Status(429, "30"), _Status(503, "12")]
    for ordered in (members, members[::-1]):
        found = _code(ExceptionGroup("g", ordered))
        assert (found.code, found.retry_after) == ("rate_limited", 30.0)


# -- a TLS context held on an object ------------------------------------------------------


class _TlsClient:
    def __init__(self) -> None:
        self.ctx = ssl.create_default_context()

    def use_client_cert(self, cert: str) -> None:
        self.ctx.load_cert_chain(cert)

    def trust(self, cafile: str) -> None:
        self.ctx.load_verify_locations(
            cafile=cafile,
        )


def test_a_missing_tls_file_loaded_into_a_context_held_on_an_object(tmp_path: Path) -> None:
    client = _TlsClient()
    for load in (client.use_client_cert, client.trust):
        exc = _raised(functools.partial(load, str(tmp_path / "no-such.pem")))
        assert isinstance(exc, FileNotFoundError)
        found = _code(exc)
        assert (found.code, found.rule) == ("internal_error", "tls:config_file"), load


def test_a_missing_file_opened_by_the_pack_keeps_not_found(tmp_path: Path) -> None:
    # the pack reads its certificate itself: open() names the file, and nothing tells the
    # pack's configuration from a path the caller gave (documented, not guessed)
    def read_cert() -> None:
        client = _TlsClient()
        with open(tmp_path / "client.pem") as f:
            client.ctx.load_verify_locations(cadata=f.read())

    assert _code(_raised(read_cert)).code == "not_found"


# -- a gRPC proxy forwarding its own channel's handshake failure (a documented limit) ------


def test_a_forwarded_channel_handshake_failure_is_indistinguishable() -> None:
    """A proxy that forwards its upstream channel's failed TLS handshake word for word: every
    observable of the error equals that of our own channel's failed handshake, so both get
    the TLS answer (the grpc classifier's documented limit). If grpcio ever tells them
    apart, this fails: then a rule is possible."""
    from concurrent import futures

    import trustme

    ca, rogue = trustme.CA(), trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    upstream = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    credentials = grpc.ssl_server_credentials(
        [(cert.private_key_pem.bytes(), cert.cert_chain_pems[0].bytes())]
    )
    upstream_port = upstream.add_secure_port("127.0.0.1:0", credentials)
    distrusting = grpc.ssl_channel_credentials(root_certificates=rogue.cert_pem.bytes())

    def call_upstream() -> None:
        with grpc.secure_channel(f"127.0.0.1:{upstream_port}", distrusting) as channel:
            channel.unary_unary("/corpus.Fail/OK")(b"", timeout=5)

    class Forwarding(grpc.GenericRpcHandler):
        def service(self, handler_call_details: Any) -> Any:
            def behave(request: bytes, context: grpc.ServicerContext) -> bytes:
                try:
                    call_upstream()
                except grpc.RpcError as exc:
                    context.abort(exc.code(), exc.details())  # type: ignore[attr-defined]
                return b""

            return grpc.unary_unary_rpc_method_handler(behave)

    proxy = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[Forwarding()])
    proxy_port = proxy.add_insecure_port("127.0.0.1:0")
    upstream.start()
    proxy.start()
    try:
        own = _raised(call_upstream)

        def through_proxy() -> None:
            with grpc.insecure_channel(f"127.0.0.1:{proxy_port}") as channel:
                channel.unary_unary("/any/Call")(b"", timeout=5)

        forwarded = _raised(through_proxy)
    finally:
        proxy.stop(None)
        upstream.stop(None)

    def seen(exc: Any) -> tuple[Any, ...]:
        return (
            exc.code(),
            exc.details(),
            exc.debug_error_string(),
            tuple(exc.initial_metadata() or ()),
            tuple(exc.trailing_metadata() or ()),
        )

    assert "Tls handshake failed" in own.details()  # type: ignore[attr-defined]
    assert seen(forwarded) == seen(own)
    assert _code(own).code == _code(forwarded).code == "auth_failed"


# -- facts: extraction is bounded and runs no code of the exception's (issue 36) -----------


class _Hostile(Exception):
    """An exception whose every computed attribute records that it ran, and blocks."""

    touched: list[str] = []  # shared on purpose: what ran

    @property
    def response(self) -> Any:
        _Hostile.touched.append("response")
        raise RuntimeError("a property ran")

    @property
    def status_code(self) -> int:
        _Hostile.touched.append("status_code")
        return 429

    def __getattr__(self, name: str) -> Any:
        _Hostile.touched.append(f"getattr:{name}")
        raise AttributeError(name)

    def __str__(self) -> str:
        _Hostile.touched.append("str")
        raise RuntimeError("str ran")


def test_extraction_runs_no_property_getattr_or_str_of_the_exception() -> None:
    from control_plane._kernel.facts import extract

    _Hostile.touched.clear()
    facts = extract(_Hostile("boom"))
    assert _Hostile.touched == []
    assert facts.status is None and facts.text == "boom"


def test_a_property_is_read_from_its_backing_field_not_called() -> None:
    class Wrapped(Exception):
        def __init__(self, response: Any) -> None:
            super().__init__("failed")
            self._response = response

        @property
        def response(self) -> Any:
            raise AssertionError("the property must not run")

    class Private(Exception):
        def __init__(self, details: dict[str, Any]) -> None:
            super().__init__("failed")
            self.__details = details

        @property
        def details(self) -> Any:
            raise AssertionError("the property must not run")

    found = _code(Wrapped({"status": 404}))
    assert found.code == "not_found"
    assert _code(Private({"codeName": "AccessDenied"})).code == "auth_failed"


def test_extraction_is_bounded_on_deep_wide_and_long_data() -> None:
    from control_plane._kernel.facts import MAX_STRING, extract

    deep: dict[str, Any] = {"error": {"code": "NoSuchKey"}}
    for _ in range(10_000):
        deep = {"error": deep}
    wide = {"errors": [{"errno": 1}] * 1_000_000, "code": "x" * 10_000_000}
    exc = ValueError("y" * 10_000_000)
    exc.response = {"Error": wide, "body": deep}  # type: ignore[attr-defined]
    facts = extract(exc)
    assert len(facts.text) <= 2 * MAX_STRING
    assert facts.codes == ()  # the deep code is beyond the bound; the huge one is no code


class _Api(Exception):
    def __init__(self, status: int, body: Any, headers: dict[str, str]) -> None:
        super().__init__(f"Error code: {status}")
        self.response = type("Response", (), {})()
        self.response.status_code = status
        self.response.headers = headers
        self.body = body
        self.status_code = status


@pytest.mark.parametrize(
    ("status", "body", "headers", "code", "retry_after"),
    [
        # the server's own delay, wherever it is said
        (429, {}, {"retry-after-ms": "7500"}, "rate_limited", 7.5),
        (429, {}, {"x-ratelimit-reset-requests": "6m0s"}, "rate_limited", 360.0),
        (503, {}, {"retry-after": "30"}, "rate_limited", 30.0),
        # a reset header on an ordinary 503 is no delay asked for
        (503, {}, {"x-ratelimit-reset-requests": "2s"}, "network_error", None),
        # quota is not throttling: its own code, no retry_after
        (429, {"error": {"code": "insufficient_quota"}}, {}, "quota_exhausted", None),
        (
            429,
            {"error": {"type": "insufficient_quota"}},
            {"retry-after": "1"},
            "quota_exhausted",
            None,
        ),
        (402, {"type": "error", "error": {"type": "billing_error"}}, {}, "quota_exhausted", None),
        # error codes in the body say more than the status
        (400, {"Error": {"Code": "ExpiredToken"}}, {}, "auth_failed", None),
        (503, {"Error": {"Code": "SlowDown"}}, {}, "rate_limited", DEFAULT_RETRY_AFTER),
        (400, b'{"__type": "ThrottlingException"}', {}, "rate_limited", DEFAULT_RETRY_AFTER),
    ],
)
def test_facts_kept_on_the_response_and_body_classify(
    status: int, body: Any, headers: dict[str, str], code: str, retry_after: float | None
) -> None:
    found = _code(_Api(status, body, headers))
    assert (found.code, found.retry_after) == (code, retry_after)


def test_botocore_style_nested_status_and_sqlstate_classes() -> None:
    exc = RuntimeError("An error occurred (Weird) when calling GetObject")
    exc.response = {  # type: ignore[attr-defined]
        "Error": {"Code": "Weird"},
        "ResponseMetadata": {"HTTPStatusCode": 404, "HTTPHeaders": {}},
    }
    assert _code(exc).code == "not_found"

    class QueryCanceled(Exception):
        sqlstate = "57014"

    class Privilege(Exception):
        pgcode = "42501"

    class AdminShutdown(Exception):
        sqlstate = "57P01"

    assert _code(QueryCanceled("canceling statement")).code == "timeout"
    assert _code(Privilege("permission denied")).code == "auth_failed"
    assert _code(AdminShutdown("terminating")).code == "network_error"


def test_errnos_held_in_containers_classify() -> None:
    class NoValidConnections(OSError):
        def __init__(self, errors: dict[Any, BaseException]) -> None:
            super().__init__(None, "Unable to connect")
            self.errors = errors

    exc = NoValidConnections({("127.0.0.1", 22): ConnectionRefusedError(errno.ECONNREFUSED, "x")})
    assert _code(exc).code == "network_error"


def test_a_numbered_fork_of_a_known_family_matches_its_rows() -> None:
    fork = type("LocalProtocolError", (Exception,), {"__module__": "httpx2._exceptions"})
    found = _code(fork("bad request line"))
    assert (found.code, found.rule) == ("internal_error", "httpx:httpx.LocalProtocolError")
    other = type("LocalProtocolError", (Exception,), {"__module__": "httpxy._exceptions"})
    assert classify(other("x"), PLUGINS) is None


def test_an_undeclared_quota_exhausted_falls_back_to_auth_failed_never_rate_limited() -> None:
    from runtime_support import invoker_for
    from runtime_support import output_schema as schema

    from control_plane._kernel.pack import CodeDoc, Pack

    def handler(doc: dict[str, Any], ctx: Any) -> Any:
        raise _Api(429, {"error": {"code": "insufficient_quota"}}, {})

    for declared, expected in (
        (("rate_limited", "auth_failed"), "auth_failed"),
        (("rate_limited", "quota_exhausted"), "quota_exhausted"),
        (("rate_limited",), "internal_error"),
    ):
        pack = Pack(
            name="quota.pack",
            version="1.0.0",
            summary="A pack.",
            input_schema={"type": "object"},
            output_schema=schema(declared),
            handler=handler,
            codes={
                code: CodeDoc("credit exhausted", recovery_hint="add credit")
                for code in declared
                if code == "quota_exhausted"
            },
        )
        with invoker_for(pack, max_workers=1) as invoker:
            outcome = invoker.invoke_sync("quota.pack", b"{}")
            assert outcome.code == expected, declared
            assert outcome.error is not None and outcome.error.retry_after is None
            assert invoker.contract_violations["quota.pack"] == 0


def test_subprocess_timeout_is_named_not_imported_and_hostile_look_alikes_are_not() -> None:
    """core imports no ``subprocess``: ``TimeoutExpired`` (and a subclass) is known by its
    real module and name; a class that only claims them, or whose metaclass or
    ``__module__`` raises when hashed or compared, is not matched by the type table, and
    classifying it raises nothing."""
    import subprocess

    class Subclass(subprocess.TimeoutExpired):
        pass

    for exc in (subprocess.TimeoutExpired(["git"], 5), Subclass(["git"], 5)):
        found = classify(exc)
        assert found is not None and (found.code, found.rule) == ("timeout", "type")

    class Refuses:
        __hash__ = None  # type: ignore[assignment]

        def __eq__(self, other: object) -> bool:
            raise RuntimeError("eq")

    class Meta(type):
        def __hash__(cls) -> int:
            raise RuntimeError("hash")

        @property
        def __name__(cls) -> str:  # type: ignore[override]
            return "TimeoutExpired"

    class Claims(Exception, metaclass=Meta):
        __module__ = "subprocess"

    class TimeoutExpired(Exception):
        __module__ = Refuses()  # type: ignore[assignment]

    for exc in (Claims("x"), TimeoutExpired("x")):
        found = classify(exc)  # the words of a class name may still say "timeout", weakly
        assert found is None or (found.rule != "type" and found.weak)
