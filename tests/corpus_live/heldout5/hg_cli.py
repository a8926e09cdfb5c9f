"""Mercurial's ``hg`` CLI (Debian's mercurial 6.3) run as a pack runs it (``HGPLAIN``, no user
config, non-interactive) against a real ``hg serve --web-conf`` (hgweb, the same package) on
127.0.0.1 publishing several repositories, each with its own ``[web]`` policy; a few cases
are local (a missing repository, a destination that is not empty). The failure is the exit
status and ``abort: ...`` (``remote: ...``) on stderr."""

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
class HgServe:
    port: int
    work: Path  # a clone of "repo" with a commit the server lacks, diverging from its head
    page_url: str  # a plain web page that is no Mercurial repository
    env: dict[str, str]

    def url(self, name: str) -> str:
        return f"http://{LOOPBACK}:{self.port}/{name}"


#: each published repository's [web] policy (hgweb reads the repository's .hg/hgrc)
_POLICIES = {
    "repo": "allow-push = *\npush_ssl = false\n",
    "private": "deny_read = *\n",
    "readonly": "push_ssl = false\n",
    "sslonly": "allow-push = *\n",
    "hooked": "allow-push = *\npush_ssl = false\n"
    "[hooks]\npretxnchangegroup.policy = echo 'commit message must name a ticket' >&2; false\n",
}


def _env(work: Path) -> dict[str, str]:
    rc = work / "hgrc"
    rc.write_text("[ui]\nusername = corpus <corpus@example.invalid>\ninteractive = false\n")
    return dict(os.environ, HGPLAIN="1", HGRCPATH=str(rc), HGENCODING="utf-8")


def _run(env: dict[str, str], *args: str, cwd: Path | None = None) -> None:
    subprocess.run(["hg", *args], check=True, capture_output=True, env=env, cwd=cwd, timeout=30)


def _hg_serve(stack: contextlib.ExitStack, work: Path) -> HgServe:
    require("hg")
    env = _env(work)
    published = work / "published"
    for name, policy in _POLICIES.items():
        repo = published / name
        _run(env, "init", str(repo))
        (repo / "README").write_text(f"{name}\n")
        _run(env, "-R", str(repo), "commit", "-A", "-m", "first")
        _run(env, "-R", str(repo), "bookmark", "main")
        (repo / ".hg" / "hgrc").write_text("[web]\n" + policy)
    clone = work / "clone"
    _run(env, "clone", str(published / "repo"), str(clone))
    # the server's repo moves on; the clone commits on the old head: its push makes a new head
    (published / "repo" / "README").write_text("server side\n")
    _run(env, "-R", str(published / "repo"), "commit", "-m", "upstream")
    (clone / "README").write_text("client side\n")
    _run(env, "-R", str(clone), "commit", "-m", "local work")
    conf = work / "hgweb.conf"
    conf.write_text(
        "[paths]\n" + "".join(f"{n} = {published / n}\n" for n in _POLICIES) + "[web]\n"
    )
    port = free_port()
    daemon(
        stack,
        ["hg", "serve", "--web-conf", str(conf), "-a", LOOPBACK, "-p", str(port)],
        port,
        log=work / "hg-serve.log",
        env=env,
    )
    page = fake_http(stack)
    page.set(200, "<html><body>Welcome to our wiki</body></html>", content_type="text/html")
    return HgServe(port, clone, page.url + "/wiki", env)


Ctx = Served[HgServe]

FAM = family(
    "hg",
    "the hg CLI against hg serve (hgweb, Debian mercurial 6.3), real",
    served(_hg_serve),
    half="heldout5",
)


def _hg(c: Ctx, *args: str, timeout: float = 15.0) -> None:
    argv = ["hg", "--config", "http.timeout=1", *args]
    subprocess.run(argv, capture_output=True, check=True, timeout=timeout, env=c.server.env)


def _clone(url: Any, *extra: str) -> Any:
    def run(c: Ctx) -> None:
        with tempfile.TemporaryDirectory(prefix="corpus44-hg-") as tmp:
            _hg(c, "clone", "--noupdate", *extra, url(c), str(Path(tmp) / "dest"))

    return run


def _push(name: str) -> Any:
    return lambda c: _hg(c, "-R", str(c.server.work), "push", "-f", c.server.url(name))


def _dest_not_empty(c: Ctx) -> None:
    with tempfile.TemporaryDirectory(prefix="corpus44-hg-") as tmp:
        (Path(tmp) / "notes.txt").write_text("someone's files\n")
        _hg(c, "clone", c.server.url("repo"), tmp)


FAM.add(
    "unknown_repo",
    NF,
    "HTTP Error 404: no repository 'archive' on the server",
    _clone(lambda c: c.server.url("archive")),
)
FAM.add(
    "read_denied",
    AUTH,
    "HTTP 401 read not authorized (deny_read): abort: authorization failed",
    _clone(lambda c: c.server.url("private")),
)
FAM.add(
    "push_denied",
    AUTH,
    "HTTP 401 push not authorized (allow-push unset): abort: authorization failed",
    _push("readonly"),
)
FAM.add(
    "ssl_required",
    AUTH | INT,
    "HTTP Error 403: ssl required (push_ssl: pushing over plain http refused)",
    _push("sslonly"),
)
FAM.add(
    "new_head",
    INT,
    "push creates new remote head (the server moved on: pull and merge first)",
    lambda c: _hg(c, "-R", str(c.server.work), "push", c.server.url("repo")),
)
FAM.add(
    "hook_rejected",
    INT,
    "remote: pretxnchangegroup.policy hook exited with status 1 (a server-side policy refuses the push)",
    _push("hooked"),
)
FAM.add(
    "unknown_revision",
    NF,
    "unknown revision 'release-9' on the remote",
    _clone(lambda c: c.server.url("repo"), "-r", "release-9"),
)
FAM.add(
    "unknown_bookmark",
    NF,
    "remote bookmark stable not found",
    lambda c: _hg(c, "-R", str(c.server.work), "pull", "-B", "stable", c.server.url("repo")),
)
FAM.add(
    "dest_not_empty",
    EXISTS,
    "destination is not empty (clone into a used directory)",
    _dest_not_empty,
)
FAM.add(
    "local_missing",
    NF,
    "repository /srv/none/proj not found (hg -R on a missing path)",
    lambda c: _hg(c, "-R", "/srv/none/proj", "log"),
)
FAM.add(
    "bad_option",
    INT,
    "hg clone: option --depth not recognized (the pack's own argv)",
    _clone(lambda c: c.server.url("repo"), "--depth", "1"),
)
FAM.add(
    "not_a_repo",
    NF | INT,
    "the URL answers a plain web page: does not appear to be an hg repository",
    _clone(lambda c: c.server.page_url),
)
FAM.add(
    "refused",
    NET,
    "error: Connection refused (nothing listens)",
    _clone(lambda c: f"http://{LOOPBACK}:{c.net.closed}/repo"),
)
FAM.add(
    "dns",
    NET,
    "error: Name or service not known (.invalid)",
    _clone(lambda c: f"http://{UNRESOLVABLE}/repo"),
)
FAM.add(
    "silent",
    TO,
    "the server never answers: error: timed out (http.timeout 1)",
    _clone(lambda c: f"http://{LOOPBACK}:{c.net.silent}/repo"),
)
FAM.add(
    "dropped",
    NET,
    "the server closes at once: bad HTTP status line ''",
    _clone(lambda c: f"http://{LOOPBACK}:{c.net.close_now}/repo"),
)
