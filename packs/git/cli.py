"""Running the git CLI for the git packs: a hermetic environment, credentials off argv.

* Prompts are impossible: ``GIT_TERMINAL_PROMPT=0``, ``GIT_ASKPASS``/``SSH_ASKPASS``
  empty, ``-c credential.helper=`` (no stored credentials are consulted) and ssh in
  ``BatchMode``.
* A credential for an http(s) remote travels as an ``Authorization`` (or custom) header
  scoped to that origin through ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_0``/
  ``GIT_CONFIG_VALUE_0`` -- the environment of the child only, never argv, never
  ``.git/config``. ``user:password@`` in a URL is moved there too.
* Tracing variables (``GIT_TRACE*``, ``GIT_CURL_VERBOSE``) are removed so nothing logs
  the header; only ``file``, ``git``, ``http``, ``https`` and ``ssh`` transports are
  allowed (``GIT_ALLOW_PROTOCOL``), so ``ext::`` cannot run commands.
* stderr is classified by :data:`control_plane.core.stderr.GIT`; an unrecognised failure is a
  :class:`~control_plane.core.stderr.ToolFailed` (``internal_error``, stderr kept server-side).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from control_plane.errors import PackError
from control_plane.tools import (
    GIT,
    StderrClassifier,
    ToolFailed,
    ToolRun,
    resolve_binary,
    run_tool,
    scrub,
)
from packs.credentials import credential_header

__all__ = ["GIT_ENV", "Remote", "git_binary", "git_env", "raise_for", "remote", "run_git"]

#: Environment variable naming the git executable to use (default: ``git`` on PATH).
GIT_ENV = "CAPABILITY_PACKS_GIT"

ALLOWED_PROTOCOLS = "file:git:http:https:ssh"
_DROP_EXACT = frozenset(
    {
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "GIT_CURL_VERBOSE",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_PARAMETERS",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_REDACT_COOKIES",
        "GIT_PROTOCOL_FROM_USER",
    }
)
_DROP_PREFIXES = ("GIT_TRACE", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")


@dataclass(frozen=True)
class Remote:
    """A remote as git will see it: URL without credentials, plus the header to send."""

    url: str
    header: str | None = None

    @property
    def display(self) -> str:
        """The URL as the pack returns it (already credential-free, then scrubbed)."""
        return scrub(self.url)


def _header_for(credential: Mapping[str, Any]) -> str:
    name, value = credential_header(credential)
    return f"{name}: {value}"


def remote(url: str, credential: Mapping[str, Any] | None) -> Remote:
    """Split credentials out of an http(s) URL and turn them into a header."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in {"http", "https"}:
        return Remote(url)
    netloc = parts.netloc
    userinfo: tuple[str, str] | None = None
    if "@" in netloc:
        info, _, hostport = netloc.rpartition("@")
        user, sep, password = info.partition(":")
        if sep:
            userinfo = (unquote(user), unquote(password))
            netloc = hostport
    clean = urlunsplit(parts._replace(netloc=netloc))
    if credential:
        return Remote(clean, _header_for(credential))
    if userinfo is not None:
        return Remote(
            clean, _header_for({"basic": {"username": userinfo[0], "password": userinfo[1]}})
        )
    return Remote(clean)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc, "/", "", ""))


def git_env(rem: Remote | None, budget: float) -> dict[str, str]:
    """The child environment: hermetic, prompt-free, with the credential header if any."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in _DROP_EXACT and not key.startswith(_DROP_PREFIXES)
    }
    ssh = os.environ.get("GIT_SSH_COMMAND") or "ssh"
    connect = max(1, min(30, math.ceil(budget)))
    env.update(
        {
            "LC_ALL": "C",
            "LANGUAGE": "C",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "",
            "SSH_ASKPASS": "",
            "GCM_INTERACTIVE": "never",
            "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS,
            "GIT_SSH_COMMAND": f"{ssh} -o BatchMode=yes -o ConnectTimeout={connect}",
            "GIT_CONFIG_COUNT": "0",
        }
    )
    if rem is not None and rem.header is not None:
        env["GIT_CONFIG_COUNT"] = "1"
        env["GIT_CONFIG_KEY_0"] = f"http.{_origin(rem.url)}.extraHeader"
        env["GIT_CONFIG_VALUE_0"] = rem.header
    return env


def git_binary() -> str:
    """The git executable; ``dependency_missing`` when there is none."""
    return resolve_binary("git", env_var=GIT_ENV)


#: Options before every subcommand: no credential helpers, no askpass program.
BASE_OPTIONS = ("-c", "credential.helper=", "-c", "core.askPass=")


def run_git(
    binary: str,
    args: Sequence[str],
    *,
    rem: Remote | None,
    timeout: float,
    cwd: str | None = None,
) -> ToolRun:
    """Run ``git <BASE_OPTIONS> <args>`` under the hermetic environment."""
    return run_tool(
        [binary, *BASE_OPTIONS, *args],
        timeout=timeout,
        env=git_env(rem, timeout),
        cwd=cwd,
        tool="git",
        check=False,  # raise_for reads the stderr itself (credential_sent)
    )


#: git asks for a user name after a 401 even when a header was sent; with a credential
#: given, that means the server rejected it.
_REJECTED = "the server rejected the credentials"


def raise_for(
    done: ToolRun, classifier: StderrClassifier = GIT, *, credential_sent: bool = False
) -> None:
    """Raise the classified :class:`PackError` for a failed run, or :class:`ToolFailed`."""
    if done.ok:
        return
    found = classifier.match(done.stderr)
    if found is None:
        raise ToolFailed("git", done.returncode, done.stderr)
    if credential_sent and found.name == "git_no_credentials":
        raise PackError("auth_failed", _REJECTED)
    raise found.error()
