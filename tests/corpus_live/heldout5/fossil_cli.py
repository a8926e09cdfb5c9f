"""The Fossil SCM CLI (Debian's fossil 2.21) run as a pack runs it against a real ``fossil
server`` (the same binary) on 127.0.0.1 serving a directory of repositories: clones with
wrong or missing credentials, of a repository the server lacks, into a path that exists or
cannot be created; and local commands on a clone (a missing or corrupt repository file, an
unknown version, a branch that exists). The failure is the exit status and Fossil's message
(``Error: login failed``, ``server says: 404 Not Found``...) on its output.

(Fossil's ``push``/``pull``/``sync`` print the server's refusal but exit 0, so a pack cannot
see them fail: the cases use ``clone`` and local commands, which exit 1.)"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Served,
    daemon,
    fake_http,
    family,
    free_port,
    require,
    served,
)


@dataclass
class FossilServer:
    port: int  # repository "proj": admin / admin-pw, viewer / viewer-pw; anonymous may nothing
    clone: Path  # a local clone of proj, with a check-out of trunk beside it
    checkout: Path
    not_repo: Path  # a file named like a repository that is no SQLite database
    page_url: str  # a plain web page that is no Fossil server
    env: dict[str, str]

    def url(self, name: str = "proj", user: str = "admin", password: str = "admin-pw") -> str:
        cred = f"{user}:{password}@" if user else ""
        return f"http://{cred}{LOOPBACK}:{self.port}/{name}"


def _fossil(env: dict[str, str], *args: str, cwd: Path | None = None) -> None:
    subprocess.run(["fossil", *args], check=True, capture_output=True, env=env, cwd=cwd, timeout=30)


def _fossil_server(stack: contextlib.ExitStack, work: Path) -> FossilServer:
    require("fossil")
    home = work / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), USER="corpus", FOSSIL_HOME=str(home))
    served_dir = work / "srv"
    served_dir.mkdir()
    repo = served_dir / "proj.fossil"
    _fossil(env, "new", "--admin-user", "admin", str(repo))
    for args in (
        ("user", "password", "admin", "admin-pw"),
        ("user", "new", "viewer", "viewer@example.invalid", "viewer-pw"),
        ("user", "capabilities", "viewer", "go"),
        ("user", "capabilities", "nobody", ""),
        ("user", "capabilities", "anonymous", ""),
        # no backoffice: it would fork a detached process that outlives the server
        ("settings", "backoffice-disable", "1"),
    ):
        _fossil(env, *args, "-R", str(repo))
    port = free_port()
    daemon(
        stack,
        ["fossil", "server", "--localhost", "--nojail", "--port", str(port), str(served_dir)],
        port,
        log=work / "fossil-server.log",
        env=env,
    )
    srv = FossilServer(port, work / "proj.fossil", work / "ckout", work / "notes.fossil", "", env)
    _fossil(env, "clone", srv.url(), str(srv.clone))
    srv.checkout.mkdir()
    _fossil(env, "settings", "autosync", "off", "-R", str(srv.clone))
    _fossil(env, "open", "--nosync", str(srv.clone), cwd=srv.checkout)
    srv.not_repo.write_bytes(b"meeting notes, not a repository\n" * 64)
    page = fake_http(stack)
    page.set(200, "<html><body>Welcome to our wiki</body></html>", content_type="text/html")
    srv.page_url = page.url + "/wiki"
    return srv


Ctx = Served[FossilServer]

FAM = family(
    "fossil",
    "the fossil CLI against fossil server (Debian fossil 2.21), real",
    served(_fossil_server),
    half="heldout5",
)


def _run(c: Ctx, *args: str, cwd: Path | None = None, timeout: float = 15.0) -> None:
    subprocess.run(
        ["fossil", *args],
        capture_output=True,
        check=True,
        timeout=timeout,
        env=c.server.env,
        cwd=cwd,
    )


def _clone(url: Any, *, timeout: float = 15.0) -> Any:
    def run(c: Ctx) -> None:
        with tempfile.TemporaryDirectory(prefix="corpus44-fossil-") as tmp:
            _run(c, "clone", url(c), str(Path(tmp) / "new.fossil"), timeout=timeout)

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "Error: login failed (bad password) on stdout; stderr: server returned an error - clone aborted",
    _clone(lambda c: c.server.url(password="nope")),
)
FAM.add(
    "anonymous_denied",
    AUTH,
    "Error: not authorized to clone on stdout (no credentials; anonymous may nothing); stderr: clone aborted",
    _clone(lambda c: c.server.url(user="")),
)
FAM.add(
    "unknown_repo",
    NF,
    "server says: 404 Not Found (no repository 'archive' served)",
    _clone(lambda c: c.server.url("archive")),
)
FAM.add(
    "dest_exists",
    EXISTS,
    "file already exists: the clone's target",
    lambda c: _run(c, "clone", c.server.url(), str(c.server.clone)),
)
FAM.add(
    "dest_dir_missing",
    NF | INT,
    "SQLITE_CANTOPEN: unable to open database file (the target's directory does not exist)",
    lambda c: _run(c, "clone", c.server.url(), str(c.server.clone.parent / "no" / "x.fossil")),
)
FAM.add(
    "not_fossil",
    NF | INT,
    "the URL answers a plain web page: server sends error, clone aborted",
    _clone(lambda c: c.server.page_url),
)
FAM.add(
    "repo_missing",
    NF,
    "repository does not exist or is in an unreadable directory (-R)",
    lambda c: _run(c, "timeline", "-R", str(c.server.clone.parent / "old.fossil")),
)
FAM.add(
    "not_a_repo",
    INT,
    "not a valid repository: the -R file is no Fossil (SQLite) database",
    lambda c: _run(c, "timeline", "-R", str(c.server.not_repo)),
)
FAM.add(
    "unknown_version",
    NF,
    "cannot resolve name: release-9 (fossil update in the check-out)",
    lambda c: _run(c, "update", "release-9", cwd=c.server.checkout),
)
FAM.add(
    "no_such_file",
    NF,
    "no such file: docs/setup.md (fossil cat)",
    lambda c: _run(c, "cat", "docs/setup.md", "-R", str(c.server.clone)),
)
FAM.add(
    "branch_exists",
    EXISTS,
    'an open branch named "trunk" already exists',
    lambda c: _run(c, "branch", "new", "trunk", "trunk", "-R", str(c.server.clone)),
)
FAM.add(
    "unknown_command",
    INT,
    "fossil: unknown command: checkout-all (the pack's own argv)",
    lambda c: _run(c, "checkout-all"),
)
FAM.add(
    "refused",
    NET,
    "cannot connect to host (nothing listens)",
    _clone(lambda c: f"http://{LOOPBACK}:{c.net.closed}/proj"),
)
FAM.add(
    "dns",
    NET,
    "getaddrinfo() fails: Name or service not known (.invalid)",
    _clone(lambda c: f"http://{UNRESOLVABLE}/proj"),
)
FAM.add(
    "silent",
    TO,
    "the server never answers: the pack's 1.5 s deadline on the subprocess expires",
    _clone(lambda c: f"http://{LOOPBACK}:{c.net.silent}/proj", timeout=1.5),
)
FAM.add(
    "dropped",
    NET,
    "the server closes at once: server did not reply",
    _clone(lambda c: f"http://{LOOPBACK}:{c.net.close_now}/proj"),
)
