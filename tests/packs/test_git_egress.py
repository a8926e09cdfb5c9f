"""git.ls_remote / git.clone egress: the remote's host is checked against the pack's grant
before git runs, and git is pinned to the checked address.

Against a real ``packctl serve`` with the packs' defaults (public addresses only) and with
``--grant``; remotes are real (smart HTTP over ``git http-backend``, ``git daemon``) on
127.0.0.1. Addresses beyond loopback are never contacted: their refusal is shown to come
before git starts (a wrapper in place of git records every start), and names that are not
in DNS (``.invalid``) reach loopback only through the pack's resolver table, which proves
git connected to the checked address and did not resolve the name again.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pack_helpers import GIT_PASSWORD, GIT_USER, Call, assert_error, make_call
from pack_servers import HTTPServerThread, QuietHandler, Repo, free_port
from raw_wire import Serve, serve_env

import packs.git as git_pack
import packs.git.egress as git_egress
from control_plane._features.grpc.call_errors import PackCallError
from control_plane._features.grpc.client import Client

LS = "git.ls_remote"
CLONE = "git.clone"
BASIC = {"basic": {"username": GIT_USER, "password": GIT_PASSWORD}}
PLUGINS = "hostilepacks,packs.git"
#: Literal addresses beyond loopback a caller may name; none is ever connected to.
BEYOND = (
    "169.254.169.254",  # cloud metadata
    "[fd00:ec2::254]",  # AWS metadata over IPv6
    "100.100.100.200",  # Alibaba metadata
    "10.0.0.7",  # private
    "[::ffff:169.254.169.254]",  # metadata under an IPv4-mapped IPv6 spelling
)

pytestmark = pytest.mark.system  # git, git daemon and git http-backend


@pytest.fixture
def git_starts(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str], tuple[str, ...]]]:
    """A git wrapper that appends each start to a log, then runs the real git; the log,
    the environment that makes the packs use it, and the grants that let it write the log
    (git runs confined to its pack's grant: docs/grants.md)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "git-starts.log"
    wrapper = tmp_path / "git-wrapper"
    real = os.popen("command -v git").read().strip()
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    grants = ("--grant", f"{LS}:fs.write={logs}", "--grant", f"{CLONE}:fs.write={logs}")
    yield log, {"CAPABILITY_PACKS_GIT": str(wrapper)}, grants


def starts(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


class _Started:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.running: list[tuple[Serve, Client]] = []

    def __call__(self, *args: str, **env: str) -> Client:
        db = self.tmp_path / f"incidents-{len(self.running)}.db"
        env.setdefault("CAPABILITY_PACKS_PLUGINS", PLUGINS)
        server = Serve(db, *args, env=serve_env(db, **env))
        client = Client(server.target, timeout=60)
        self.running.append((server, client))
        return client


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[_Started]:
    """``serve(*args, **env)``: a client to a real ``packctl serve`` with those options."""
    started = _Started(tmp_path)
    yield started
    for server, client in started.running:
        client.close()
        server.stop()


def refused(client: Client, pack: str, doc: dict[str, Any]) -> str:
    with pytest.raises(PackCallError) as caught:
        client.invoke(pack, doc)
    envelope = caught.value.envelope
    assert envelope.code == "not_permitted", envelope
    assert envelope.retryable is False
    return envelope.message


def test_loopback_remotes_need_a_grant(
    serve: _Started, git_repo: Repo, smart_http: Any, daemon_port: int, git_starts: Any
) -> None:
    """By default (public only) git over http and git:// to loopback is refused before git
    runs; ``--grant git.ls_remote:egress=loopback`` opens exactly that."""
    log, env, logging = git_starts
    http = {"url": smart_http.url("/" + git_repo.name), "credential": BASIC}
    daemon = {"url": f"git://127.0.0.1:{daemon_port}/{git_repo.name}"}
    default = serve(*logging, **env)
    for doc in (http, daemon, {**daemon, "url": daemon["url"].replace("127.0.0.1", "localhost")}):
        assert "loopback" in refused(default, LS, doc)
        assert "loopback" in refused(default, CLONE, doc)
    assert starts(log) == []  # git never started
    granted = serve(*logging, "--grant", f"{LS}:egress=loopback", **env)
    for doc in (http, daemon):
        done = granted.invoke(LS, doc)
        assert done.result is not None
        assert {r["name"] for r in done.result["refs"]} >= {"refs/heads/main", "refs/tags/v1.0"}
    refused(granted, CLONE, daemon)  # the grant was git.ls_remote's only
    assert len(starts(log)) == 2  # the two granted calls, nothing for the refused ones


def test_addresses_beyond_loopback_are_refused_before_git_runs(
    serve: _Started, git_starts: Any
) -> None:
    """Metadata, private and mapped spellings, over every transport, even with loopback
    and public granted: ``not_permitted`` at once, git never started, nothing sent."""
    log, env, logging = git_starts
    client = serve(*logging, "--grant", f"{LS}:egress=public,loopback", **env)
    started = time.monotonic()
    for host in BEYOND:
        for url in (
            f"http://{host}/latest/meta-data/repo.git",
            f"https://{host}/x.git",
            f"git://{host}/x.git",
            f"ssh://git@{host}/x.git",
        ):
            message = refused(client, LS, {"url": url})
            assert "not granted" in message, message
        if not host.startswith("["):
            refused(client, LS, {"url": f"git@{host}:group/x.git"})  # scp-like ssh
    assert time.monotonic() - started < 20  # no connect attempt waited on anything
    assert starts(log) == []


# -- the pin: git connects to the checked address, not to a second DNS answer -----------------


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """The packs' resolver as a table (``.invalid`` names, so no lookup leaves the host)."""
    table: dict[str, list[str]] = {}

    def resolve(host: str, port: int) -> list[Any]:
        if host not in table:
            raise OSError(f"{host} is not in the test's table")
        return [ipaddress.ip_address(a) for a in table[host]]

    monkeypatch.setattr(git_egress, "RESOLVER", resolve)
    return table


@pytest.fixture
def call() -> Iterator[Call]:
    invoker, call_ = make_call(git_pack)
    yield call_
    invoker.close()


def test_git_connects_to_the_checked_address(
    call: Call,
    resolver: dict[str, list[str]],
    git_repo: Repo,
    smart_http: Any,
) -> None:
    """``repo.invalid`` is in no DNS: git reaching the loopback server by that name over
    http (and ssh reaching a loopback port) shows it used the pinned address."""
    if shutil.which("ssh") is None:
        pytest.skip("no ssh client")
    resolver["repo.invalid"] = ["127.0.0.1"]
    port = smart_http.url("/").split(":")[2].split("/")[0]
    http = f"http://repo.invalid:{port}/{git_repo.name}"
    outcome = call(LS, {"url": http, "credential": BASIC})
    assert outcome.ok, outcome.to_dict()
    # ssh: HostName pinned to 127.0.0.1, a port nothing listens on -> refused, not unresolved
    ssh = f"ssh://git@repo.invalid:{free_port()}/x.git"
    error = assert_error(call(LS, {"url": ssh, "timeout": 10}), "network_error")
    assert "refused" in error["message"], error
    # A name the check resolves to metadata is refused whatever it would resolve to later.
    resolver["imds.invalid"] = ["169.254.169.254"]
    error = assert_error(call(LS, {"url": "http://imds.invalid/x.git"}), "not_permitted")
    assert "metadata" in error["message"] and "169.254" not in error["message"]


class Redirect(QuietHandler):
    """Every request is redirected to ``target`` (another loopback port)."""

    target = ""

    def do_GET(self) -> None:
        self.send_response(302)
        self.send_header("Location", self.target + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()


class Counting(QuietHandler):
    """Records every request, answers 404."""

    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_git_follows_no_redirect(call: Call, git_repo: Repo) -> None:
    """A granted remote that redirects to another host: git does not follow (that host was
    never checked, nor pinned), so the other server sees no request. On main git followed
    the initial request's redirect."""
    hits: list[str] = []
    counting: type[QuietHandler] = type("Bound", (Counting,), {"hits": hits})
    with HTTPServerThread(counting) as other:
        target = other.url("").rstrip("/")
        handler: type[QuietHandler] = type("Bound", (Redirect,), {"target": target})
        with HTTPServerThread(handler) as redirector:
            outcome = call(LS, {"url": redirector.url("/" + git_repo.name), "timeout": 10})
    assert not outcome.ok
    assert hits == []
