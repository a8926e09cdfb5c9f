"""Classifying a tool's failure: ordered ``(regex, code)`` stderr rules and exit-status tables.

The first matching rule wins and its message is fixed text, never the stderr. Tables are
picked by the tool ``argv`` runs and by the lines its stderr holds (:func:`classify_tool`).
Running tools is ``runtime/tool_process.py``'s.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from control_plane.core.classify import Classification
from control_plane.core.errors import PackError
from control_plane.core.evidence import read_lines
from control_plane.core.redact import scrub_tail

__all__ = [
    "CONTENT_TABLES",
    "CURL",
    "CURL_EXITS",
    "CURL_RULES",
    "FFMPEG",
    "FFMPEG_RULES",
    "GIT",
    "GIT_RULES",
    "SSH",
    "SSH_RULES",
    "TLS_RULES",
    "TOOL_TABLES",
    "WGET",
    "WGET_EXITS",
    "WGET_RULES",
    "ExitRule",
    "StderrClassifier",
    "StderrRule",
    "ToolFailed",
    "ToolRun",
    "ToolTable",
    "classify_tool",
    "http_status_rules",
    "raise_for_failure",
    "resolve_binary",
    "rule",
    "stderr_text",
    "table_for",
    "tables_for",
    "tool_name",
]

#: How much of a tool's stderr is kept (the tail, where the ``fatal:`` line is).
MAX_STDERR = 64 * 1024


@dataclass(frozen=True, slots=True)
class StderrRule:
    """One row of a table: if ``pattern`` occurs in stderr, the failure is ``code``.

    ``message`` is what the caller reads; it is fixed text, so nothing from the stderr
    (URLs, user names, tokens, paths) can leak through it. ``name`` is a stable id for
    tests, logs and docs.
    """

    name: str
    code: str
    pattern: re.Pattern[str]
    message: str
    retry_after: float | None = None

    def error(self) -> PackError:
        """The typed error this rule stands for."""
        retry_after = self.retry_after
        if self.code == "rate_limited" and retry_after is None:
            retry_after = 1.0
        return PackError(self.code, self.message, retry_after=retry_after)


def rule(
    name: str,
    code: str,
    regex: str,
    message: str,
    *,
    retry_after: float | None = None,
    flags: int = re.IGNORECASE | re.MULTILINE,
) -> StderrRule:
    """A :class:`StderrRule` from a regex string (case-insensitive, multi-line)."""
    return StderrRule(name, code, re.compile(regex, flags), message, retry_after)


def stderr_text(stderr: str | bytes) -> str:
    """The tail of ``stderr`` the tables read (:data:`MAX_STDERR`), as text with ``\\n`` lines."""
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "replace")
    return stderr[-MAX_STDERR:].replace("\r\n", "\n").replace("\r", "\n")


class StderrClassifier:
    """An ordered table of :class:`StderrRule`; the first match wins."""

    __slots__ = ("name", "rules")

    def __init__(self, rules: Iterable[StderrRule], *, name: str = "stderr") -> None:
        self.rules: tuple[StderrRule, ...] = tuple(rules)
        self.name = name
        seen: set[str] = set()
        for item in self.rules:
            if item.name in seen:
                raise ValueError(f"duplicate stderr rule name {item.name!r}")
            seen.add(item.name)

    def match(self, stderr: str | bytes) -> StderrRule | None:
        """The first rule whose pattern occurs in ``stderr``, or ``None``."""
        text = stderr_text(stderr)
        for item in self.rules:
            if item.pattern.search(text):
                return item
        return None

    def error(self, stderr: str | bytes) -> PackError | None:
        """A :class:`PackError` with the matching rule's code and fixed message."""
        found = self.match(stderr)
        return found.error() if found is not None else None

    def classify(self, stderr: str | bytes) -> Classification | None:
        """A :class:`Classification` (for ``classify_exception`` hooks), or ``None``."""
        found = self.match(stderr)
        if found is None:
            return None
        error = found.error()
        return Classification(
            code=error.code,
            message=error.message,
            retry_after=error.retry_after,
            rule=f"stderr:{self.name}:{found.name}",
        )

    def extend(
        self, rules: Iterable[StderrRule], *, first: bool = True, name: str | None = None
    ) -> StderrClassifier:
        """A new classifier with ``rules`` tried before (or after) this one's."""
        extra = tuple(rules)
        ordered = (*extra, *self.rules) if first else (*self.rules, *extra)
        return StderrClassifier(ordered, name=name or self.name)

    def __len__(self) -> int:
        return len(self.rules)


# -- the tables ---------------------------------------------------------------------

_HOST_UNRESOLVED = "the host name could not be resolved"
_REFUSED = "the connection was refused (nothing listens on that host and port)"
_INTERRUPTED = "the connection was closed or reset before the remote finished"
_UNREACHABLE = "the host or network is unreachable"
_SSH_AUTH = "SSH authentication was rejected: no accepted key or password"
_SSH_HOST_KEY = "the SSH host key is unknown or changed, so the server was not trusted"

_SERVER_CERT = (
    "the server's TLS certificate failed verification (untrusted, expired or for another "
    "host); retrying will not change it"
)
_CLIENT_CERT = "the server rejected the TLS client certificate (missing, or not trusted by it)"
_LOCAL_TLS = "the local TLS configuration is invalid (certificate, key or CA file)"
_TLS_MISMATCH = "TLS could not be negotiated with the server (protocol or version mismatch)"

#: OpenSSL/GnuTLS messages as curl, wget and git print them, in order.
TLS_RULES: tuple[StderrRule, ...] = (
    rule(
        "tls_client_cert_rejected",
        "auth_failed",
        r"alert certificate required|alert unknown ca|alert bad certificate|"
        r"alert certificate unknown|alert access denied|alert certificate (expired|revoked)",
        _CLIENT_CERT,
    ),
    rule(
        "tls_server_cert",
        "auth_failed",
        r"SSL certificate problem|server certificate verification failed|"
        r"certificate verify failed|cannot verify .*'s certificate|"
        r"certificate's owner does not match|no alternative certificate subject name matches|"
        r"SSL: certificate subject name .* does not match|self[- ]signed certificate|"
        r"certificate of '[^']*' is not trusted|certificate of '[^']*' has expired|"
        r"doesn't have a known issuer",
        _SERVER_CERT,
    ),
    rule(
        "tls_local_config",
        "internal_error",
        r"unable to set private key file|could not load PEM client certificate|"
        r"unable to use client certificate|error setting certificate|"
        r"key values mismatch|error setting certificate verify locations|"
        r"no certificate or crl found|ERROR: cannot load|Could not load .*certificate",
        _LOCAL_TLS,
    ),
    rule(
        "tls_version_mismatch",
        "internal_error",
        r"wrong version number|unsupported protocol|no protocols available|"
        r"alert protocol version|packet length too long",
        _TLS_MISMATCH,
    ),
    rule(
        "tls_connection_closed",
        "network_error",
        r"SSL_ERROR_SYSCALL|unexpected eof while reading",
        "the connection closed during the TLS exchange",
    ),
)

#: OpenSSH client messages (``ssh``, and git's ssh transport).
SSH_RULES: tuple[StderrRule, ...] = (
    rule(
        "ssh_banner_timeout",
        "timeout",
        r"Connection timed out during banner exchange",
        "the SSH server accepted the connection but did not send its banner in time",
    ),
    rule("ssh_permission_denied", "auth_failed", r"Permission denied \([a-z,\-]+\)", _SSH_AUTH),
    rule(
        "ssh_too_many_auth_failures",
        "auth_failed",
        r"Too many authentication failures",
        _SSH_AUTH,
    ),
    rule("ssh_host_key", "auth_failed", r"Host key verification failed", _SSH_HOST_KEY),
    rule("ssh_resolve", "network_error", r"Could not resolve hostname", _HOST_UNRESOLVED),
    rule(
        "ssh_connect_timeout",
        "timeout",
        r"^ssh: connect to host .* (Connection|Operation) timed out",
        "the SSH connection timed out",
    ),
    rule("ssh_refused", "network_error", r"^ssh: connect to host .*Connection refused", _REFUSED),
    rule(
        "ssh_unreachable",
        "network_error",
        r"^ssh: connect to host .*(No route to host|Network is unreachable)",
        _UNREACHABLE,
    ),
    rule(
        "ssh_closed",
        "network_error",
        r"kex_exchange_identification|Connection (closed|reset) by .*port|"
        r"ssh_exchange_identification",
        _INTERRUPTED,
    ),
)

#: git CLI messages (local, ``file://``, ``git://``, smart HTTP via curl, ssh), in order.
GIT_RULES: tuple[StderrRule, ...] = (
    *SSH_RULES,
    *TLS_RULES,
    # Authentication: specific HTTP statuses before the generic "unable to access".
    rule(
        "git_auth_failed",
        "auth_failed",
        r"Authentication failed for|HTTP Basic: Access denied|Invalid username or password",
        "the server rejected the credentials",
    ),
    rule(
        "git_no_credentials",
        "auth_failed",
        r"could not read (Username|Password)|terminal prompts disabled",
        "the server asked for credentials and none were given (prompts are disabled)",
    ),
    rule(
        "git_http_401_403",
        "auth_failed",
        r"The requested URL returned error: (401|403|407)\b",
        "the server refused access (HTTP 401/403)",
    ),
    rule(
        "git_write_denied",
        "auth_failed",
        r"Permission to \S+ denied to|Write access to repository not granted",
        "the credentials do not grant access to this repository",
    ),
    # Missing repositories and refs.
    rule(
        "git_repo_not_found",
        "not_found",
        r"Repository not found|repository '[^']*' not found|"
        r"does not appear to be a git repository|no such repository|"
        r"access denied or repository not exported|not a git repository",
        "the repository does not exist (or is not exported to this client)",
    ),
    rule(
        "git_ref_not_found",
        "not_found",
        r"Remote branch .* not found in upstream|Could not find remote branch|"
        r"couldn't find remote ref|unknown revision|invalid refspec|"
        r"Needed a single revision|invalid reference: |is not a commit and a branch|"
        r"not something we can merge",
        "the branch, tag or ref does not exist in the repository",
    ),
    rule(
        "git_pathspec_not_found",
        "not_found",
        r"pathspec '[^']*' did not match any file",
        "the branch, tag, commit or path named does not exist in the repository",
    ),
    rule(
        "git_http_404_410",
        "not_found",
        r"The requested URL returned error: (404|410)\b",
        "the server answered HTTP 404/410 for the repository URL",
    ),
    # Throttling and timeouts.
    rule(
        "git_http_429",
        "rate_limited",
        r"The requested URL returned error: 429\b",
        "the server is rate limiting requests (HTTP 429)",
    ),
    rule(
        "git_http_408_504",
        "timeout",
        r"The requested URL returned error: (408|504)\b",
        "the server or a gateway timed out (HTTP 408/504)",
    ),
    rule(
        "git_timed_out",
        "timeout",
        r"(Connection|Operation|Resolving) timed out|Operation too slow|timed out after",
        "the connection to the remote timed out",
    ),
    # Connectivity.
    rule(
        "git_resolve",
        "network_error",
        r"Could not resolve (host|proxy)|unable to look up|Name or service not known|"
        r"Temporary failure in name resolution|nodename nor servname",
        _HOST_UNRESOLVED,
    ),
    rule(
        "git_refused",
        "network_error",
        r"Connection refused|Couldn't connect to server|Failed to connect to",
        _REFUSED,
    ),
    rule(
        "git_unreachable",
        "network_error",
        r"No route to host|Network is unreachable|Host is unreachable",
        _UNREACHABLE,
    ),
    rule(
        "git_interrupted",
        "network_error",
        r"Connection reset|Recv failure|Send failure|remote end hung up unexpectedly|"
        r"early EOF|RPC failed|unexpected disconnect|read error",
        _INTERRUPTED,
    ),
    rule(
        "git_tls",
        "internal_error",
        r"gnutls_handshake\(\) failed|SSL_connect|SSL_ERROR|TLS connect error",
        "the TLS handshake failed",
    ),
    rule(
        "git_http_501_505",
        "internal_error",
        r"The requested URL returned error: (501|505)\b",
        "the server does not support the request (HTTP 501/505); retrying will not help",
    ),
    rule(
        "git_http_5xx",
        "network_error",
        r"The requested URL returned error: 5\d\d\b",
        "the server answered with an HTTP 5xx error",
    ),
    rule(
        "git_protocol",
        "network_error",
        r"protocol error|bad line length|bad packet|invalid server response|"
        r"not valid: is this a git repository",
        "the remote did not answer with the git protocol",
    ),
    rule(
        "git_unable_to_access",
        "network_error",
        r"unable to access '|unable to connect to",
        "the remote could not be reached",
    ),
    rule(
        "git_could_not_read_remote",
        "network_error",
        r"Could not read from remote repository",
        "the remote repository could not be read",
    ),
)


def http_status_rules(prefix: str, regex: str) -> tuple[StderrRule, ...]:
    """Rules for an HTTP status a tool prints: ``regex`` has one ``{status}`` slot.

    The statuses and codes are those of :data:`control_plane.core.classify.HTTP_STATUS_CODES`.
    """

    def status(name: str, code: str, statuses: str, message: str) -> StderrRule:
        return rule(f"{prefix}_http_{name}", code, regex.format(status=f"({statuses})"), message)

    return (
        status("401_403", "auth_failed", "401|403|407", "the server refused access (HTTP 401/403)"),
        status("404_410", "not_found", "404|410", "the server answered HTTP 404/410"),
        status("429", "rate_limited", "429", "the server is rate limiting requests (HTTP 429)"),
        status("408_504", "timeout", "408|504", "the server or a gateway timed out (HTTP 408/504)"),
        status(
            "501_505",
            "internal_error",
            "501|505",
            "the server does not support the request (HTTP 501/505); retrying will not help",
        ),
        status("5xx", "network_error", r"5\d\d", "the server answered with an HTTP 5xx error"),
    )


#: curl messages (with ``-sS``), tried before its exit status.
CURL_RULES: tuple[StderrRule, ...] = (
    *TLS_RULES,
    *http_status_rules("curl", r"The requested URL returned error: {status}\b"),
)

#: wget messages, tried before its exit status (run it with ``--tries=1``).
WGET_RULES: tuple[StderrRule, ...] = (
    *TLS_RULES,
    *http_status_rules("wget", r"(?:ERROR |awaiting response\.\.\. ){status}\b"),
    rule(
        "wget_tls_session_invalid",
        "internal_error",
        r"session has been invalidated",
        "the server ended the TLS session (wget does not say why)",
    ),
    rule(
        "wget_resolve",
        "network_error",
        r"unable to resolve host address|Name or service not known",
        _HOST_UNRESOLVED,
    ),
    rule(
        "wget_timeout",
        "timeout",
        r"Connection timed out|Read error .*timed out|Operation timed out",
        "the connection or the transfer timed out",
    ),
    rule("wget_refused", "network_error", r"failed: Connection refused", _REFUSED),
    rule(
        "wget_interrupted",
        "network_error",
        r"Connection reset by peer|Connection closed at byte|No data received|"
        r"Read error at byte|Unable to establish SSL connection",
        _INTERRUPTED,
    ),
    rule(
        "wget_unreachable",
        "network_error",
        r"No route to host|Network is unreachable",
        _UNREACHABLE,
    ),
    rule(
        "wget_auth",
        "auth_failed",
        r"Username/Password Authentication Failed|Authorization failed",
        "the server rejected the credentials",
    ),
)

#: ffmpeg / ffprobe messages for network inputs and missing files. Media that ffmpeg
#: cannot parse is a pack's own code (e.g. ``unreadable_media``), so it is not here.
FFMPEG_RULES: tuple[StderrRule, ...] = (
    *TLS_RULES,
    rule(
        "ffmpeg_http_401_403",
        "auth_failed",
        r"Server returned (401 Unauthorized|403 Forbidden)",
        "the server refused access (HTTP 401/403)",
    ),
    rule(
        "ffmpeg_http_404",
        "not_found",
        r"Server returned 404 Not Found",
        "the server answered HTTP 404",
    ),
    rule(
        "ffmpeg_http_5xx",
        "network_error",
        r"Server returned 5XX Server Error",
        "the server answered with an HTTP 5xx error",
    ),
    rule(
        "ffmpeg_resolve",
        "network_error",
        r"Failed to resolve hostname|Name or service not known",
        _HOST_UNRESOLVED,
    ),
    rule(
        "ffmpeg_timeout",
        "timeout",
        r"Connection timed out|Operation timed out",
        "the connection or the transfer timed out",
    ),
    rule("ffmpeg_refused", "network_error", r"Connection refused", _REFUSED),
    rule(
        "ffmpeg_reset",
        "network_error",
        r"Connection reset by peer|Broken pipe|End of file.*tcp",
        _INTERRUPTED,
    ),
    rule(
        "ffmpeg_no_such_file",
        "not_found",
        r"No such file or directory",
        "the input file does not exist",
    ),
)


#: Docker CLI messages (the daemon's answers are relayed as "Error response from daemon").
DOCKER_RULES: tuple[StderrRule, ...] = (
    *TLS_RULES,
    rule(
        "docker_no_daemon",
        "network_error",
        r"Cannot connect to the Docker daemon|error during connect",
        "the Docker daemon is not reachable (not running, or the wrong DOCKER_HOST)",
    ),
    rule(
        "docker_denied",
        "auth_failed",
        r"pull access denied|unauthorized: |denied: requested access|"
        r"permission denied while trying to connect to the Docker daemon",
        "the registry or the Docker daemon refused access",
    ),
    rule(
        "docker_rate",
        "rate_limited",
        r"toomanyrequests|You have reached your pull rate limit",
        "the registry is rate limiting pulls",
    ),
    rule(
        "docker_not_found",
        "not_found",
        r"No such (image|container|volume|network|object)|manifest unknown|"
        r"manifest for \S+ not found|repository does not exist",
        "the image, container or object does not exist",
    ),
)

#: kubectl messages (the API server's Status reason in parentheses).
KUBECTL_RULES: tuple[StderrRule, ...] = (
    *TLS_RULES,
    rule(
        "kubectl_login",
        "auth_failed",
        r"You must be logged in to the server|Error from server \((Unauthorized|Forbidden)\)",
        "the Kubernetes API server refused the credentials or the request",
    ),
    rule(
        "kubectl_not_found",
        "not_found",
        r"Error from server \(NotFound\)",
        "the Kubernetes object or resource does not exist",
    ),
    rule(
        "kubectl_rate",
        "rate_limited",
        r"Error from server \(TooManyRequests\)",
        "the Kubernetes API server is throttling requests",
    ),
    rule(
        "kubectl_timeout",
        "timeout",
        r"Error from server \((Timeout|ServerTimeout)\)|i/o timeout|context deadline exceeded",
        "the Kubernetes API server did not answer in time",
    ),
    rule(
        "kubectl_refused",
        "network_error",
        r"The connection to the server .* was refused|"
        r"Error from server \((InternalError|ServiceUnavailable)\)|no such host",
        "the Kubernetes API server is not reachable or failed",
    ),
)

#: psql (libpq) messages.
PSQL_RULES: tuple[StderrRule, ...] = (
    *TLS_RULES,
    rule(
        "psql_auth",
        "auth_failed",
        r"password authentication failed|no pg_hba\.conf entry|"
        r'role "[^"\n]*" does not exist|fe_sendauth: no password supplied|'
        r"permission denied for",
        "PostgreSQL refused the credentials or the privilege",
    ),
    rule(
        "psql_no_database",
        "not_found",
        r'database "[^"\n]*" does not exist|relation "[^"\n]*" does not exist',
        "the database or table does not exist",
    ),
    rule(
        "psql_busy",
        "network_error",
        r"too many clients already|too many connections|"
        r"the database system is (starting up|shutting down)",
        "the PostgreSQL server is busy, starting or stopping",
    ),
    rule(
        "psql_timeout",
        "timeout",
        r"canceling statement due to statement timeout|timeout expired",
        "the PostgreSQL statement or connection timed out",
    ),
    rule(
        "psql_refused",
        "network_error",
        r"Connection refused|could not translate host name|"
        r"server closed the connection unexpectedly|No such file or directory\s+"
        r"Is the server running",
        "the PostgreSQL server is not reachable",
    ),
)

#: npm messages (``npm error code E401``; older npm prints ``npm ERR!``).
NPM_RULES: tuple[StderrRule, ...] = (
    *TLS_RULES,
    *http_status_rules("npm", r"^npm (?:error|ERR!) (?:code E)?{status}\b"),
    rule(
        "npm_network",
        "network_error",
        r"^npm (?:error|ERR!) (?:code|errno) (ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|"
        r"EHOSTUNREACH|ENETUNREACH)",
        "the npm registry is not reachable",
    ),
    rule(
        "npm_timeout",
        "timeout",
        r"^npm (?:error|ERR!) ((?:code|errno) (ETIMEDOUT|ESOCKETTIMEDOUT)|network timeout)",
        "the npm registry did not answer in time",
    ),
    rule(
        "npm_no_version",
        "not_found",
        r"^npm (?:error|ERR!) code ETARGET",
        "no version of the package matches",
    ),
)

#: pip messages.
PIP_RULES: tuple[StderrRule, ...] = (
    *TLS_RULES,
    *http_status_rules("pip", r"HTTP error {status}\b"),
    rule(
        "pip_retries",
        "network_error",
        r"too many 5\d\d error responses",
        "the package index kept answering with an HTTP 5xx error",
    ),
    # pip's warning for each retry: "WARNING: 401 Error, Credentials not correct for ..."
    *http_status_rules("pip_warning", r"^WARNING: {status} (Client |Server )?Error\b"),
    rule(
        "pip_resolve",
        "network_error",
        r"Name or service not known|Temporary failure in name resolution|"
        r"Connection refused|Connection reset by peer|Network is unreachable",
        "the package index is not reachable",
    ),
    rule("pip_timeout", "timeout", r"Read timed out|timed out", "the package index timed out"),
    # A summary line, read last: it hides the first error (a 401, a refused connection).
    rule(
        "pip_no_distribution",
        "not_found",
        r"No matching distribution found for",
        "no distribution of the package matches on the index",
    ),
)


@dataclass(frozen=True, slots=True)
class ExitRule:
    """A documented exit status of a tool: the failure it stands for, in fixed words."""

    status: int
    code: str
    message: str


def _exits(*rows: tuple[int, str, str]) -> Mapping[int, ExitRule]:
    return MappingProxyType({status: ExitRule(status, code, msg) for status, code, msg in rows})


_CURL_CUT = "the connection was closed, reset or cut before the transfer finished"

#: curl's documented exit statuses (``man curl``, EXIT CODES) that name one failure.
CURL_EXITS: Mapping[int, ExitRule] = _exits(
    (1, "internal_error", "curl does not support the URL's protocol"),
    (3, "internal_error", "the URL is malformed"),
    (5, "network_error", "the proxy host name could not be resolved"),
    (6, "network_error", _HOST_UNRESOLVED),
    (7, "network_error", "could not connect to the server (refused or unreachable)"),
    (9, "auth_failed", "the server denied access to the resource"),
    (16, "network_error", "the HTTP/2 connection failed"),
    (18, "network_error", "the transfer ended before all the data arrived"),
    (28, "timeout", "the connection or the transfer timed out"),
    (35, "internal_error", "the TLS handshake failed"),
    (37, "not_found", "the local file named in the URL cannot be read"),
    (47, "internal_error", "the server redirected too often"),
    (52, "network_error", "the server closed the connection without replying"),
    (55, "network_error", _CURL_CUT),
    (56, "network_error", _CURL_CUT),
    (58, "internal_error", "the local TLS client certificate or key could not be used"),
    (60, "auth_failed", _SERVER_CERT),
    (67, "auth_failed", "the server rejected the login"),
    (77, "internal_error", "the local CA certificate file could not be read"),
    (92, "network_error", "the HTTP/2 stream was reset"),
    (97, "network_error", "the proxy handshake failed"),
)

#: wget's documented exit statuses (``man wget``, EXIT STATUS).
WGET_EXITS: Mapping[int, ExitRule] = _exits(
    (2, "internal_error", "wget could not parse its command line or configuration"),
    (3, "internal_error", "wget could not write its output file"),
    (4, "network_error", "wget reports a network failure"),
    (5, "auth_failed", _SERVER_CERT),
    (6, "auth_failed", "the server rejected the user name or password"),
    (7, "internal_error", "the server broke the protocol"),
    (8, "internal_error", "the server answered with an error wget does not name"),
)


@dataclass(frozen=True, slots=True)
class ToolTable:
    """What one tool's failures mean: stderr rules first, then its exit statuses."""

    name: str
    stderr: StderrClassifier
    exits: Mapping[int, ExitRule] = field(default_factory=lambda: MappingProxyType({}))
    #: Lines that show this tool's messages inside another's stderr (ssh's in scp's,
    #: rsync's, git's): the table is then tried after the named tool's (:func:`classify_tool`).
    marks: re.Pattern[str] | None = None

    def classify(self, returncode: int | None, stderr: str | bytes | None) -> Classification | None:
        """The failure's classification, or ``None`` when neither table knows it."""
        if stderr:
            found = self.stderr.classify(stderr)
            if found is not None:
                return found
        exit_rule = self.exits.get(returncode) if isinstance(returncode, int) else None
        if exit_rule is None:
            return None
        return Classification(
            code=exit_rule.code,
            message=exit_rule.message,
            rule=f"exit:{self.name}:{exit_rule.status}",
        )

    def error(self, returncode: int | None, stderr: str | bytes | None) -> PackError | None:
        """A :class:`PackError` for the failure, or ``None``."""
        found = self.classify(returncode, stderr)
        if found is None:
            return None
        return PackError(found.code, found.message, retry_after=found.retry_after)


#: Ready classifiers for ssh and git stderr.
SSH = StderrClassifier(SSH_RULES, name="ssh")
GIT = StderrClassifier(GIT_RULES, name="git")
CURL = StderrClassifier(CURL_RULES, name="curl")
WGET = StderrClassifier(WGET_RULES, name="wget")
FFMPEG = StderrClassifier(FFMPEG_RULES, name="ffmpeg")

DOCKER = StderrClassifier(DOCKER_RULES, name="docker")
KUBECTL = StderrClassifier(KUBECTL_RULES, name="kubectl")
PSQL = StderrClassifier(PSQL_RULES, name="psql")
NPM = StderrClassifier(NPM_RULES, name="npm")
PIP = StderrClassifier(PIP_RULES, name="pip")


def _marks(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.MULTILINE)


_SSH_TABLE = ToolTable(
    "ssh",
    SSH,
    marks=_marks(
        r"^(ssh: |kex_exchange_identification|ssh_exchange_identification|"
        r"Host key verification failed|Connection (closed|reset) by |"
        r"Connection timed out during banner exchange)|"
        r"Permission denied \([a-z,\-]+\)"
    ),
)
_PIP_TABLE = ToolTable("pip", PIP, marks=_marks(r"^(ERROR: |\s+ERROR: HTTP error )"))

#: Tool name (``argv[0]``'s base name) -> its table; :func:`table_for` picks one.
TOOL_TABLES: Mapping[str, ToolTable] = MappingProxyType(
    {
        "git": ToolTable("git", GIT),
        "ssh": _SSH_TABLE,
        "curl": ToolTable("curl", CURL, CURL_EXITS),
        "wget": ToolTable("wget", WGET, WGET_EXITS),
        "ffmpeg": ToolTable("ffmpeg", FFMPEG),
        "ffprobe": ToolTable("ffprobe", FFMPEG),
        "docker": ToolTable(
            "docker", DOCKER, marks=_marks(r"Docker daemon|^Error response from daemon: ")
        ),
        "kubectl": ToolTable(
            "kubectl",
            KUBECTL,
            marks=_marks(r"^(Error from server \(|error: You must be logged in to the server)"),
        ),
        "psql": ToolTable("psql", PSQL, marks=_marks(r"^psql: ")),
        "npm": ToolTable("npm", NPM, marks=_marks(r"^npm (error|ERR!) ")),
        "npx": ToolTable("npx", NPM),
        "pip": _PIP_TABLE,
        "pip3": _PIP_TABLE,
    }
)

#: The tables picked by content: each whose ``marks`` occur in a stderr is tried, in this
#: order, after the table of the tool named by ``argv`` (:func:`classify_tool`).
CONTENT_TABLES: tuple[ToolTable, ...] = tuple(
    table for name, table in TOOL_TABLES.items() if table.marks is not None and table.name == name
)


#: Programs that run another program (``env LC_ALL=C curl ...``): the tool is the one
#: they run. ``env``'s ``VAR=value`` and options, ``timeout``'s options and duration,
#: ``nice``'s adjustment are skipped.
_WRAPPERS = frozenset({"env", "timeout", "nice", "nohup", "stdbuf", "ionice", "setsid"})
#: Options of the wrappers above that take a separate value (``env -u NAME``, ...).
_WRAPPER_VALUE_OPTIONS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
        "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
        "nice": frozenset({"-n", "--adjustment"}),
        "stdbuf": frozenset({"-i", "-o", "-e"}),
        "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    }
)
#: Shells whose ``-c SCRIPT`` runs the script's first word.
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: Wrappers unwrapped at most (``env ... timeout 10 sh -c 'curl ...'`` is three).
_MAX_UNWRAP = 4


def _words(argv: Sequence[str] | str | bytes | None) -> list[str] | None:
    if isinstance(argv, bytes):
        argv = argv.decode("utf-8", "replace")
    if isinstance(argv, str):
        try:
            return shlex.split(argv)
        except ValueError:  # unbalanced quotes: a plain split is good enough for a name
            return argv.split()
    if isinstance(argv, Sequence):
        return [
            os.fsdecode(item) if isinstance(item, str | bytes | os.PathLike) else ""
            for item in list(argv[:64])
        ]
    return None


def _basename(word: str) -> str:
    name = os.path.basename(word)
    return name[:-4] if name.lower().endswith(".exe") else name


def _unwrap(name: str, rest: list[str]) -> list[str] | None:
    """The argv a wrapper ``name`` runs (``rest`` is what follows it), or None."""
    if name in _SHELLS:
        for index, word in enumerate(rest):
            if word == "-c" or (word.startswith("-") and not word.startswith("--") and "c" in word):
                script = _words(rest[index + 1] if index + 1 < len(rest) else "") or []
                while script and (script[0] in {"exec", "command"} or _ASSIGN.match(script[0])):
                    script = script[1:]  # exec curl ..., LC_ALL=C curl ...
                return script or None
            if not word.startswith("-"):
                return None  # sh script.sh: the tool is the script
        return None
    takes_value = _WRAPPER_VALUE_OPTIONS.get(name, frozenset())
    index = 0
    while index < len(rest):
        word = rest[index]
        if word == "--":
            index += 1
            break
        if word in takes_value:
            index += 2
        elif (word.startswith("-") and len(word) > 1) or (name == "env" and "=" in word):
            index += 1  # an option, or env's VAR=value
        else:
            break
    if name == "timeout":
        index += 1  # the duration
    return rest[index:] or None


def tool_name(argv: Sequence[str] | str | bytes | None) -> str | None:
    """The tool an ``argv`` runs: the base name of its first element, without ``.exe``;
    through wrappers (``env VAR=x``, ``timeout 10``, ``nice``, ``sh -c 'curl ...'``), the
    tool they run."""
    words = _words(argv)
    for _ in range(_MAX_UNWRAP + 1):
        if not words:
            return None
        name = _basename(words[0])
        if name not in _WRAPPERS and name not in _SHELLS:
            return name or None
        inner = _unwrap(name, words[1:])
        if inner is None:
            return name or None
        words = inner
    return None


def table_for(argv: Sequence[str] | str | bytes | None) -> ToolTable | None:
    """The :data:`TOOL_TABLES` entry for the tool ``argv`` runs, if there is one."""
    name = tool_name(argv)
    return TOOL_TABLES.get(name) if name is not None else None


def tables_for(
    argv: Sequence[str] | str | bytes | None, stderr: str | bytes | None
) -> tuple[ToolTable, ...]:
    """The tables that may know a failure: the named tool's (:func:`table_for`), then each
    of :data:`CONTENT_TABLES` whose marks occur in ``stderr`` (ssh's lines inside scp's,
    rsync's or git's; docker's inside a wrapper script's)."""
    named = table_for(argv)
    found = [named] if named is not None else []
    if stderr:
        text = stderr_text(stderr)
        for table in CONTENT_TABLES:
            if table.marks is not None and table.marks.search(text) and table not in found:
                found.append(table)
    return tuple(found)


def classify_tool(
    argv: Sequence[str] | str | bytes | None,
    returncode: int | None,
    stderr: str | bytes | None,
) -> Classification | None:
    """A failed tool run's classification: the stderr rules of :func:`tables_for`'s tables
    in order, then the named tool's exit statuses, then any tool's stderr read with the
    vocabulary of :mod:`control_plane.core.evidence`; ``None`` when none knows it."""
    tables = tables_for(argv, stderr)
    if stderr:
        for table in tables:
            found = table.stderr.classify(stderr)
            if found is not None:
                return found
    named = table_for(argv)
    found = named.classify(returncode, None) if named is not None else None
    if found is None and stderr:
        # Any tool, with or without a table: its lines read with the engine's vocabulary,
        # the first line that says something over lines that summarise it.
        words = read_lines(stderr_text(stderr))
        if words is not None:
            code, message, phrase = words
            return Classification(code=code, message=message, rule=f"stderr:words:{phrase}")
    return found


# -- a finished run ------------------------------------------------------------------


class ToolFailed(RuntimeError):
    """A tool failed and no rule recognised its stderr.

    Deliberately unclassified: the call becomes ``internal_error``; the scrubbed stderr
    tail travels only in this exception, which the control plane keeps server-side.
    """

    def __init__(self, tool: str, returncode: int, stderr: str) -> None:
        self.tool = tool
        self.returncode = returncode
        # Scrubbed before it is cut (a secret the cut halves would match no rule).
        self.stderr = scrub_tail(stderr_text(stderr), 4000)
        super().__init__(f"{tool} exited with status {returncode}: {self.stderr}")


@dataclass(frozen=True, slots=True)
class ToolRun:
    """What a finished tool left: exit status, stdout bytes and decoded stderr."""

    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def resolve_binary(
    name: str,
    *,
    override: str | None = None,
    env_var: str | None = None,
    missing_code: str = "dependency_missing",
) -> str:
    """The executable to run for ``name``: ``override``, else ``$env_var``, else ``PATH``.

    Raises :class:`PackError` with ``missing_code`` when it cannot be found or executed.
    """
    candidate = override or (os.environ.get(env_var) if env_var else None) or name
    found = shutil.which(candidate)
    if found is None:
        raise PackError(missing_code, f"{name} is not installed or not executable on this host")
    return found


def raise_for_failure(run: ToolRun, label: str, table: ToolTable | None = None) -> None:
    """Raise the classified error of a failed ``run`` (nothing when it succeeded): the first
    matching rule of ``table`` (default: the :data:`TOOL_TABLES` entry for ``label``, else
    :func:`classify_tool`), stderr rules before exit statuses; else :class:`ToolFailed`."""
    if run.ok:
        return
    chosen = table or TOOL_TABLES.get(label)
    if chosen is not None:
        error = chosen.error(run.returncode, run.stderr)
    else:
        found = classify_tool(run.argv, run.returncode, run.stderr)
        error = (
            PackError(found.code, found.message, retry_after=found.retry_after)
            if found is not None
            else None
        )
    if error is not None:
        raise error
    raise ToolFailed(label, run.returncode, run.stderr)
