"""Wrapping command-line tools: run them under a deadline and classify their stderr.

A tool's stderr is the worst possible error message for a weak model: long, localised,
full of URLs and sometimes credentials. This module turns it into one code with a fixed
message, by an **ordered table** of ``(regex, code)`` rules: the first rule whose pattern
occurs anywhere in the text wins, and the message is the rule's own fixed text, never the
stderr. Order matters (``The requested URL returned error: 403`` is ``auth_failed``
although the same line starts with ``unable to access``, a ``network_error`` rule), so
specific rules come first.

* :class:`StderrRule`, :class:`StderrClassifier` -- the table machinery; classifiers
  compose (``GIT.extend(...)``) so a pack can put its own rules in front.
* :data:`SSH_RULES`, :data:`GIT_RULES` and the ready classifiers :data:`SSH`, :data:`GIT`
  -- tables built from real stderr captured from OpenSSH and git (``tests/data/stderr``).
* :func:`run_tool` -- run a command with a timeout, kill its whole process group when
  the time is up (``timeout``), report a missing binary as ``dependency_missing``.
* :func:`resolve_binary` -- find a tool on ``PATH`` or from an override (env or input).
* :class:`ToolFailed` -- the exception to raise when no rule matched: it is *not*
  classified, so the call becomes ``internal_error`` and the scrubbed stderr is kept
  server-side under the reference id.

Run tools with ``LC_ALL=C`` so their messages are the English ones the tables know.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from control_plane.core.classify import Classification
from control_plane.core.errors import PackError
from control_plane.core.redact import scrub

__all__ = [
    "GIT",
    "GIT_RULES",
    "SSH",
    "SSH_RULES",
    "StderrClassifier",
    "StderrRule",
    "ToolFailed",
    "ToolRun",
    "resolve_binary",
    "rule",
    "run_tool",
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


def _text(stderr: str | bytes) -> str:
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
        text = _text(stderr)
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

#: OpenSSH client messages (``ssh``, and git's ssh transport).
SSH_RULES: tuple[StderrRule, ...] = (
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
        r"couldn't find remote ref|unknown revision|invalid refspec",
        "the branch, tag or ref does not exist in the repository",
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
        "network_error",
        r"SSL certificate problem|server certificate verification failed|"
        r"gnutls_handshake\(\) failed|SSL_connect|SSL_ERROR|TLS connect error",
        "the TLS handshake or certificate verification failed",
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

#: Ready classifiers for ssh and git stderr.
SSH = StderrClassifier(SSH_RULES, name="ssh")
GIT = StderrClassifier(GIT_RULES, name="git")


# -- running tools ------------------------------------------------------------------


class ToolFailed(RuntimeError):
    """A tool failed and no rule recognised its stderr.

    Deliberately unclassified: the call becomes ``internal_error``; the scrubbed stderr
    tail travels only in this exception, which the control plane keeps server-side.
    """

    def __init__(self, tool: str, returncode: int, stderr: str) -> None:
        self.tool = tool
        self.returncode = returncode
        self.stderr = scrub(_text(stderr)[-4000:])
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


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def run_tool(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    tool: str | None = None,
    missing_code: str = "dependency_missing",
) -> ToolRun:
    """Run ``argv`` to completion within ``timeout`` seconds; never raises on exit status.

    The child runs in its own session so that on timeout the whole process group (git's
    ``git-remote-http``, ``ssh``, ...) is killed. Raises :class:`PackError` ``timeout``
    when time runs out and ``missing_code`` when the executable does not exist.
    """
    label = tool or os.path.basename(argv[0])
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        raise PackError(
            missing_code, f"{label} is not installed or not executable on this host"
        ) from exc
    try:
        stdout, stderr = proc.communicate(timeout=max(0.0, timeout))
    except subprocess.TimeoutExpired as exc:
        _kill_group(proc)
        proc.communicate()
        raise PackError("timeout", f"{label} did not finish within {timeout:.3g}s") from exc
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    return ToolRun(tuple(argv), proc.returncode, stdout, _text(stderr))
