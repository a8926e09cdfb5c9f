"""Rules of the evidence engine added for issue 44's live corpus (docs/classification.md,
"Extract, then classify"): each rule as it must fire, and what it must *not* match.

Exceptions are built as the libraries build them (a class of the library's module name,
the fields it sets); ``tests/corpus_live`` provokes the real ones.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
from failure_corpus.score import classifiers

from control_plane._kernel.classify import Classification, classify
from control_plane._kernel.evidence import name_proposal, read_tool, words_code
from control_plane._kernel.stderr import classify_tool

PLUGINS = classifiers()


def _found(exc: BaseException) -> Classification | None:
    return classify(exc, PLUGINS)


def _code(exc: BaseException) -> str:
    found = _found(exc)
    return "internal_error" if found is None else found.code


def _klass(module: str, name: str, *bases: type) -> type:
    return type(name, bases or (Exception,), {"__module__": module})


# -- SMTP: a reply's class says how, its words and enhanced status code say what -----------

_Refused = _klass("aiosmtplib.errors", "SMTPRecipientRefused")
_AllRefused = _klass("aiosmtplib.errors", "SMTPRecipientsRefused")


def _recipients(code: int, message: str) -> BaseException:
    """aiosmtplib's shape: the refusal holds one exception per recipient (code, message)."""
    one = _Refused(code, message)
    one.code, one.message = code, message
    exc = _AllRefused([one])
    exc.recipients = [one]
    return exc


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (550, "5.1.1 <x@example.org>: Recipient address rejected: User unknown", "not_found"),
        (551, "5.1.6 User has moved; please try <y@example.org>", "not_found"),
        (554, "5.7.1 <x@example.org>: Relay access denied", "auth_failed"),
        (421, "4.7.0 Too many messages from this sender, try again later", "rate_limited"),
        (450, "4.7.1 Rate limit exceeded for this sender, slow down", "rate_limited"),
        (451, "4.3.0 Temporary local problem", "network_error"),
        # must NOT match: a 5xx class alone is no specific code (policy, spam, size)
        (550, "5.7.1 Message rejected by local policy", "internal_error"),
        (554, "5.7.1 Message rejected as spam", "internal_error"),
        # must NOT be read as "transient, so network": a full mailbox is the recipient's
        (452, "4.2.2 Mailbox full", "internal_error"),
    ],
)
def test_an_smtp_reply_is_read_by_class_words_and_enhanced_status(
    code: int, message: str, expected: str
) -> None:
    assert _code(_recipients(code, message)) == expected


def test_an_enhanced_status_code_is_read_from_an_smtp_reply_only() -> None:
    # must NOT match: a version or a section number in another library's text
    other = _klass("jobrunner", "JobError")("step 5.1.1 of the job failed")
    assert _code(other) == "internal_error"
    text = _klass("reportlib", "ReportError")("550 5.1.1 quoted in a report")
    assert _code(text) == "internal_error"


# -- MySQL numbers, and a timeout beneath a lost connection --------------------------------

_MySQL = _klass("pymysql.err", "OperationalError")


@pytest.mark.parametrize(
    ("number", "text", "expected"),
    [
        (1007, "Can't create database 'app'; database exists", "already_exists"),
        (1969, "Query execution was interrupted (max_statement_time exceeded)", "timeout"),
        (1226, "User 'u' has exceeded the 'max_queries_per_hour' resource", "rate_limited"),
        (2013, "Lost connection to MySQL server during query (timed out)", "timeout"),
        # must NOT match: a lost connection without a timeout stays a network failure
        (2013, "Lost connection to MySQL server during query", "network_error"),
    ],
)
def test_mysql_numbers(number: int, text: str, expected: str) -> None:
    assert _code(_MySQL(number, text)) == expected


def test_a_timeout_noun_does_not_settle_a_connection_failure() -> None:
    # must NOT match: "timeout" as a noun may name a setting, not an event
    refused = _MySQL(2003, "Can't connect to MySQL server on 'db' (timeout setting 5)")
    assert _code(refused) == "network_error"


# -- delays and statuses where libraries keep them ------------------------------------------


class _SlotHeaders:
    """A headers object keeping its entries in a slot of its own name, as
    ``elastic_transport.HttpHeaders`` does (``{lower: (Name, value)}``)."""

    __slots__ = ("_frozen", "_internal")

    def __init__(self, entries: dict[str, str]) -> None:
        self._internal = {k.lower(): (k, v) for k, v in entries.items()}
        self._frozen = True


class _Meta:
    def __init__(self, status: int, headers: Any) -> None:
        self.status = status
        self.headers = headers


def test_a_delay_in_headers_kept_under_any_store_name() -> None:
    exc = _klass("searchlib", "ApiError")("es_rejected_execution_exception")
    exc.meta = _Meta(429, _SlotHeaders({"Retry-After": "5", "Content-Type": "x"}))
    found = _found(exc)
    assert found is not None and (found.code, found.retry_after) == ("rate_limited", 5.0)
    # must NOT match: a slot holding something else is no delay
    exc.meta = _Meta(429, _SlotHeaders({"X-Retry-Count": "5"}))
    found = _found(exc)
    assert found is not None and found.retry_after == 1.0  # the default: none stated


class _Response:
    def __init__(self, status: int, headers: dict[str, str]) -> None:
        self.status_code = status
        self.headers = headers


def _library(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    sys.modules[name] = module
    return module


_VAULT = _library(
    "vaultlike.adapters",
    """
class VaultError(Exception):
    pass

VaultError.__module__ = "vaultlike.exceptions"

class RateLimitExceeded(VaultError):
    pass

RateLimitExceeded.__module__ = "vaultlike.exceptions"

class InvalidPath(VaultError):
    pass

InvalidPath.__module__ = "vaultlike.exceptions"

def _raise(status):
    raise {404: InvalidPath, 429: RateLimitExceeded}[status]("on get /v1/secret")

def request(response):
    _raise(response.status_code)
""",
)


def test_a_response_a_library_raised_about_is_read_from_its_own_frames() -> None:
    with pytest.raises(Exception) as caught:
        _VAULT.request(_Response(429, {"Retry-After": "3"}))
    found = _found(caught.value)
    assert found is not None and (found.code, found.retry_after) == ("rate_limited", 3.0)
    with pytest.raises(Exception) as caught:
        _VAULT.request(_Response(404, {}))
    assert _code(caught.value) == "not_found"


def test_a_response_in_another_packages_frame_is_not_the_exceptions() -> None:
    # must NOT match: the pack's own frame holds an earlier call's response
    earlier = _Response(404, {"Retry-After": "30"})
    with pytest.raises(Exception) as caught:
        raise _VAULT.VaultError("on get /v1/secret")
    assert earlier.status_code == 404
    assert _code(caught.value) == "internal_error"


# -- a tool's output, read by the engine ----------------------------------------------------


@pytest.mark.parametrize(
    ("stderr", "expected"),
    [
        ("ERROR 1049 (42000): Unknown database 'ghost'\n", "not_found"),
        ("ERROR 1142 (42000) at line 1: SELECT command denied to user 'u'\n", "auth_failed"),
        ("ERROR 1969 (70100) at line 1: Query execution was interrupted\n", "timeout"),
        ("ERROR 2005 (HY000): Unknown server host 'db.invalid' (-2)\n", "network_error"),
        ("ERROR 2013 (HY000): Lost connection to server, system error: 110\n", "timeout"),
        ("ERROR 2013 (HY000): Lost connection to server, system error: 11\n", "network_error"),
    ],
)
def test_a_tool_named_for_a_protocol_has_its_numbers_read(stderr: str, expected: str) -> None:
    found = classify_tool(["mariadb", "-e", "SELECT 1"], 1, stderr.encode())
    assert found is not None and found.code == expected, found


def test_an_errno_a_tool_quotes_is_read_only_for_a_connection() -> None:
    found = read_tool("fetch: connect failed (errno 111)")
    assert found is not None and found.code == "network_error"
    # must NOT match: a missing file (ENOENT) may be the tool's own configuration
    assert read_tool("fetch: open failed (errno 2)") is None


def test_a_timeout_noun_in_a_tools_line_does_not_settle_its_connection_failure() -> None:
    # must NOT match: the client's setting, not an event
    found = classify_tool(["mariadb"], 1, b"ERROR 2003 (HY000): Can't connect (timeout 5)\n")
    assert found is not None and found.code == "network_error"


def test_a_number_of_a_tool_named_for_no_protocol_is_not_read() -> None:
    # must NOT match: "ERROR 1045" of any other tool is its own number
    assert classify_tool(["mytool"], 1, b"ERROR 1045: step failed\n") is None
    assert read_tool("ERROR 1049 (42000): step failed") is None


def test_an_smtp_reply_with_its_enhanced_status_says_smtp_in_any_tool() -> None:
    found = classify_tool(
        ["swaks", "--to", "x"],
        28,
        b"*** No authentication type succeeded\n",
        b"<** 535 5.7.8 Authentication credentials invalid\n",
    )
    assert found is not None and found.code == "auth_failed"
    found = classify_tool(["sendtool"], 24, b"<** 550 5.1.1 <x@example.org>: rejected\n")
    assert found is not None and found.code == "not_found"
    # must NOT match: a reply number whose class disagrees with the status code's, a
    # version number
    assert read_tool("550 4.1.1 something") is None
    assert read_tool("release 550 5.1.1 shipped") is None


# -- the vocabulary -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("ERROR 2002 (HY000): Can't connect to server on '127.0.0.1' (115)", "network_error"),
        ("*** Error connecting to no-such-host.invalid:25:", "network_error"),
        ("Error: The connection was lost.", "network_error"),
        ("Connection Refused: not authorised.", "auth_failed"),
        ("Flex tier capacity exceeded, try again later", "network_error"),
        ("Malformed SMTP response line: NOT A PROTOCOL", "network_error"),
        ("CONFLICT (content): Merge conflict in app.py", "internal_error"),
    ],
)
def test_words_of_a_text(text: str, code: str) -> None:
    found = words_code(text)
    assert found is not None and found[0] == code, found


@pytest.mark.parametrize(
    ("word", "code"),
    [
        ("not_authed", "auth_failed"),
        ("token_revoked", "auth_failed"),
        ("account_inactive", "auth_failed"),
        ("missing_scope", "auth_failed"),
        ("insufficient_scope", "auth_failed"),
        ("invalid_grant", "auth_failed"),
        ("capacity_exceeded", "network_error"),
    ],
)
def test_code_words(word: str, code: str) -> None:
    found = words_code(word, whole=True)
    assert found is not None and found[0] == code, found


@pytest.mark.parametrize(
    "text",
    [
        # a host or a file is named, not said (dotted names are quoted data)
        "connecting to no-such-host.invalid failed",
        "wrote not.found.txt",
        # "capacity" alone is no failure; "down" of a sentence is no class name
        "disk capacity is 80%",
        # a malformed request is the caller's, not the downstream's
        "malformed query: unknown field",
        "the job wound down",
        # "no * found" is one word between; "too many" of what a call sends is no connection
        "no valid entries were found",
        "too many columns in the select list",
        "the username field is optional, the password too",
    ],
)
def test_new_words_do_not_fire_on_what_they_must_not_match(text: str) -> None:
    assert words_code(text) is None, text


def test_a_deadlock_conflict_stays_a_deadlock() -> None:
    found = words_code("deadlock detected; conflict with recovery")
    assert found is not None and found[0] == "internal_error"


def test_class_names_that_say_how_and_what() -> None:
    slow = name_proposal(("SlowDown",))
    assert slow is not None and slow.code == "rate_limited"
    for name in ("VaultDown", "MemcacheUnexpectedCloseError", "InternalServerError"):
        found = name_proposal((name,))
        assert found is not None and found.code == "network_error" and found.weak, name
    # must NOT match: a word that merely contains "down"
    assert name_proposal(("DownloadError",)) is None
    assert name_proposal(("CountdownError",)) is None


def test_refused_qualified_by_an_authorisation_word() -> None:
    assert _code(ConnectionRefusedError("Connection Refused: not authorised.")) == "auth_failed"
    assert _code(ConnectionRefusedError("Connection Refused: unknown reason.")) == ("network_error")


# -- a refusal by the confinement of the product's own worker ------------------------------


def test_the_kernels_refusal_in_a_confined_worker_is_not_permitted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import errno

    from control_plane._features.isolation import worker_failures

    def code(exc: BaseException) -> str:
        data = worker_failures._classification_data(exc)
        return "internal_error" if data is None else str(data["code"])

    refused = PermissionError(errno.EACCES, "Permission denied")
    wrapped = RuntimeError("could not open the socket")
    wrapped.__cause__ = PermissionError(errno.EPERM, "Operation not permitted")
    # must NOT match: outside confinement, or a server's refusal inside it
    forbidden = _klass("someapi.errors", "ApiError")("forbidden")
    forbidden.status_code = 403
    forbidden.headers = {}
    assert code(refused) == "auth_failed"
    monkeypatch.setattr(worker_failures._Worker, "confined", True)
    assert code(refused) == "not_permitted"
    assert code(wrapped) == "not_permitted"
    assert code(forbidden) == "auth_failed"
    assert code(ConnectionRefusedError(errno.ECONNREFUSED, "refused")) == "network_error"


# -- issue 44, held-out lessons: no wrong code from generic evidence -----------------------


def _http(module: str, name: str, status: int, body: Any, text: str = "") -> BaseException:
    exc = _klass(module, name)(text or f"HTTP {status}")
    exc.status_code = status
    exc.headers = {}
    exc.body = body
    return exc


@pytest.mark.parametrize(
    "text",
    [
        "Conflict occurred while saving. Please try again.",
        "received 409 (Conflict)",
        "conflict_error",
        # an optimistic-concurrency failure: another writer won, its text may say more
        "version_conflict_engine_exception",
        # a type conflict: the thing "exists as" another type, it is not a duplicate
        'partial write: field type conflict: input field "v" is type float, '
        "already exists as type integer",
    ],
)
def test_a_conflict_alone_does_not_say_the_thing_exists(text: str) -> None:
    found = words_code(text)
    assert found is None or found[0] not in {"already_exists"}, found
    found = words_code(text, whole=True)
    assert found is None or found[0] != "already_exists", found


def test_what_still_says_exists() -> None:
    for text in (
        "document already exists",
        "duplicate key value",
        "Collection `x` already exists!",
    ):
        found = words_code(text)
        assert found is not None and found[0] == "already_exists", text
    assert name_proposal(("ResourceConflict",)) is None
    assert name_proposal(("AlreadyExistsError",)) is not None


def test_a_conflict_status_with_try_again_is_no_duplicate() -> None:
    exc = _http("notionlike.errors", "APIResponseError", 409, {"code": "conflict_error"})
    assert _code(exc) != "already_exists"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("NOT_ALLOWED - access to vhost 'locked' refused for user 'app'", "auth_failed"),
        ("Connection was closed by remote server: access to vhost refused", "auth_failed"),
        ("Error: etcdserver: mvcc: database space exceeded", "quota_exhausted"),
        (
            "code = ResourceExhausted desc = etcdserver: mvcc: database space exceeded",
            "quota_exhausted",
        ),
        ("Insufficient Storage on the server", "quota_exhausted"),
    ],
)
def test_refusals_and_space_qualified_by_what(text: str, code: str) -> None:
    found = words_code(text)
    assert found is not None and found[0] == code, found


@pytest.mark.parametrize(
    "text",
    [
        # must NOT match: a TCP refusal, a connection closed, free space reported
        "Connection refused",
        "access log rotated; connection refused by peer",
        "disk space: 80% used",
    ],
)
def test_refusals_and_space_do_not_over_match(text: str) -> None:
    found = words_code(text)
    assert found is None or found[0] not in {"auth_failed", "quota_exhausted"}, found


def test_insufficient_storage_status_is_quota() -> None:
    exc = _http("davlike.exceptions", "InsufficientStorage", 507, None, "Insufficient Storage")
    assert _code(exc) == "quota_exhausted"
    # must NOT match: another 5xx stays a server failure
    assert _code(_http("davlike.exceptions", "ServerError", 500, None, "oops")) == "network_error"


def test_a_429_over_a_busy_server_word_is_throttling() -> None:
    body = {"message": "Service tier capacity exceeded.", "type": "capacity_exceeded"}
    found = _found(_http("llmlike.errors", "SDKError", 429, body))
    assert found is not None and found.code == "rate_limited", found
    # must NOT match: the same words under a 503 stay a busy server
    found = _found(_http("llmlike.errors", "SDKError", 503, body))
    assert found is not None and found.code == "network_error", found


def test_a_delay_in_a_context_the_wrapper_suppressed_is_still_the_servers() -> None:
    inner = _http("httplike", "HTTPStatusError", 429, None, "429 Too Many Requests")
    inner.headers = {"Retry-After": "4"}
    outer = _klass("llmclient", "ResponseError")("too many requests")
    outer.status_code = 429
    outer.__context__ = inner
    outer.__suppress_context__ = True  # raise ... from None
    found = _found(outer)
    assert found is not None and (found.code, found.retry_after) == ("rate_limited", 4.0)
    # must NOT match: a suppressed context's delay never turns another code into a throttle
    down = _klass("llmclient", "ResponseError")("server error")
    down.status_code = 502
    down.__context__ = inner
    down.__suppress_context__ = True
    found = _found(down)
    assert found is not None and found.code == "network_error", found


def test_a_sentence_in_a_code_field_is_read_as_text() -> None:
    body = {
        "error": {
            "type": "version_conflict_engine_exception",
            "reason": "[1]: version conflict, document already exists (current version [1])",
        },
        "status": 409,
    }
    exc = _klass("searchlike.exceptions", "ConflictError")("version_conflict_engine_exception")
    exc.status_code = 409
    exc.body = body
    assert _code(exc) == "already_exists"
    # must NOT match: a version conflict whose text says nothing of existence
    body["error"]["reason"] = "[1]: version conflict, required seqNo [3], primary term [1]"
    assert _code(exc) == "internal_error"


def test_a_decoded_body_passed_as_an_argument_is_read() -> None:
    body = {"error": {"type": "x_exception", "reason": "document already exists"}, "status": 409}
    exc = _klass("searchlike.exceptions", "TransportError")(409, "x_exception", body)
    assert _code(exc) == "already_exists"
    # must NOT match: a dict argument holding no error fields says nothing
    assert _code(_klass("searchlike.exceptions", "TransportError")({"hits": 3})) == (
        "internal_error"
    )


def test_a_429_overrules_a_free_text_condition_but_not_a_code_word() -> None:
    exc = _http("searchlike", "ApiError", 429, {"error": {"reason": "Data too large, [1024mb]"}})
    assert _code(exc) == "rate_limited"
    # must NOT match: the same text under a 413 or a 400 is a request that never passes;
    # a code word that says what (a quota) keeps its code under a 429
    for status in (413, 400):
        exc = _http("searchlike", "ApiError", status, {"error": {"reason": "Data too large"}})
        assert _code(exc) == "internal_error", status
    exc = _http("llmlike", "ApiError", 429, {"error": {"code": "insufficient_quota"}})
    assert _code(exc) == "quota_exhausted"


_S3LIKE = _library(
    "s3like.api",
    """
class ServerError(Exception):
    def __init__(self, message, status_code):
        super().__init__(message)
        self._status_code = status_code

    @property
    def status_code(self):
        return self._status_code

ServerError.__module__ = "s3like.error"

def request(response):
    raise ServerError(f"server failed with HTTP status code {response.status_code}",
                      response.status_code)
""",
)


def test_a_delay_dropped_by_a_library_that_kept_the_status_is_read_from_its_frame() -> None:
    with pytest.raises(Exception) as caught:
        _S3LIKE.request(_Response(503, {"Retry-After": "2"}))
    found = _found(caught.value)
    assert found is not None and (found.code, found.retry_after) == ("rate_limited", 2.0)
    # must NOT match: no delay stated, the 503 stays a server failure
    with pytest.raises(Exception) as caught:
        _S3LIKE.request(_Response(503, {}))
    assert _code(caught.value) == "network_error"


def test_a_frames_response_of_another_status_is_not_the_exceptions() -> None:
    retry = _library(
        "s3like.retry",
        "from s3like.api import ServerError\n"
        "def go(previous):\n"
        "    raise ServerError('server failed with HTTP status code 503', 503)\n",
    )
    # must NOT match: the 429's delay in a frame of the package is another answer's
    with pytest.raises(Exception) as caught:
        retry.go(_Response(429, {"Retry-After": "9"}))
    found = _found(caught.value)
    assert found is not None and (found.code, found.retry_after) == ("network_error", None)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("API_KEY_INVALID", "auth_failed"),
        ("API key not valid. Please pass a valid API key.", "auth_failed"),
        ("Not allowed to send: you have run out of credits.", "quota_exhausted"),
        ("account is out of credit", "quota_exhausted"),
    ],
)
def test_credentials_and_credit_said_in_other_word_orders(text: str, code: str) -> None:
    found = words_code(text)
    assert found is not None and found[0] == code, found


@pytest.mark.parametrize(
    "text",
    [
        # must NOT match: a valid key, credits left, a credit card field
        "the API key is valid until tomorrow",
        "3 credits remain",
        "credit card number",
    ],
)
def test_credentials_and_credit_do_not_over_match(text: str) -> None:
    assert words_code(text) is None, text


def test_a_draining_server_says_how() -> None:
    found = name_proposal(("DrainingError", "BeanstalkdError"))
    assert found is not None and (found.code, found.weak) == ("network_error", True)
    # must NOT match: a word that merely begins like it
    assert name_proposal(("DrainageError",)) is None


@pytest.mark.parametrize(
    ("stderr", "code"),
    [
        (
            "dropdb: error: database removal failed: ERROR:  must be owner of database app\n",
            "auth_failed",
        ),
        (  # a role's own connection limit: throttled until its connections close
            'createdb: error: connection to server at "127.0.0.1", port 5 failed: FATAL:  '
            'too many connections for role "single"\n',
            "rate_limited",
        ),
        (  # the server's limit for everybody: the server is unavailable
            'createdb: error: connection to server at "127.0.0.1", port 5 failed: FATAL:  '
            "sorry, too many clients already\n",
            "network_error",
        ),
        (
            'createdb: error: connection to server at "127.0.0.1", port 5 failed: server closed '
            "the connection unexpectedly\n\tThis probably means the server terminated\n",
            "network_error",
        ),
    ],
)
def test_a_tool_passing_on_a_drivers_phrase_is_read(stderr: str, code: str) -> None:
    found = classify_tool(["sometool"], 1, stderr.encode())
    assert found is not None and found.code == code, found


def test_a_drivers_phrase_in_a_tool_does_not_override_its_vocabulary_or_guess() -> None:
    # must NOT match: a line of the vocabulary decides before any driver phrase
    found = classify_tool(["sometool"], 1, b"error: access denied\ntoo many connections\n")
    assert found is not None and found.code == "auth_failed"
    # must NOT match: ownership said of something else, a count of connections
    assert read_tool("the file must be owned by root") is None
    assert read_tool("2 connections open") is None


@pytest.mark.parametrize(
    ("stderr", "code"),
    [
        (
            "tool: WARNING: Running as root is discouraged.\n"
            "tool: Authorization failure on app@127.0.0.1\n",
            "auth_failed",
        ),
        ("tool: socket error while fetching from app@127.0.0.1\n", "network_error"),
    ],
)
def test_authorisation_failures_and_socket_errors_in_a_tool(stderr: str, code: str) -> None:
    found = classify_tool(["sometool"], 1, stderr.encode())
    assert found is not None and found.code == code, found


def test_authorisation_and_socket_words_do_not_over_match() -> None:
    # must NOT match: an authorisation that succeeded, a socket named without an error
    assert words_code("authorization succeeded for app") is None
    assert words_code("socket opened on port 995") is None
    # an authorisation word still wins over the socket it was said on
    found = words_code("socket error: authorization failed")
    assert found is not None and found[0] == "auth_failed"


def test_an_error_sentence_in_a_body_kept_as_content_is_read() -> None:
    exc = _klass("vectorlike.exceptions", "UnexpectedResponse")()
    exc.status_code = 409
    exc.headers = {}
    exc.content = b'{"status": {"error": "Wrong input: Collection `docs` already exists!"}}'
    assert _code(exc) == "already_exists"
    # must NOT match: an "ok" status object, a sentence that says nothing
    exc.content = b'{"status": {"error": "Wrong input: vector dimension error"}}'
    assert _code(exc) == "internal_error"
    exc.content = b'{"status": "ok", "result": {"error": "none at all"}}'
    assert _code(exc) == "internal_error"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("ldap_sasl_bind(SIMPLE): Can't contact LDAP server (-1)", "network_error"),
        ("nats: no servers available for connection", "network_error"),
        ("ldap_add: Insufficient access (50)", "auth_failed"),
        ('nats: permissions violation for publish to "forbidden.x"', "auth_failed"),
    ],
)
def test_contact_availability_and_access_words(text: str, code: str) -> None:
    found = words_code(text)
    assert found is not None and found[0] == code, found


@pytest.mark.parametrize(
    "text",
    [
        # must NOT match: a contact named, servers that are available, access granted
        "contact the LDAP administrator",
        "3 servers available for connection",
        "access granted to alice",
    ],
)
def test_contact_availability_and_access_words_do_not_over_match(text: str) -> None:
    assert words_code(text) is None, text


# -- issue 44, safe misses turned into codes by principle -----------------------------------


@pytest.mark.parametrize(
    ("stderr", "code"),
    [
        # RFC 2449/3206 response codes a mail tool passes on at the start of its line
        ("mailtool: [IN-USE] Mailbox is locked by another POP3 session.\n", "network_error"),
        ("mailtool: [LOGIN-DELAY] Minimum time between logins not elapsed.\n", "rate_limited"),
        ("-ERR [AUTH] Invalid login\n", "auth_failed"),
        ("mailtool: [SYS/TEMP] try later\nmailtool: lock busy\n", "network_error"),
    ],
)
def test_a_bracketed_response_code_opening_a_tools_line_is_read(stderr: str, code: str) -> None:
    found = classify_tool(["mailtool"], 9, stderr.encode())
    assert found is not None and found.code == code, found


@pytest.mark.parametrize(
    "stderr",
    [
        # must NOT match: a log tag after a timestamp, a code mid-sentence, lower case,
        # a bracketed word no protocol defines
        "2024-05-01 10:00:00 [AUTH] session started\nstep failed\n",
        "mailtool: see [IN-USE] in the manual; step failed\n",
        "mailtool: [auth] step failed\n",
        "mailtool: [ERROR] step failed\n",
    ],
)
def test_a_bracketed_word_elsewhere_is_no_response_code(stderr: str) -> None:
    assert classify_tool(["mailtool"], 1, stderr.encode()) is None


def _http_out(status: str, body: str, headers: str = "Content-Type: application/json") -> bytes:
    return f"HTTP/1.1 {status}\r\n{headers}\r\n\r\n{body}".encode()


@pytest.mark.parametrize(
    ("stdout", "code"),
    [
        (
            _http_out(
                "400 Bad Request",
                '{"success": false, "errors": [{"code": 81058, '
                '"message": "An identical record already exists."}]}',
            ),
            "already_exists",
        ),
        (
            _http_out(
                "400 Bad Request",
                '{"success": false, "errors": [{"code": 81045, '
                '"message": "Record quota exceeded."}]}',
            ),
            "quota_exhausted",
        ),
        (_http_out("404 Not Found", '{"error": "nope"}'), "not_found"),
        (
            _http_out(
                "524 ",
                "<html><head><title>x | 524: A timeout occurred</title></head>"
                "<body><h1>Error 524</h1></body></html>",
                "Content-Type: text/html",
            ),
            "timeout",
        ),
        (_http_out("503 Service Unavailable", "{}", "Retry-After: 7"), "rate_limited"),
        # a JSON error body alone
        (b'{"errors": [{"message": "record already exists"}]}', "already_exists"),
    ],
)
def test_a_tools_output_that_is_an_http_response_is_read_as_one(stdout: bytes, code: str) -> None:
    found = classify_tool(["webtool", "GET", "u"], 4, b"\nwebtool: warning: HTTP error\n", stdout)
    assert found is not None and found.code == code, found
    if code == "rate_limited":
        assert found.retry_after == 7.0


@pytest.mark.parametrize(
    "stdout",
    [
        # must NOT match: a status line inside a document, a body that is not the reply's
        b"report:\nHTTP/1.1 404 Not Found was returned yesterday\n",
        b'{"items": [{"message": "record already exists"}]}',
        _http_out("200 OK", '{"result": "quota exceeded notice sent"}'),
    ],
)
def test_output_that_is_no_http_error_reply_says_nothing(stdout: bytes) -> None:
    assert classify_tool(["webtool"], 1, b"webtool: step failed\n", stdout) is None


def test_a_tools_line_quoting_an_exception_class_reads_its_name() -> None:
    stderr = (
        b"\nwebtool: LogLevel.ERROR: ConnectionError: ('Remote end went away', "
        b"RemoteDisconnected('Remote end closed')) while doing a GET request\n"
    )
    found = classify_tool(["webtool"], 1, stderr)
    assert found is not None and found.code == "network_error", found
    # must NOT match: a class named without being raised, a name that says nothing
    assert classify_tool(["webtool"], 1, b"see ConnectionError in the docs\n") is None
    assert classify_tool(["webtool"], 1, b"Traceback\nValueError: bad step\n") is None


def test_a_reason_phrase_is_the_status_in_words() -> None:
    exc = _http("objstorelike.error", "StoreError", 403, {"Code": "XVendorBucketQuotaExceeded"})
    exc.response = types.SimpleNamespace(status=403, reason="Forbidden", headers={})
    assert _code(exc) == "quota_exhausted"
    # must NOT match: the reason phrase alone still says what the status says
    exc = _http("objstorelike.error", "StoreError", 403, {"Code": "Forbidden"})
    assert _code(exc) == "auth_failed"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("nats: 'Authorization Violation'", "auth_failed"),
        ("Waiting for ('2xx',) but got 550 [' Not enough privileges.']", "auth_failed"),
        ("('Connection aborted.', Disconnected('Remote end closed'))", "network_error"),
        ("put: /etc/x: Access failed: 550 Not enough privileges. (ro/new.txt)", "auth_failed"),
        ("stream name already in use with a different configuration", "already_exists"),
        ("you already own it", None),
        ("Your previous request succeeded and you already own it.", None),
        ("BucketAlreadyOwnedByYou", "already_exists"),
        ("empty response from server when expecting INFO message", "network_error"),
        ("Waiting for ('257',) but got 550 [' File exists.']", "already_exists"),
        ("mkdir: cannot create directory 'x': File exists", "already_exists"),
        ("broker: no responders available for request", "network_error"),
    ],
)
def test_quoted_sentences_and_new_words(text: str, code: str | None) -> None:
    found = words_code(text, whole=" " not in text)
    assert (found[0] if found else None) == code, found


@pytest.mark.parametrize(
    "text",
    [
        # must NOT match: a quoted name, a quoted single word, an address in use
        "unknown option 'access denied-list'",
        "the value 'access denied' is a literal here",
        "setting 'timeout' is invalid",
        "server returned an empty response body for the schema",
        "profile exists but is incomplete",
        "no responders configured for this subject",
    ],
)
def test_quoted_names_and_near_words_stay_unread(text: str) -> None:
    assert words_code(text) is None, text


def test_an_address_in_use_is_a_local_bind_not_a_resource_that_exists() -> None:
    # a port this host could not bind: no code fits (internal_error), never already_exists;
    # an SSH key or an e-mail "already in use" on an account is a thing that exists
    assert (words_code("bind failed: address already in use") or ("",))[0] == "internal_error"
    assert (words_code("SSH Key is already in use on your account") or ("",))[0] == (
        "already_exists"
    )


def test_a_rendered_message_is_read_when_the_args_say_nothing() -> None:
    class NoServers(_klass("brokerlike.errors", "Error")):  # type: ignore[misc]
        def __str__(self) -> str:
            return "broker: no servers available for connection"

    NoServers.__module__ = "brokerlike.errors"
    assert _code(NoServers()) == "network_error"


def test_a_description_field_is_message_text() -> None:
    exc = _klass("brokerlike.js.errors", "BadRequestError")()
    exc.code, exc.err_code = 400, 10058
    exc.description = "stream name already in use with a different configuration"
    assert _code(exc) == "already_exists"


def test_an_ldap_result_that_asks_for_stronger_auth_and_communication_names() -> None:
    exc = _klass("ldap3.core.exceptions", "LDAPStrongerAuthRequiredResult")(
        "modifications require authentication"
    )
    exc.result = 8
    assert _code(exc) == "auth_failed"
    comm = _klass("dirlike.exceptions", "DirCommunicationError")
    sock = _klass("dirlike.exceptions", "DirSocketOpenError", comm)
    assert _code(sock("invalid server address")) == "network_error"
    # must NOT match: a communication name over a refused credential
    assert _code(sock("invalid credentials")) == "auth_failed"


def test_a_503_says_a_condition_no_code_fits_is_temporary() -> None:
    # a block the server reports under 503 (RFC 9110: a temporary condition): retryable
    exc = _http(
        "searchlike.exceptions",
        "TransportError",
        503,
        {"error": {"type": "cluster_block_exception", "reason": "state not recovered"}},
    )
    assert _code(exc) == "network_error"
    # must NOT match: the same block under 403 or 500, a 503 whose words say what
    for status in (403, 500):
        exc = _http(
            "searchlike.exceptions",
            "TransportError",
            status,
            {"error": {"type": "cluster_block_exception", "reason": "index read-only"}},
        )
        assert _code(exc) == "internal_error", status
    exc = _http("searchlike.exceptions", "TransportError", 503, {"code": "invalid_api_key"})
    assert _code(exc) == "auth_failed"


# -- heldout3: generic protocol numbers lose to specific words; a tool's "how" line to its "what"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("550 made: File exists", "already_exists"),
        ("550 new: Permission denied", "auth_failed"),
        ("550 readme.txt: Operation not permitted", "auth_failed"),
        (
            "530 Sorry, the maximum number of clients (2) for this user are already connected.",
            "rate_limited",
        ),
        # must still match: the generic number alone, or with words that agree
        ("550 nope.txt: No such file or directory", "not_found"),
        ("550 x: not a plain file", "not_found"),
        ("530 Login incorrect.", "auth_failed"),
        ("530 Please login with USER and PASS.", "auth_failed"),
    ],
)
def test_an_ftp_reply_of_several_meanings_is_decided_by_its_words(
    reply: str, expected: str
) -> None:
    import ftplib

    assert _code(ftplib.error_perm(reply)) == expected


@pytest.mark.parametrize(
    ("stderr", "expected"),
    [
        (
            "svn: E170013: Unable to connect to a repository at URL 'svn://h/r'\n"
            "svn: E170001: Authentication error from server: Password incorrect",
            "auth_failed",
        ),
        (
            "svn: E170013: Unable to connect to a repository at URL 'svn://h/r'\n"
            "svn: E210005: No repository found in 'svn://h/norepo'",
            "not_found",
        ),
        (
            "svn: E170013: Unable to connect to a repository at URL 'svn://h/r'\n"
            "svn: E170001: Can't get username or password",
            "auth_failed",
        ),
        # must NOT change: the later line says how too, or says nothing
        (
            "svn: E170013: Unable to connect to a repository at URL 'svn://h/r'\n"
            "svn: E000111: Can't connect to host '127.0.0.1': Connection refused",
            "network_error",
        ),
        (
            "svn: E170013: Unable to connect to a repository at URL 'svn://h/r'\n"
            "svn: E210002: Network connection closed unexpectedly",
            "network_error",
        ),
        ("error: could not connect to server\nretrying in 5 seconds", "network_error"),
        # must NOT change: a line that says what, before a line that says how
        ("fatal: repository not found\nconnection closed by remote host", "not_found"),
    ],
)
def test_a_tools_connection_line_gives_way_to_a_later_line_that_says_what(
    stderr: str, expected: str
) -> None:
    found = read_tool(stderr)
    assert (found.code if found else "internal_error") == expected


# -- heldout3: a quota said in words outranks a refusal's status, code word or class name ----


@pytest.mark.parametrize(
    ("name", "status", "body", "text", "expected"),
    [
        ("UnauthorizedError", 401, None, "Maximum credits exceeded", "quota_exhausted"),
        (
            "RateLimitError",
            429,
            None,
            "You have reached your monthly email sending quota.",
            "quota_exhausted",
        ),
        (
            "RateLimitError",
            429,
            {"error": {"code": "RESOURCE_EXHAUSTED"}},
            "You've reached your write unit limit for the current month (2000000).",
            "quota_exhausted",
        ),
        (
            "ForbiddenError",
            403,
            {"error": {"code": "FORBIDDEN"}},
            "You've reached the max serverless indexes allowed in project Default (5).",
            "quota_exhausted",
        ),
        (
            "Forbidden",
            403,
            {"error": {"errors": [{"reason": "accountDisabled"}]}},
            "The billing account for the owning project is disabled in state closed",
            "quota_exhausted",
        ),
        (
            "ApiError",
            401,
            {"detail": {"status": "quota_exceeded", "message": "over"}},
            "",
            "quota_exhausted",
        ),
        # must NOT match: a throttle that resets soon, a refusal with no quota word
        (
            "RateLimitError",
            429,
            None,
            "Rate limit exceeded: 10 requests per second",
            "rate_limited",
        ),
        (
            "RateLimitError",
            429,
            None,
            "too many requests; the daily digest is unaffected",
            "rate_limited",
        ),
        (
            "Forbidden",
            403,
            {"error": {"errors": [{"reason": "accountDisabled"}]}},
            "The account for the owning project is disabled",
            "auth_failed",
        ),
        ("UnauthorizedError", 401, None, "invalid credentials", "auth_failed"),
        (
            "ForbiddenError",
            403,
            None,
            "You've reached the maximum number of clients",
            "auth_failed",
        ),
    ],
)
def test_a_quota_said_in_words_outranks_a_refusal(
    name: str, status: int, body: Any, text: str, expected: str
) -> None:
    assert _code(_http("someapi.errors", name, status, body, text)) == expected


def test_a_declined_card_is_no_quota_and_a_rule_of_the_input_no_refusal() -> None:
    funds = {"errors": [{"category": "PAYMENT_METHOD_ERROR", "code": "INSUFFICIENT_FUNDS"}]}
    assert _code(_http("someapi.errors", "ApiError", 402, funds)) == "internal_error"
    # must still match: a 402 alone is the account's payment or quota
    assert _code(_http("someapi.errors", "ApiError", 402, {})) == "quota_exhausted"
    name = "Bad request:\nInvalid repo name\n'--' and '..' are forbidden in a name"
    assert _code(_http("someapi.errors", "BadRequestError", 400, None, name)) == "internal_error"
    # must still match: forbidden as a code word or a class name
    assert _code(_http("someapi.errors", "ApiError", 400, {"error": "forbidden"})) == "auth_failed"
    assert _code(_klass("someapi.errors", "ForbiddenError")("no")) == "auth_failed"


def test_an_ietf_ratelimit_field_states_the_reset() -> None:
    exc = _http("someapi.errors", "HTTPError", 429, None, "429 Too Many Requests")
    exc.headers = {"RateLimit": '"api";r=0;t=120', "RateLimit-Policy": '"w";q=1000;w=300'}
    found = _found(exc)
    assert found is not None and (found.code, found.retry_after) == ("rate_limited", 120.0)
    # must NOT be read off a reply that was not throttled
    ok = _http("someapi.errors", "HTTPError", 404, None, "not found")
    ok.headers = {"RateLimit": '"api";r=5;t=120'}
    found = _found(ok)
    assert found is not None and (found.code, found.retry_after) == ("not_found", None)


# -- heldout3: PostgreSQL's ErrorResponse fields, kept by their one-letter codes -----------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"S": "FATAL", "V": "FATAL", "C": "28P01", "M": "password authentication failed"},
            "auth_failed",
        ),
        (
            {"S": "ERROR", "C": "23505", "M": "duplicate key value violates unique constraint"},
            "already_exists",
        ),
        (
            {"S": "ERROR", "C": "57014", "M": "canceling statement due to statement timeout"},
            "timeout",
        ),
        ({"S": "ERROR", "C": "42P01", "M": 'relation "nope" does not exist'}, "not_found"),
        # must NOT match: one-letter keys that are no SQLSTATE, a "C" among longer keys
        ({"S": "ERROR", "C": "hello", "M": "something odd"}, "internal_error"),
        ({"C": "28P01", "message": "a grid cell"}, "internal_error"),
    ],
)
def test_an_error_responses_one_letter_fields_are_read(
    fields: dict[str, str], expected: str
) -> None:
    exc = _klass("pg8000.exceptions", "DatabaseError")(fields)
    assert _code(exc) == expected


@pytest.mark.parametrize(
    ("stderr", "code"),
    [
        ("Runtime error near line 1: UNIQUE constraint failed: t.id (19)", "already_exists"),
        ("Parse error near line 2: database is locked (5)", "timeout"),
        (
            'psql: error: connection to server at "h", port 1 failed: FATAL:  role "s" is not '
            "permitted to log in",
            "auth_failed",
        ),
        ("msmtp: the server sent an empty reply\nmsmtp: could not send mail", "network_error"),
        (
            "msmtp: recipient address n@example.org not accepted by the server\nmsmtp: server "
            "message: 550 5.1.1 <n@example.org>: Recipient address rejected: User unknown\n"
            "msmtp: could not send mail",
            "not_found",
        ),
        # must NOT match: a lock named, a constraint named, a reply number in prose
        ("warning: the database is locked down to readers by policy", "internal_error"),
        ("CHECK constraint failed: price > 0", "internal_error"),
        ("tool: step 550 5.1.1 of the plan failed", "internal_error"),
    ],
)
def test_tools_lines_after_a_prefix(stderr: str, code: str) -> None:
    found = read_tool(stderr)
    assert (found.code if found else "internal_error") == code, found


def test_a_rails_style_taken_is_exists() -> None:
    text = "400: {'name': ['has already been taken'], 'path': ['has already been taken']}"
    assert _code(_http("somegit.exceptions", "CreateError", 400, None, text)) == "already_exists"
    # must NOT match: a seat or a turn taken is no duplicate
    assert words_code("the lock was taken by another worker") is None


class _Union:
    """A tagged union as RPC stubs generate them (a tag, the value it holds)."""

    __slots__ = ("_tag", "_value")

    def __init__(self, tag: str, value: object = None) -> None:
        self._tag, self._value = tag, value


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (_Union("path", _Union("not_found")), "not_found"),
        (_Union("path", _Union("insufficient_space")), "quota_exhausted"),
        (_Union("path", _Union("no_write_permission")), "auth_failed"),
        # must NOT match: a tag that says nothing, a conflict alone
        (_Union("path", _Union("malformed_path", "x")), "internal_error"),
        (_Union("path", _Union("conflict", _Union("folder"))), "internal_error"),
    ],
)
def test_a_tagged_unions_tags_are_code_words(error: object, code: str) -> None:
    exc = _klass("somesdk.exceptions", "ApiError")(None, error)
    exc.error = error
    assert _code(exc) == code


def test_a_class_named_for_what_exists_is_already_exists() -> None:
    assert _code(_klass("zk.exceptions", "NodeExistsError")()) == "already_exists"
    assert _code(_klass("store.errors", "EntryExistsException")()) == "already_exists"
    # must NOT match: what does not exist, a check named for existence
    assert _code(_klass("store.errors", "NotExistsError")()) != "already_exists"
    assert _code(_klass("store.errors", "DoesNotExistError")()) == "not_found"
    assert _code(_klass("store.errors", "ExistsCheckError")()) == "internal_error"


@pytest.mark.parametrize(
    ("stderr", "code"),
    [
        ("ERROR: S3 error: 403 (Forbidden)", "auth_failed"),
        ("error: the server answered 404 Not Found", "not_found"),
        ("upload failed: 429 Too Many Requests", "rate_limited"),
        # must NOT match: a number with another reason, a count, a port
        ("ERROR: S3 error: 400 (TooManyBuckets): more buckets than allowed", "internal_error"),
        ("copied 403 files", "internal_error"),
        ("listening on 404 (default)", "internal_error"),
    ],
)
def test_a_status_with_its_own_reason_phrase_in_a_tools_line(stderr: str, code: str) -> None:
    found = read_tool(stderr)
    assert (found.code if found else "internal_error") == code, found


def test_the_prefiltered_vocabulary_finds_what_a_word_by_word_search_finds() -> None:
    """The first phrase found (in WORDS order) is the same as looking for every phrase at
    every word position, on texts built from the vocabulary's own words and near-misses."""
    import random

    from control_plane._kernel import evidence

    def brute(text: str, whole: bool) -> tuple[str, str, str] | None:
        words = tuple(
            evidence.singular(w) for w in evidence.tokens(text) if w not in evidence._FILLER
        )
        head = words[:-1] if words[-1:] and words[-1] in evidence._SUFFIXES else words
        for code, message, phrase in evidence.WORDS:
            if phrase in evidence._CODE_ONLY and (not whole or head[-1:] != phrase):
                continue

            def plain(form: tuple[str, ...]) -> tuple[str, ...]:
                return tuple(w if w.endswith("*") else evidence.singular(w) for w in form)

            forms = (
                plain(tuple(w.replace("'", "") for w in phrase)),
                plain(tuple(t for w in phrase for t in evidence.tokens(w))),
            )
            if words and any(evidence._found(words, form) for form in forms):
                return code, message, " ".join(phrase)
        return None

    rng = random.Random(44)
    vocab = [w for _, _, phrase in evidence.WORDS for w in phrase] + ["the", "rated", "x"]
    for _ in range(400):
        n = rng.randint(1, 10)
        text = " ".join(
            rng.choice(vocab).replace("*", rng.choice(["", "ed", "s"])) for _ in range(n)
        )
        for whole in (False, True):
            assert evidence._words_row.__wrapped__(text, whole) == brute(text, whole), text


def test_a_decoded_body_kept_as_text_is_read() -> None:
    """An SDK that keeps the error body only as ``text`` (an empty message): the body's
    words say what failed, not the bare status the API answers every error with."""
    exc = _klass("mailerlike.api_client", "ApiClientError")()
    exc.status_code = 500
    exc.text = (
        '{"status": "error", "code": -1, "name": "Invalid_Key", "message": "Invalid API key"}'
    )
    assert _code(exc) == "auth_failed"
    # must NOT match: a text that is no JSON body is no data; the status stands
    plain = _klass("mailerlike.api_client", "ApiClientError")()
    plain.status_code, plain.text = 500, "Invalid API key"
    assert _code(plain) == "network_error"


def test_a_class_named_for_a_client_error_reason_is_no_network_failure() -> None:
    """A class named for a 4xx reason phrase no code fits (``BadRequest``) says the server
    answered: its base's name saying how a call may fail (``NetworkError``) reads nothing."""
    base = _klass("botlike.error", "NetworkError")
    bad = _klass("botlike.error", "BadRequest", base)
    assert _found(bad("Message is too long")) is None
    # must NOT match: the base alone, or a reason phrase a code fits, keep their reading
    assert _code(base("connection reset")) == "network_error"
    assert _code(_klass("botlike.error", "NotFound", base)("chat")) == "not_found"
    assert _code(_klass("botlike.error", "Unauthorized", base)("token")) == "auth_failed"


def test_a_quota_for_this_billing_period_outranks_a_refusal_named_by_the_class() -> None:
    """A quota bounded by a billing period is the reason the server gives: it outranks the
    class's refusal (``...Forbidden``) as a quota code word does."""
    forbidden = _klass("channelslike.errors", "ChannelsForbidden")
    exc = forbidden("Message quota exceeded for this billing period")
    exc.status_code = 403
    assert _code(exc) == "quota_exhausted"
    # must NOT match: a refusal in words, or a limit of this request, stays a refusal
    assert _code(forbidden("Invalid signature")) == "auth_failed"
    assert _code(forbidden("size limit exceeded for this request")) == "auth_failed"


@pytest.mark.parametrize(
    ("said", "code"),
    [
        ("storage_limit_exceeded", "quota_exhausted"),
        ("Account storage limit reached", "quota_exhausted"),
        # must NOT match: a storage limit that is only a setting, or a size refused
        ("storage limit set to 10 GB", None),
        ("file exceeds the maximum upload size", None),
    ],
)
def test_a_storage_limit_reached_is_a_quota(said: str, code: str | None) -> None:
    # a code word (storage_limit_exceeded) is read as a code; in free text a lower
    # snake_case word is an identifier a program wrote, not words
    assert (words_code(said, whole="_" in said) or (None,))[0] == code


@pytest.mark.parametrize(
    ("stderr", "code"),
    [
        (
            "dial tcp: lookup x.invalid on 10.0.0.53:53: no such host\n",
            "network_error",
        ),
        # must NOT match: a missing file, key or bucket is still not found
        ("error: no such file in bucket: daily/x.tar\n", "not_found"),
        ("ERR no such key\n", "not_found"),
    ],
)
def test_no_such_host_is_a_failed_lookup_not_a_missing_resource(stderr: str, code: str) -> None:
    assert (words_code(stderr) or (None,))[0] == code
