"""git.ls_remote and git.clone against real git: local bare repos, ``git daemon`` and
smart HTTP on 127.0.0.1, and real socket failures (refused, reset, silent, unresolvable).

Every code the two packs declare is provoked here (see :data:`CODE_TESTS`), and planted
credentials are looked for in every outcome, in the logs, in the argv of every process
alive while git talks to the server (``/proc/<pid>/cmdline``) and in the cloned tree.
"""

from __future__ import annotations

import base64
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pack_helpers import (
    GIT_PASSWORD,
    GIT_USER,
    Call,
    assert_error,
    assert_no_secrets,
    make_call,
    serialized,
)
from pack_servers import (
    LOOPBACK,
    UNRESOLVABLE_HOST,
    BacklogFull,
    GitSmartHTTP,
    HTTPServerThread,
    QuietHandler,
    RawTCPServer,
    Repo,
    free_port,
    git,
)

import packs.git as git_pack
from control_plane._kernel.errors import InvalidInput
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.outcome import Outcome
from packs.git.cli import GIT_ENV

pytestmark = pytest.mark.system  # docs/setup.md, Test tiers

LS = "git.ls_remote"
CLONE = "git.clone"
BASIC = {"basic": {"username": GIT_USER, "password": GIT_PASSWORD}}
TOKEN = "tok-PLANTED-git-bearer-3e8d51"
HEADER_SECRET = "hdr-PLANTED-git-key-0b7c42"
WRONG_PASSWORD = "pw-PLANTED-wrong-c19d07"
#: Every form a planted secret can take on the wire or in a process table.
SECRETS = (
    GIT_PASSWORD,
    WRONG_PASSWORD,
    TOKEN,
    HEADER_SECRET,
    base64.b64encode(f"{GIT_USER}:{GIT_PASSWORD}".encode()).decode(),
    base64.b64encode(f"{GIT_USER}:{WRONG_PASSWORD}".encode()).decode(),
)
REJECTED = "the server rejected the credentials"

#: Declared code -> the tests in this file that provoke it with real git.
CODE_TESTS: dict[str, dict[str, tuple[str, ...]]] = {
    LS: {
        "auth_failed": ("test_wrong_credentials_are_auth_failed", "test_missing_credentials"),
        "not_found": ("test_unknown_repository_is_not_found", "test_unmatched_patterns"),
        "rate_limited": ("test_http_429_is_rate_limited",),
        "timeout": ("test_silent_server_is_timeout", "test_connect_timeout"),
        "network_error": (
            "test_refused_is_network_error",
            "test_reset_and_garbage_are_network_error",
            "test_unresolvable_host_is_network_error",
            "test_http_5xx_and_504",
        ),
        "dependency_missing": ("test_git_missing_is_dependency_missing",),
        "internal_error": ("test_unclassified_failure_is_internal_error",),
        "not_permitted": ("test_a_local_remote_outside_the_read_grant_is_not_permitted",),
    },
    CLONE: {
        "auth_failed": ("test_clone_auth_failed",),
        "not_found": ("test_clone_unknown_repo_or_ref", "test_clone_empty_repository"),
        "rate_limited": ("test_clone_rate_limited_timeout_network",),
        "timeout": ("test_clone_rate_limited_timeout_network",),
        "network_error": ("test_clone_rate_limited_timeout_network",),
        "dependency_missing": ("test_git_missing_is_dependency_missing",),
        "destination_unusable": ("test_destination_unusable",),
        "internal_error": ("test_unclassified_failure_is_internal_error",),
        "not_permitted": ("test_a_local_remote_outside_the_read_grant_is_not_permitted",),
    },
}


# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def invoker() -> Iterator[Invoker]:
    invoker_, _ = make_call(git_pack)
    yield invoker_
    invoker_.close()


@pytest.fixture(scope="module")
def call(invoker: Invoker) -> Call:
    def call_(pack: str, doc: dict[str, Any], **kwargs: Any) -> Outcome:
        return invoker.invoke_sync(pack, doc, **kwargs)

    return call_


class Status(QuietHandler):
    """``/<status>/...``: answers that HTTP status (``/429/`` with a Retry-After of 7)."""

    def do_GET(self) -> None:
        status = int(self.path.strip("/").split("/")[0])
        body = b"no\n"
        self.send_response(status)
        if status in (429, 503):
            self.send_header("Retry-After", "7")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def status_server() -> Iterator[HTTPServerThread]:
    with HTTPServerThread(Status) as server:
        yield server


@pytest.fixture(scope="module")
def empty_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("empty") / "empty.git"
    git("init", "-q", "--bare", str(path))
    return path


def http_url(server: GitSmartHTTP, repo: Repo) -> str:
    return server.url("/" + repo.name)


def refs(outcome: Outcome) -> dict[str, str]:
    assert outcome.ok, outcome.to_dict()
    assert outcome.result is not None
    return {r["name"]: r["sha"] for r in outcome.result["refs"]}


def no_secrets(outcome: Outcome) -> None:
    assert_no_secrets(outcome, *SECRETS)


def test_every_declared_code_has_a_provoking_test(invoker: Invoker) -> None:
    module = sys.modules[__name__]
    for pack, tests in CODE_TESTS.items():
        declared = set(invoker.registry.get(pack).vocabulary)
        assert set(tests) == declared, pack
        for names in tests.values():
            for name in names:
                assert callable(getattr(module, name)), name


# -- git.ls_remote: success ------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["path", "file", "daemon", "http", "http-url-userinfo"])
def test_ls_remote_over_every_transport(
    call: Call, git_repo: Repo, daemon_port: int, smart_http: GitSmartHTTP, transport: str
) -> None:
    doc: dict[str, Any] = {
        "path": {"url": str(git_repo.path)},
        "file": {"url": git_repo.path.as_uri()},
        "daemon": {"url": f"git://{LOOPBACK}:{daemon_port}/{git_repo.name}"},
        "http": {"url": http_url(smart_http, git_repo), "credential": BASIC},
        "http-url-userinfo": {
            "url": http_url(smart_http, git_repo).replace("://", f"://{GIT_USER}:{GIT_PASSWORD}@")
        },
    }[transport]
    outcome = call(LS, doc)
    assert refs(outcome) == {
        "HEAD": git_repo.main_sha,
        "refs/heads/main": git_repo.main_sha,
        "refs/heads/feature": git_repo.feature_sha,
        "refs/tags/v1.0": git_repo.tag_sha,
    }
    assert outcome.result is not None
    assert outcome.result["head"] == {"target": "refs/heads/main", "sha": git_repo.main_sha}
    assert outcome.result["count"] == 4 and outcome.result["truncated"] is False
    if transport.startswith("http"):
        assert outcome.result["url"] == http_url(smart_http, git_repo)  # no userinfo
    no_secrets(outcome)


def test_heads_tags_patterns_and_limit(call: Call, git_repo: Repo) -> None:
    url = str(git_repo.path)
    assert set(refs(call(LS, {"url": url, "heads": True}))) == {
        "refs/heads/main",
        "refs/heads/feature",
    }
    assert set(refs(call(LS, {"url": url, "tags": True}))) == {"refs/tags/v1.0"}
    assert refs(call(LS, {"url": url, "patterns": ["feature"]})) == {
        "refs/heads/feature": git_repo.feature_sha
    }
    limited = call(LS, {"url": url, "limit": 2})
    assert limited.result is not None
    assert len(limited.result["refs"]) == 2
    # git is stopped once limit + 1 refs were read: count says how many were read.
    assert limited.result["count"] == 3 and limited.result["truncated"] is True


def test_empty_repository_lists_nothing(call: Call, empty_repo: Path) -> None:
    outcome = call(LS, {"url": str(empty_repo)})
    assert refs(outcome) == {}
    assert outcome.result is not None and outcome.result["head"] is None


# -- git.ls_remote: every declared code ---------------------------------------------------------


@pytest.mark.parametrize(
    "credential",
    [
        {"basic": {"username": GIT_USER, "password": WRONG_PASSWORD}},
        {"bearer": TOKEN},
        {"header": {"name": "X-Api-Key", "value": HEADER_SECRET}},
        "url-userinfo",
    ],
    ids=["basic", "bearer", "header", "url-userinfo"],
)
def test_wrong_credentials_are_auth_failed(
    call: Call, git_repo: Repo, smart_http: GitSmartHTTP, credential: Any
) -> None:
    url = http_url(smart_http, git_repo)
    if credential == "url-userinfo":
        doc = {"url": url.replace("://", f"://{GIT_USER}:{WRONG_PASSWORD}@")}
    else:
        doc = {"url": url, "credential": credential}
    outcome = call(LS, doc)
    error = assert_error(outcome, "auth_failed")
    assert error["message"] == REJECTED
    assert error["retryable"] is False
    no_secrets(outcome)


def test_missing_credentials(call: Call, git_repo: Repo, smart_http: GitSmartHTTP) -> None:
    started = time.monotonic()
    error = assert_error(call(LS, {"url": http_url(smart_http, git_repo)}), "auth_failed")
    assert "none were given" in error["message"]
    assert time.monotonic() - started < 5  # no prompt waited for


@pytest.mark.parametrize("where", ["path", "file", "daemon", "http"])
def test_unknown_repository_is_not_found(
    call: Call, git_repo: Repo, daemon_port: int, smart_http: GitSmartHTTP, where: str
) -> None:
    doc: dict[str, Any] = {
        "path": {"url": str(git_repo.root / "missing.git")},
        "file": {"url": (git_repo.root / "missing.git").as_uri()},
        "daemon": {"url": f"git://{LOOPBACK}:{daemon_port}/missing.git"},
        "http": {"url": smart_http.url("/missing.git"), "credential": BASIC},
    }[where]
    outcome = call(LS, doc)
    error = assert_error(outcome, "not_found")
    assert error["retryable"] is False
    assert "missing.git" not in serialized(outcome).decode()  # fixed text, no stderr


def test_unmatched_patterns(call: Call, git_repo: Repo) -> None:
    error = assert_error(call(LS, {"url": str(git_repo.path), "patterns": ["nope"]}), "not_found")
    assert "patterns" in error["message"]


def test_http_429_is_rate_limited(call: Call, status_server: HTTPServerThread) -> None:
    outcome = call(LS, {"url": status_server.url("/429/demo.git"), "credential": {"bearer": TOKEN}})
    error = assert_error(outcome, "rate_limited")
    # git does not show the Retry-After header; the pack's rule gives a floor of 1 s.
    assert error["retry_after"] == 1.0
    assert error["retryable"] is True
    no_secrets(outcome)


def test_http_5xx_and_504(call: Call, status_server: HTTPServerThread) -> None:
    for status in (500, 502, 503):
        assert_error(call(LS, {"url": status_server.url(f"/{status}/demo.git")}), "network_error")
    assert_error(call(LS, {"url": status_server.url("/504/demo.git")}), "timeout")


@pytest.mark.parametrize("scheme", ["git", "http", "ssh"])
def test_refused_is_network_error(call: Call, scheme: str) -> None:
    if scheme == "ssh" and shutil.which("ssh") is None:
        pytest.skip("no ssh client")  # git's ssh transport needs one; git and http do not
    outcome = call(LS, {"url": f"{scheme}://{LOOPBACK}:{free_port()}/demo.git", "timeout": 10})
    error = assert_error(outcome, "network_error")
    assert "refused" in error["message"]
    assert error["retryable"] is True


@pytest.mark.parametrize("scheme", ["git", "http"])
def test_reset_and_garbage_are_network_error(call: Call, scheme: str) -> None:
    for behaviour in ("reset", "garbage"):
        with RawTCPServer(behaviour) as server:
            url = f"{scheme}://{LOOPBACK}:{server.port}/demo.git"
            assert_error(call(LS, {"url": url, "timeout": 10}), "network_error")


@pytest.mark.parametrize("scheme", ["git", "http"])
def test_unresolvable_host_is_network_error(call: Call, scheme: str) -> None:
    # Longer than 255 octets under .invalid: the resolver refuses it without any packet.
    url = f"{scheme}://{UNRESOLVABLE_HOST}/demo.git"
    error = assert_error(call(LS, {"url": url, "credential": {"bearer": TOKEN}}), "network_error")
    assert "resolved" in error["message"]


@pytest.mark.parametrize("scheme", ["git", "http"])
def test_silent_server_is_timeout(call: Call, scheme: str) -> None:
    with RawTCPServer("silent") as server:
        url = f"{scheme}://{LOOPBACK}:{server.port}/demo.git"
        started = time.monotonic()
        error = assert_error(call(LS, {"url": url, "timeout": 0.8}), "timeout")
        assert time.monotonic() - started < 4
        assert error["retryable"] is True
        # The call's own deadline caps git the same way.
        started = time.monotonic()
        assert_error(call(LS, {"url": url}, timeout=0.8), "timeout")
        assert time.monotonic() - started < 4


def test_connect_timeout(call: Call) -> None:
    with BacklogFull() as full:
        started = time.monotonic()
        url = f"http://{LOOPBACK}:{full.port}/demo.git"
        assert_error(call(LS, {"url": url, "timeout": 0.8}), "timeout")
        assert time.monotonic() - started < 4


def test_git_missing_is_dependency_missing(
    call: Call, git_repo: Repo, monkeypatch: pytest.MonkeyPatch, empty_dir: Path
) -> None:
    monkeypatch.delenv(GIT_ENV, raising=False)
    monkeypatch.setenv("PATH", str(empty_dir))
    dest = empty_dir.parent / "not-created"
    url = str(git_repo.path)
    for pack, doc in ((LS, {"url": url}), (CLONE, {"url": url, "dest": str(dest)})):
        error = assert_error(call(pack, doc), "dependency_missing")
        assert "git" in error["message"] and error["retryable"] is False
    assert not dest.exists()  # the handler did not proceed
    monkeypatch.setenv(GIT_ENV, str(empty_dir / "git"))
    assert_error(call(LS, {"url": str(git_repo.path)}), "dependency_missing")


def test_unclassified_failure_is_internal_error(
    call: Call, invoker: Invoker, git_repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A git that fails without a message no rule knows: internal_error, stderr kept aside.

    The stand-in git also prints the credential header and a URL password to stderr:
    none of it reaches the caller, and the copy kept for operators is scrubbed.
    """
    leaky = tmp_path / "git"
    leaky.write_text(
        "#!/bin/sh\n"
        'echo "fatal: flux capacitor: $GIT_CONFIG_VALUE_0" >&2\n'
        f'echo "fatal: at http://{GIT_USER}:{GIT_PASSWORD}@{LOOPBACK}/x" >&2\n'
        "exit 3\n"
    )
    leaky.chmod(0o755)
    monkeypatch.setenv(GIT_ENV, str(leaky))
    for pack in (LS, CLONE):
        outcome = call(pack, {"url": f"http://{LOOPBACK}:9/demo.git", "credential": BASIC})
        error = assert_error(outcome, "internal_error")
        assert error["reference_id"]
        assert "flux" not in serialized(outcome).decode()
        no_secrets(outcome)
        incident = invoker.incidents.get(error["reference_id"])
        assert incident is not None and "flux capacitor" in incident.traceback
        for secret in SECRETS:
            assert secret not in incident.traceback
    monkeypatch.setenv(GIT_ENV, "/bin/false")  # fails silently
    assert_error(call(LS, {"url": str(git_repo.path)}), "internal_error")


def test_transport_helpers_are_rejected_before_git_runs(call: Call, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    with pytest.raises(InvalidInput):
        call(LS, {"url": f"ext::sh -c touch% {marker}"})
    with pytest.raises(InvalidInput):
        call(CLONE, {"url": "fd::3"})
    with pytest.raises(InvalidInput):
        call(LS, {"url": "--upload-pack=touch /tmp/x"})
    assert not marker.exists()


# -- git.clone ----------------------------------------------------------------------------------


def commits_in(path: Path) -> int:
    return int(git("rev-list", "--count", "HEAD", cwd=path))


@pytest.mark.parametrize("transport", ["path", "daemon", "http"])
def test_shallow_clone(
    call: Call,
    git_repo: Repo,
    daemon_port: int,
    smart_http: GitSmartHTTP,
    tmp_path: Path,
    transport: str,
) -> None:
    url = {
        "path": str(git_repo.path),
        "daemon": f"git://{LOOPBACK}:{daemon_port}/{git_repo.name}",
        "http": http_url(smart_http, git_repo),
    }[transport]
    dest = tmp_path / "checkout"
    doc: dict[str, Any] = {"url": url, "dest": str(dest)}
    if transport == "http":
        doc["credential"] = BASIC
    outcome = call(CLONE, doc)
    assert outcome.ok, outcome.to_dict()
    assert outcome.result == {
        "url": url,
        "path": str(dest),
        "commit": git_repo.main_sha,
        "branch": "main",
        "ref": None,
        "depth": 1,
    }
    assert (dest / "README.md").read_text() == "hello again\n"
    assert commits_in(dest) == 1 and (dest / ".git" / "shallow").exists()


def test_clone_branch_tag_depth_and_temporary_dest(
    call: Call, invoker: Invoker, git_repo: Repo
) -> None:
    feature = call(CLONE, {"url": str(git_repo.path), "ref": "feature"})
    assert feature.result is not None
    assert (feature.result["commit"], feature.result["branch"]) == (git_repo.feature_sha, "feature")
    tag = call(CLONE, {"url": str(git_repo.path), "ref": "v1.0", "depth": 5})
    assert tag.result is not None
    assert (tag.result["commit"], tag.result["branch"]) == (git_repo.tag_sha, None)
    for outcome in (feature, tag):
        assert outcome.result is not None
        path = Path(outcome.result["path"])
        # A default dest is a directory of the server's scratch root (swept after an hour).
        assert path.is_dir() and path.parent == Path(invoker.reaches.scratch.root())
        assert path.name.startswith("git.clone-")
        shutil.rmtree(path)


def test_clone_into_an_existing_empty_directory(call: Call, git_repo: Repo, tmp_path: Path) -> None:
    dest = tmp_path / "empty"
    dest.mkdir()
    outcome = call(CLONE, {"url": git_repo.path.as_uri(), "dest": str(dest)})
    assert outcome.result is not None and outcome.result["commit"] == git_repo.main_sha


def test_destination_unusable(call: Call, git_repo: Repo, tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for dest in (busy, a_file, a_file / "below-a-file"):
        error = assert_error(
            call(CLONE, {"url": str(git_repo.path), "dest": str(dest)}), "destination_unusable"
        )
        assert error["retryable"] is False
    assert [p.name for p in busy.iterdir()] == ["keep.txt"]  # nothing touched
    assert a_file.read_text() == "x"


def test_clone_unknown_repo_or_ref(
    call: Call, git_repo: Repo, daemon_port: int, tmp_path: Path
) -> None:
    given = tmp_path / "given"
    given.mkdir()
    created = tmp_path / "created"
    daemon = f"git://{LOOPBACK}:{daemon_port}/{git_repo.name}"
    for url, ref in ((str(git_repo.path), "nope"), (daemon, "nope"), (daemon + "x", None)):
        for dest in (given, created):
            doc = {"url": url, "dest": str(dest), **({"ref": ref} if ref else {})}
            error = assert_error(call(CLONE, doc), "not_found")
            assert ("branch" in error["message"]) == bool(ref)
    assert list(given.iterdir()) == []  # left as given: empty
    assert not created.exists()  # made by the pack, removed again


def test_clone_empty_repository(call: Call, empty_repo: Path, tmp_path: Path) -> None:
    dest = tmp_path / "from-empty"
    error = assert_error(call(CLONE, {"url": str(empty_repo), "dest": str(dest)}), "not_found")
    assert "empty" in error["message"]
    assert not dest.exists()


def test_clone_auth_failed(
    call: Call, git_repo: Repo, smart_http: GitSmartHTTP, tmp_path: Path
) -> None:
    url = http_url(smart_http, git_repo)
    wrong = {"basic": {"username": GIT_USER, "password": WRONG_PASSWORD}}
    outcome = call(CLONE, {"url": url, "credential": wrong, "dest": str(tmp_path / "a")})
    assert assert_error(outcome, "auth_failed")["message"] == REJECTED
    no_secrets(outcome)
    assert_error(call(CLONE, {"url": url, "dest": str(tmp_path / "b")}), "auth_failed")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_clone_rate_limited_timeout_network(
    call: Call, status_server: HTTPServerThread, tmp_path: Path
) -> None:
    dest = str(tmp_path / "x")
    error = assert_error(
        call(CLONE, {"url": status_server.url("/429/demo.git"), "dest": dest}), "rate_limited"
    )
    assert error["retry_after"] == 1.0
    with RawTCPServer("silent") as silent:
        url = f"git://{LOOPBACK}:{silent.port}/demo.git"
        started = time.monotonic()
        assert_error(call(CLONE, {"url": url, "dest": dest, "timeout": 0.8}), "timeout")
        assert time.monotonic() - started < 4
    url = f"http://{LOOPBACK}:{free_port()}/demo.git"
    assert_error(call(CLONE, {"url": url, "dest": dest}), "network_error")
    assert not Path(dest).exists()


# -- credentials: never in argv, logs, outcomes or the clone ----------------------------------


class ProcSpy:
    """Snapshots of every process's argv (and git-remote-http's environment) on demand."""

    def __init__(self) -> None:
        self.argvs: list[bytes] = []
        self.remote_http_env: list[bytes] = []
        self._lock = threading.Lock()

    def snapshot(self) -> None:
        argvs: list[bytes] = []
        envs: list[bytes] = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes()
                if b"remote-http" in argv:
                    envs.append(Path(f"/proc/{pid}/environ").read_bytes())
            except OSError:
                continue  # gone meanwhile
            argvs.append(argv)
        with self._lock:
            self.argvs.extend(argvs)
            self.remote_http_env.extend(envs)


@pytest.fixture
def spied_http(git_repo: Repo) -> Iterator[tuple[GitSmartHTTP, ProcSpy]]:
    spy = ProcSpy()
    with GitSmartHTTP(git_repo.root, GIT_USER, GIT_PASSWORD, on_request=spy.snapshot) as server:
        yield server, spy


def test_credentials_never_in_argv_logs_outcomes_or_clone(
    call: Call,
    git_repo: Repo,
    spied_http: tuple[GitSmartHTTP, ProcSpy],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    server, spy = spied_http
    url = http_url(server, git_repo)
    with_userinfo = url.replace("://", f"://{GIT_USER}:{GIT_PASSWORD}@")
    outcomes = [
        call(LS, {"url": url, "credential": BASIC}),
        call(LS, {"url": with_userinfo}),
        call(LS, {"url": url, "credential": {"bearer": TOKEN}}),
        call(LS, {"url": url, "credential": {"header": {"name": "X-K", "value": HEADER_SECRET}}}),
        call(LS, {"url": url, "credential": {"basic": {"username": GIT_USER,
                                                          "password": WRONG_PASSWORD}}}),
        call(CLONE, {"url": with_userinfo, "dest": str(tmp_path / "clone")}),
    ]  # fmt: skip
    assert [o.ok for o in outcomes] == [True, True, False, False, False, True]
    for outcome in outcomes:
        no_secrets(outcome)
    # The spy saw git's processes mid-request (so the check below means something) ...
    port = str(server.port).encode()
    assert any(b"remote-http" in argv and port in argv for argv in spy.argvs), spy.argvs[:20]
    # ... and no argv anywhere on the machine carried a credential in any form.
    for argv in spy.argvs:
        for secret in SECRETS:
            assert secret.encode() not in argv, argv.replace(b"\0", b" ")
    # The credential travelled in git's environment, as an origin-scoped header.
    assert any(b"GIT_CONFIG_VALUE_0=Authorization: Basic " in env for env in spy.remote_http_env)
    # Nothing logged it; nothing wrote it into the clone.
    for secret in SECRETS:
        assert secret not in caplog.text
    clone = tmp_path / "clone"
    assert (clone / "README.md").exists()
    for path in clone.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(secret.encode() in data for secret in SECRETS), path
    remote = subprocess.run(
        ["git", "-C", str(clone), "remote", "get-url", "origin"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert remote.stdout.strip() == url


def test_tracing_variables_do_not_reach_git(
    call: Call,
    git_repo: Repo,
    smart_http: GitSmartHTTP,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``GIT_TRACE_CURL`` would print the Authorization header to stderr: it is dropped."""
    caplog.set_level(logging.DEBUG)
    for var in ("GIT_TRACE", "GIT_TRACE_CURL", "GIT_CURL_VERBOSE", "GIT_TRACE_PACKET"):
        monkeypatch.setenv(var, "1")
    wrong = {"basic": {"username": GIT_USER, "password": WRONG_PASSWORD}}
    outcome = call(LS, {"url": http_url(smart_http, git_repo), "credential": wrong})
    assert assert_error(outcome, "auth_failed")["message"] == REJECTED
    no_secrets(outcome)
    for secret in SECRETS:
        assert secret not in caplog.text


def test_a_local_remote_outside_the_read_grant_is_not_permitted(call: Call, git_repo: Repo) -> None:
    """With the packs' own defaults (no fs.read grant), a file:// URL or a plain path is
    refused before git runs, the same whether or not a repository is there."""
    from pack_helpers import GRANTS

    from control_plane._kernel.reach import Grants

    GRANTS[0] = Grants()  # the packs' declarations only (tmp_granted gives its own back)
    missing = git_repo.path.parent / "no-such.git"
    for url in (str(git_repo.path), f"file://{git_repo.path}", str(missing)):
        for pack, doc in ((LS, {"url": url}), (CLONE, {"url": url})):
            outcome = call(pack, doc)
            error = assert_error(outcome, "not_permitted")
            assert "outside what this pack may read" in error["message"], error
