"""Running the git CLI: no prompts, credentials in the child's environment only, safe transports."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from control_plane.errors import PackError, not_permitted
from control_plane.tools import (
    GIT,
    StderrClassifier,
    ToolFailed,
    ToolRun,
    resolve_binary,
    scrub,
)
from packs.credentials import credential_header
from packs.git.egress import Pinned, checked

if TYPE_CHECKING:
    from control_plane import Context, PackReach

__all__ = ["GIT_ENV", "Remote", "git_binary", "git_env", "raise_for", "remote", "run_git"]

#: Environment variable naming the git executable to use (default: ``git`` on PATH).
GIT_ENV = "CAPABILITY_PACKS_GIT"

#: Transports a remote may use; ``file`` is added only for a local remote inside a read grant.
ALLOWED_PROTOCOLS = "git:http:https:ssh"
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
    """A remote as git will see it: URL without credentials, plus the header to send.

    ``local`` is set for a ``file://`` URL or a plain path: git reads the server's own
    filesystem then, which only a read grant allows (``url`` is then the resolved path).
    """

    url: str
    header: str | None = None
    local: bool = False
    #: How git is held to the addresses the egress check saw (:mod:`packs.git.egress`).
    pinned: Pinned = field(default_factory=Pinned)
    #: The URL as the caller gave it, credential-free (``url`` may hold the pinned address).
    shown: str = ""

    @property
    def display(self) -> str:
        """The URL as the pack returns it (already credential-free, then scrubbed)."""
        return scrub(self.shown or self.url)

    @property
    def connect(self) -> tuple[int, ...]:
        """The TCP ports git may connect to: the checked one (none for a local remote)."""
        return () if self.pinned.port is None else (self.pinned.port,)


def _header_for(credential: Mapping[str, Any]) -> str:
    name, value = credential_header(credential)
    return f"{name}: {value}"


def _local_path(url: str) -> str | None:
    """The path of a remote git reads from the local filesystem, else ``None``: a
    ``file://`` URL, or a plain path (no ``scheme://`` and no ``host:`` before a slash,
    which git reads as scp-like ssh)."""
    parts = urlsplit(url)
    if parts.scheme.lower() == "file":
        return unquote(parts.path) or "/"
    if "://" in url:
        return None
    colon, slash = url.find(":"), url.find("/")
    if colon > 0 and (slash < 0 or colon < slash):
        return None  # user@host:path (ssh)
    return url


def remote(
    url: str, credential: Mapping[str, Any] | None, reach: PackReach, budget: float = 30.0
) -> Remote:
    """The remote for ``url``, checked against the pack's grant.

    * http(s): ``user[:password]@`` moves into a header (never argv); a secret in the query
      string (``?private_token=``) is refused with ``not_permitted`` -- git would put it on
      its world-readable command line (``/proc/PID/cmdline``);
    * ``file://`` and plain paths: only inside a read grant (``not_permitted`` otherwise,
      whether or not a repository is there); git gets the resolved path;
    * every other remote: its host's addresses inside the egress grant, git pinned to them
      (:func:`packs.git.egress.checked`), within ``budget`` seconds.
    """
    try:
        local = _local_path(url)
        if local is not None:
            return Remote(reach.readable(local, "url"), local=True)
        parts = urlsplit(url)
    except ValueError:  # urllib refuses it ("[v4]", a bad port): no parser may guess
        raise not_permitted(
            "the url is not one git and the check would read the same way"
        ) from None
    if parts.scheme.lower() not in {"http", "https"}:
        pinned = checked(url, reach, budget)
        return Remote(pinned.url or url, pinned=pinned, shown=url)
    netloc = parts.netloc
    userinfo: tuple[str, str] | None = None
    if "@" in netloc:
        info, _, hostport = netloc.rpartition("@")
        user, sep, password = info.partition(":")
        if sep:
            userinfo = (unquote(user), unquote(password))
            netloc = hostport
    clean = urlunsplit(parts._replace(netloc=netloc))
    if scrub(clean) != clean:
        raise not_permitted(
            "url carries a credential (in its query string or as a user name), which git "
            "would show on its "
            "command line to every user of the host; pass it as credential (e.g. "
            '{"header": {"name": "Private-Token", "value": ...}}) instead'
        )
    pinned = checked(clean, reach, budget)
    given = pinned.url or clean
    if credential:
        return Remote(given, _header_for(credential), pinned=pinned, shown=clean)
    if userinfo is not None:
        basic = {"basic": {"username": userinfo[0], "password": userinfo[1]}}
        return Remote(given, _header_for(basic), pinned=pinned, shown=clean)
    return Remote(given, pinned=pinned, shown=clean)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc, "/", "", ""))


def _dropped(key: str) -> bool:
    return key in _DROP_EXACT or key.startswith(_DROP_PREFIXES)


def git_env(rem: Remote | None, budget: float, reach: PackReach) -> dict[str, str]:
    """What git's environment adds to the reach's: prompt-free, the transports the remote
    needs (``file`` only for a granted local remote), no global or system config and no
    ssh keys or agent unless ambient credentials are granted, the credential header if any."""
    ssh = (os.environ.get("GIT_SSH_COMMAND") if reach.ambient_credentials else None) or "ssh"
    connect = max(1, min(30, math.ceil(budget)))
    ssh_options = f"-o BatchMode=yes -o ConnectTimeout={connect}"
    if rem is not None and rem.pinned.ssh_options:
        ssh_options += " " + rem.pinned.ssh_options
    local = rem is not None and rem.local
    config: list[tuple[str, str]] = []
    env = {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "",
        "SSH_ASKPASS": "",
        "GCM_INTERACTIVE": "never",
        "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS + (":file" if local else ""),
    }
    if not reach.ambient_credentials:
        # No ~/.gitconfig (http.extraHeader, url.insteadOf, credential helpers), no
        # /etc/gitconfig, no ~/.ssh/config, keys or agent; HOME is an empty directory, so
        # curl finds no ~/.netrc either.
        env["GIT_CONFIG_GLOBAL"] = os.devnull
        env["GIT_CONFIG_NOSYSTEM"] = "1"
        ssh_options += " -F /dev/null -o IdentityFile=/dev/null -o IdentityAgent=none"
    env["GIT_SSH_COMMAND"] = f"{ssh} {ssh_options}"
    if rem is not None and rem.header is not None:
        config.append((f"http.{_origin(rem.url)}.extraHeader", rem.header))
    config.append(("protocol.file.allow", "always" if local else "never"))
    # Nothing a repository carries runs or redirects git: no hooks, no fsmonitor command,
    # no bare repository found by walking up from a caller's directory (a clone's working
    # tree may hold one), no submodules fetched.
    config += [
        ("core.hooksPath", os.devnull),
        ("core.fsmonitor", "false"),
        ("safe.bareRepository", "explicit"),
        ("submodule.recurse", "false"),
    ]
    if rem is not None:
        config.extend(rem.pinned.config)
    env["GIT_CONFIG_COUNT"] = str(len(config))
    for index, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
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
    ctx: Context,
    cwd: str | None = None,
    on_stdout: Callable[[bytes], bool] | None = None,
) -> tuple[ToolRun, bool]:
    """Run ``git <BASE_OPTIONS> <args>`` through the pack's reach (granted program, scrubbed
    environment, killed when the call is cancelled); the run and whether ``on_stdout``
    stopped it."""
    return ctx.reach.run(
        [binary, *BASE_OPTIONS, *args],
        timeout=timeout,
        ctx=ctx,
        env=git_env(rem, timeout, ctx.reach),
        drop=_dropped,
        cwd=cwd,
        on_stdout=on_stdout,
        tool="git",
        program="git",
        connect=() if rem is None else rem.connect,
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
