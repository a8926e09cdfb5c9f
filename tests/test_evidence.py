"""The evidence engine (docs/classification.md, "Evidence"): each fact with its provenance,
specific evidence over generic, conflicts to ``internal_error``, and for every rule that can
fire on generic evidence what it must *not* match.

Exceptions are built here as the libraries build them (a class of the library's module name,
the fields it sets): the corpora provoke the real ones.
"""

from __future__ import annotations

import errno
from typing import Any

import pytest
from failure_corpus.score import classifiers

from control_plane._kernel.classify import Classification, classify
from control_plane._kernel.evidence import read_lines, tokens, words_code

PLUGINS = classifiers()


def _code(exc: BaseException) -> str:
    found = classify(exc, PLUGINS)
    return "internal_error" if found is None else found.code


def _found(exc: BaseException) -> Classification:
    found = classify(exc, PLUGINS)
    assert found is not None, repr(exc)
    return found


def _klass(module: str, name: str, *bases: type) -> type:
    return type(name, bases or (Exception,), {"__module__": module})


class _Response:
    def __init__(self, status: int, body: Any = None, headers: dict[str, str] | None = None):
        self.status_code = status
        self.headers = headers or {}
        self._content = body


def _api(status: int, body: Any = None, headers: dict[str, str] | None = None, **kw: Any) -> Any:
    exc = _klass("someapi.errors", "ApiError")("the call failed")
    exc.response = _Response(status, body, headers)
    for key, value in kw.items():
        setattr(exc, key, value)
    return exc


# -- tokens --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("TooManyRequests", ("too", "many", "requests")),
        ("THROTTLING_QUOTA_EXCEEDED", ("throttling", "quota", "exceeded")),
        ("rate_limit_exceeded", ("rate", "limit", "exceeded")),
        ("HTTPStatusError", ("http", "status", "error")),
        ("not authorised", ("not", "authorised")),
    ],
)
def test_words_are_split_across_every_case_style(text: str, words: tuple[str, ...]) -> None:
    assert tokens(text) == words


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("NoSuchBucket", "not_found"),
        ("ResourceNotFoundException", "not_found"),
        ("rateLimitExceeded", "rate_limited"),
        ("SLOW_DOWN", "rate_limited"),
        ("InvalidCredentials", "auth_failed"),
        ("PermissionDenied", "auth_failed"),
        ("DeadlineExceeded", "timeout"),
        ("EntityAlreadyExists", "already_exists"),
        ("RequestEntityTooLarge", "internal_error"),
    ],
)
def test_code_words_mean_what_they_say(text: str, code: str) -> None:
    found = words_code(text, whole=True)
    assert found is not None and found[0] == code


@pytest.mark.parametrize(
    "text",
    [
        # a word alone in a sentence says too little
        "the request was declined by the reviewer, see notes",
        "the preview is unavailable in this edition",
        # what a text quotes is the caller's data, not the failure
        "GET https://example.invalid/not-found/page returned an error",
        "cannot open '/srv/timeout/file': bad format",
        'column "does not exist" is a literal here',
        # words that merely contain a vocabulary word
        "notfoundation configuration invalid",
        "the throughput was fine",
    ],
)
def test_generic_words_do_not_fire_on_what_they_must_not_match(text: str) -> None:
    assert words_code(text) is None, text


# -- provenance of numbers -----------------------------------------------------------------


def test_a_protocol_reply_number_is_not_an_http_status() -> None:
    # a mail library's rejected login keeps the reply code in ``code``: 535 is not a 5xx
    smtp = _klass("aiosmtplib.errors", "SMTPResponseException")
    exc = smtp("the relay said no")  # the number alone says what
    exc.code = 535
    assert _code(exc) == "auth_failed"
    # 550 alone says only "permanent": RFC 5321's "mailbox unavailable" is also "no
    # access" or "policy"; its enhanced status code says what (tests/test_evidence_rules.py)
    exc.code = 550
    assert _code(exc) == "internal_error"


def test_a_number_in_a_field_named_code_is_no_status_outside_http() -> None:
    # the size of a number does not make it an HTTP status (must NOT match: 503 -> network)
    exc = _klass("columnstore.driver", "ServerException")("query failed")
    exc.code = 503
    assert _code(exc) == "internal_error"
    # on an HTTP object (headers held), ``code`` is its status
    http = _klass("someweb.client", "ClientError")("failed")
    http.code = 503
    http.headers = {"Retry-After": "7"}
    found = _found(http)
    assert (found.code, found.retry_after) == ("rate_limited", 7.0)


@pytest.mark.parametrize(
    ("module", "name", "fields", "args", "code"),
    [
        ("pymysql.err", "OperationalError", {}, (1045, "Access denied for user"), "auth_failed"),
        ("pymysql.err", "OperationalError", {}, (1049, "Unknown database 'x'"), "not_found"),
        ("pymysql.err", "OperationalError", {}, (2003, "Can't connect"), "network_error"),
        ("clickhouse_driver.errors", "ServerException", {"code": 516}, ("denied",), "auth_failed"),
        ("ldap", "INVALID_CREDENTIALS", {}, ({"result": 49, "desc": "Invalid"},), "auth_failed"),
        ("kafka.errors", "BrokerResponseError", {"errno": 29}, ("topic",), "auth_failed"),
        ("pika.exceptions", "ChannelClosedByBroker", {}, (404, "NOT_FOUND - no q"), "not_found"),
        ("ftplib", "error_temp", {}, ("421 Too many users",), "network_error"),
    ],
)
def test_protocol_numbers_are_read_with_their_protocol(
    module: str, name: str, fields: dict[str, Any], args: tuple[Any, ...], code: str
) -> None:
    exc = _klass(module, name)(*args)
    for key, value in fields.items():
        setattr(exc, key, value)
    assert _code(exc) == code


def test_a_protocol_number_of_an_unknown_library_is_not_read() -> None:
    exc = _klass("mydriver", "DriverError")(1045, "boom")  # 1045 means nothing here
    assert _code(exc) == "internal_error"
    os_like = _klass("kafka.errors", "KafkaError")("x")
    os_like.errno = errno.ECONNREFUSED  # a protocol's errno is not an OS errno
    assert _code(os_like) == "internal_error"


# -- specific over generic -----------------------------------------------------------------


def test_a_class_named_for_authentication_beats_its_builtin_base() -> None:
    exc = _klass("brokerlib", "AuthenticationError", ConnectionError)("bad login")
    assert _code(exc) == "auth_failed"
    # must NOT match: a plain connection error of the same library stays network_error
    plain = _klass("brokerlib", "BrokerConnectionError", ConnectionError)("lost")
    assert _code(plain) == "network_error"


def test_a_403_whose_body_or_class_says_rate_limit_is_rate_limited() -> None:
    body = {"error": {"code": "rate_limit_exceeded", "message": "slow down"}}
    assert _code(_api(403, body)) == "rate_limited"
    named = _klass("someapi", "RateLimitError")("limited")
    named.response = _Response(403)
    assert _code(named) == "rate_limited"
    assert _code(_api(403, {"error": {"code": "forbidden"}})) == "auth_failed"


def test_a_403_of_a_read_only_cluster_is_not_an_auth_failure() -> None:
    body = {"error": {"type": "cluster_block_exception", "reason": "index read_only"}}
    assert _code(_api(403, body)) == "internal_error"


def test_a_402_declined_payment_is_not_a_quota() -> None:
    assert _code(_api(402, {"error": {"code": "card_declined"}})) == "internal_error"
    assert _code(_api(402, {})) == "quota_exhausted"


def test_a_413_saying_rate_limit_is_not_retryable_throttling() -> None:
    found = _found(_api(413, {"error": {"code": "rate_limit_exceeded"}}))
    assert found.code == "internal_error" and found.retry_after is None


def test_conflicting_specific_evidence_is_internal_error_never_a_guess() -> None:
    body = {"errors": [{"code": "AccessDenied"}, {"code": "NoSuchKey"}]}
    found = _found(_api(400, body))
    assert found.code == "internal_error" and found.rule.startswith("conflict:")


def test_a_wrapper_guess_over_a_connection_never_made_is_network_error() -> None:
    wrapper = _klass("imagetool", "ImageError")("image not found locally")
    wrapper.__cause__ = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    assert _code(wrapper) == "network_error"
    # typed as a missing file: its built-in base says not_found, its cause says no server
    typed = _klass("modelhub", "ModelNotFoundLocally", FileNotFoundError)("not found locally")
    typed.__cause__ = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    assert _code(typed) == "network_error"
    assert _code(_klass("modelhub", "ModelNotFoundLocally", FileNotFoundError)("x")) == "not_found"
    # must NOT match: a server's own answer above the cause keeps its code
    answered = _api(404, {"error": {"code": "not_found"}})
    answered.__cause__ = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    assert _code(answered) == "not_found"
    # nor a server's phrase: a role that does not exist was said by the database
    role = _klass("pgdriver", "OperationalError")('FATAL:  role "x" does not exist')
    role.__cause__ = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    assert _code(role) == "auth_failed"


def test_phrases_match_meaning_first() -> None:
    exc = _klass("mqttlib", "MQTTError")("Connection refused: not authorised")
    assert _code(exc) == "auth_failed"
    assert _code(_klass("mqttlib", "MQTTError")("Connection refused")) == "network_error"


# -- delays --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "delay"),
    [
        ({"retry_after": 12}, 12.0),
        ({"retry_after_s": 3.5}, 3.5),
        ({"backoff": 8}, 8.0),
        ({"retry_after_ms": 1500}, 1.5),
        ({"retryDelay": "30s"}, 30.0),
    ],
)
def test_a_delay_is_read_under_any_name(fields: dict[str, Any], delay: float) -> None:
    exc = _klass("someapi", "TooManyRequestsError")("slow down")
    for key, value in fields.items():
        setattr(exc, key, value)
    found = _found(exc)
    assert (found.code, found.retry_after) == ("rate_limited", delay)


def test_a_delay_in_a_cause_or_a_decoded_error_object() -> None:
    outer = _klass("sdk", "RateLimitError")("throttled")
    outer.__cause__ = _api(429, headers={"retry-after": "9"})
    assert _found(outer).retry_after == 9.0
    body = {"error": {"code": 429, "details": [{"retryDelay": "20s"}]}}
    found = _found(_api(429, body))
    assert (found.code, found.retry_after) == ("rate_limited", 20.0)


def test_a_server_delay_makes_an_unavailable_service_rate_limited() -> None:
    found = _found(_api(503, headers={"retry-after": "4"}))
    assert (found.code, found.retry_after) == ("rate_limited", 4.0)
    assert _code(_api(503)) == "network_error"  # no delay: not throttling


def test_an_error_code_in_a_200_body() -> None:
    assert _code(_api(200, {"ok": False, "error": "ratelimited"})) == "rate_limited"
    assert _code(_api(200, {"ok": False, "error": "channel_not_found"})) == "not_found"
    assert _code(_api(200, {"ok": False, "error": "invalid_auth"})) == "auth_failed"
    assert _code(_api(200, {"ok": True})) == "internal_error"


# -- a tool's output -----------------------------------------------------------------------


def test_a_tools_first_error_line_beats_a_summary_line() -> None:
    out = (
        "Looking in indexes: http://127.0.0.1:1/simple\n"
        "ERROR: Could not find a version that satisfies the requirement x (from versions: none)\n"
        "ERROR: No matching distribution found for x\n"
    )
    assert read_lines(out) is None  # a summary alone says nothing specific
    out = "WARNING: 401 Error, Unauthorized for url\n" + out
    found = read_lines(out)
    assert found is not None and found[0] == "auth_failed"
    refused = "error: Could not connect to server: Connection refused\nNo matching distribution"
    found = read_lines(refused)
    assert found is not None and found[0] == "network_error"


def test_a_bracketed_response_code_is_read_from_a_mail_protocol_only() -> None:
    imap = _klass("imaplib", "error")("[AUTHENTICATIONFAILED] Authentication failed.")
    assert _code(imap) == "auth_failed"
    pop = _klass("poplib", "error_proto")("-ERR [LOGIN-DELAY] wait")
    assert _found(pop).code == "rate_limited"
    # must NOT match: brackets in another library's text are its own business
    other = _klass("jobrunner", "JobError")("[AUTH] step 3 of the job failed")
    assert _code(other) == "internal_error"


def test_a_delay_field_that_is_no_delay_or_on_no_throttling_decides_nothing() -> None:
    # must NOT match: a backoff policy object is not a delay
    policy = _klass("someapi", "TooManyRequestsError")("slow down")
    policy.backoff = object()
    found = _found(policy)
    assert (found.code, found.retry_after) == ("rate_limited", 1.0)  # the default
    # a delay does not make a rejected credential retryable
    denied = _klass("someapi", "AuthenticationError")("bad key")
    denied.retry_after = 30
    assert _found(denied).code == "auth_failed" and _found(denied).retry_after is None
    # nor a refused connection (no server answered)
    refused = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    refused.__cause__ = _api(503, headers={"retry-after": "5"})
    assert _code(refused) == "network_error"
