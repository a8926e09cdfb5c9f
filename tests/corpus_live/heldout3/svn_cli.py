"""Subversion's ``svn`` CLI against a real ``svnserve`` (Debian's ``subversion``): each
failure is the tool's exit status and its ``svn: E…`` stderr lines (Subversion's numbered
error codes, often a summary line after the real cause)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Served,
    cli,
    family,
    served,
)
from corpus_live.heldout3._daemons import Svnserve, svnserve

FAM = family("svn", "svnserve 1.14 (Debian), real", served(svnserve), half="heldout3")

_BASE = ["svn", "--non-interactive", "--no-auth-cache", "--config-dir"]


def _svn(
    c: Served[Svnserve], *args: str, user: str | None = "app", pw: str = "", timeout: float = 20
) -> None:
    creds = ["--username", user, "--password", pw or f"{user}-pw"] if user else []
    cli([*_BASE, str(c.server.config), *creds, *args], timeout=timeout)


def case(id: str, expect: frozenset[str], why: str) -> Any:
    return FAM.case(id, expect, why)


@case("wrong_password", AUTH, "E170001: the password is wrong")
def _wrong_password(c: Served[Svnserve]) -> None:
    _svn(c, "ls", c.server.url("/trunk"), pw="wrong-pw")


@case("unknown_user", AUTH, "E170001: no such user in the password database")
def _unknown_user(c: Served[Svnserve]) -> None:
    _svn(c, "ls", c.server.url("/trunk"), user="mallory", pw="x")


@case("anonymous", AUTH, "anonymous access is off and no credentials were given")
def _anonymous(c: Served[Svnserve]) -> None:
    _svn(c, "ls", c.server.url("/trunk"), user=None)


@case("read_only_commit", AUTH, "E170001 authorization failed: reader may not commit")
def _read_only(c: Served[Svnserve]) -> None:
    _svn(c, "mkdir", "-m", "new", c.server.url("/trunk/new"), user="reader")


@case("authz_denied_path", AUTH, "reader has no access to /secret")
def _authz_path(c: Served[Svnserve]) -> None:
    _svn(c, "cat", c.server.url("/secret/key.txt"), user="reader")


@case("file_not_found", NF, "W160013 path not found, then the E200009 summary")
def _cat_missing(c: Served[Svnserve]) -> None:
    _svn(c, "cat", c.server.url("/trunk/nope.txt"))


@case("no_repository", NF, "E210005: no repository at that URL")
def _no_repo(c: Served[Svnserve]) -> None:
    _svn(c, "ls", c.server.url("", repo="norepo"))


@case("no_such_revision", NF, "E160006: the revision does not exist")
def _no_rev(c: Served[Svnserve]) -> None:
    _svn(c, "cat", "-r", "999", c.server.url("/trunk/a.txt"))


@case("delete_missing", NF, "E160013: delete of a path that does not exist")
def _rm_missing(c: Served[Svnserve]) -> None:
    _svn(c, "rm", "-m", "rm", c.server.url("/trunk/ghost.txt"))


@case("mkdir_exists", EXISTS, "E160020: the directory already exists")
def _mkdir_exists(c: Served[Svnserve]) -> None:
    _svn(c, "mkdir", "-m", "again", c.server.url("/trunk"))


@case("hook_rejects", INT, "E165001: the pre-commit hook refused the commit (a policy)")
def _hook(c: Served[Svnserve]) -> None:
    _svn(c, "mkdir", "-m", "WIP: not yet", c.server.url("/trunk/wip"))


@case("refused", NET, "E170013 unable to connect, E000111 connection refused")
def _refused(c: Served[Svnserve]) -> None:
    cli([*_BASE, str(c.server.config), "ls", f"svn://127.0.0.1:{c.net.closed}/repo"])


@case("dns", NET, "E670002: unknown hostname")
def _dns(c: Served[Svnserve]) -> None:
    cli([*_BASE, str(c.server.config), "ls", f"svn://{UNRESOLVABLE}/repo"])


@case("silent", TO, "the server never greets: svn waits until the pack's deadline")
def _silent(c: Served[Svnserve]) -> None:
    cli([*_BASE, str(c.server.config), "ls", f"svn://127.0.0.1:{c.net.silent}/repo"], timeout=3)


@case("dropped", NET, "E210002: the connection closed unexpectedly")
def _dropped(c: Served[Svnserve]) -> None:
    cli([*_BASE, str(c.server.config), "ls", f"svn://127.0.0.1:{c.net.close_now}/repo"])
