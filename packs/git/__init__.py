"""The git packs: ``git.ls_remote`` and a shallow ``git.clone``, on the git CLI.

git's stderr -- OpenSSH banners, curl errors, remote messages -- never reaches a caller:
:data:`control_plane.core.stderr.GIT` maps it to ``auth_failed``, ``not_found``,
``rate_limited``, ``timeout`` or ``network_error`` with a fixed message per rule.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from typing import Any

from control_plane import Context, Pack, hookimpl
from control_plane.errors import PackError, not_found
from control_plane.tools import GIT, rule
from packs.git.cli import git_binary, raise_for, remote, run_git
from packs.git.schemas import (
    CLONE_CODES,
    CLONE_INPUT,
    CLONE_OUTPUT,
    LS_REMOTE_CODES,
    LS_REMOTE_INPUT,
    LS_REMOTE_OUTPUT,
)

__all__ = ["CLONE", "LS_REMOTE", "clone", "ls_remote", "register_packs"]

DEFAULT_TIMEOUT = 120.0
DEFAULT_LIMIT = 1000

_VOCAB_TABLE = """\
| code | retryable | when |
|---|---|---|
| `auth_failed` | no | credentials missing or rejected (HTTP 401/403, ssh publickey, host key) |
| `not_found` | no | no such repository or ref (clone: or the repository is empty) |
| `rate_limited` | yes | the server answered HTTP 429 |
| `timeout` | yes | git ran past `timeout` or the call's deadline; connect timed out |
| `network_error` | yes | DNS failure, refused, reset, TLS failure, HTTP 5xx, not git |
| `dependency_missing` | no | git is not installed; nothing was run |
"""

LS_REMOTE_DOCS = f"""\
Lists the refs of a remote repository (`git ls-remote --symref`): `refs` as
`{{name, sha}}`, `head` (the sha and branch HEAD points at), optionally only `heads`,
`tags` or refs matching `patterns` (none matching is `not_found`). A `credential`
(`bearer`, `basic`, or a custom `header`) for http(s) remotes travels in git's
environment, never in argv; prompts are disabled, so missing credentials fail fast.

{_VOCAB_TABLE}
Full page: docs/packs/git.ls_remote.md.
"""

CLONE_DOCS = f"""\
Clones one branch or tag of a repository with `--depth 1` (or `depth`) into `dest` (an
empty or new directory) or a fresh temporary directory, and returns the `path`, the
checked-out `commit` sha and `branch`. Same credential handling as git.ls_remote; the
credential never lands in argv or in the clone's `.git/config`.

{_VOCAB_TABLE}| `destination_unusable` | no | `dest` is not an empty directory, or not writable |

Full page: docs/packs/git.clone.md.
"""

#: Clone-only rules, tried before the shared git table.
CLONE_RULES = GIT.extend(
    (
        rule(
            "clone_destination",
            "destination_unusable",
            r"already exists and is not an empty directory|could not create work tree dir|"
            r"could not create leading directories|could not create directory",
            "the destination directory cannot be used for the clone",
        ),
    ),
    name="git.clone",
)


def _budget(doc: dict[str, Any], ctx: Context) -> float:
    return min(float(doc.get("timeout", DEFAULT_TIMEOUT)), ctx.remaining(DEFAULT_TIMEOUT))


def ls_remote(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """``git ls-remote --symref`` on ``doc["url"]``."""
    binary = git_binary()
    budget = _budget(doc, ctx)
    rem = remote(str(doc["url"]), doc.get("credential"))
    patterns = [str(p) for p in doc.get("patterns") or []]
    args = ["ls-remote", "--symref"]
    if doc.get("heads"):
        args.append("--heads")
    if doc.get("tags"):
        args.append("--tags")
    if patterns:
        args.append("--exit-code")
    args += ["--", rem.url, *patterns]
    done = run_git(binary, args, rem=rem, timeout=budget)
    if patterns and done.returncode == 2 and not done.stderr.strip():
        raise not_found("no ref of the repository matches the given patterns")
    raise_for(done, credential_sent=rem.header is not None)
    limit = int(doc.get("limit", DEFAULT_LIMIT))
    refs: list[dict[str, str]] = []
    symrefs: dict[str, str] = {}
    head_sha: str | None = None
    total = 0
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        left, _, name = line.partition("\t")
        if not name:
            continue
        if left.startswith("ref: "):
            symrefs[name] = left[5:].strip()
            continue
        if name == "HEAD":
            head_sha = left.strip()
        total += 1
        if len(refs) < limit:
            refs.append({"name": name, "sha": left.strip()})
    head: dict[str, str | None] | None = None
    if head_sha is not None or "HEAD" in symrefs:
        head = {"target": symrefs.get("HEAD")}
        if head_sha is not None:
            head["sha"] = head_sha
    return {
        "url": rem.display,
        "head": head,
        "refs": refs,
        "count": total,
        "truncated": total > len(refs),
    }


def _prepare_dest(dest: str | None) -> tuple[str, bool]:
    """The directory to clone into and whether the pack created it."""
    if not dest:
        return tempfile.mkdtemp(prefix="capability-packs-git-clone-"), True
    path = os.path.abspath(dest)
    if os.path.lexists(path):
        if not os.path.isdir(path):
            raise PackError("destination_unusable", "dest exists and is not a directory")
        if os.listdir(path):
            raise PackError("destination_unusable", "dest is a directory that is not empty")
        return path, False
    return path, True


def _clean(path: str, created: bool) -> None:
    if created:
        shutil.rmtree(path, ignore_errors=True)
        return
    with contextlib.suppress(OSError):
        for entry in os.listdir(path):
            full = os.path.join(path, entry)
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full, ignore_errors=True)
            else:
                os.unlink(full)


def clone(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """A shallow ``git clone`` of ``doc["url"]``; the path and the checked-out commit."""
    binary = git_binary()
    budget = _budget(doc, ctx)
    deadline = time.monotonic() + budget
    rem = remote(str(doc["url"]), doc.get("credential"))
    depth = int(doc.get("depth", 1))
    ref = doc.get("ref")
    path, created = _prepare_dest(doc.get("dest"))
    args = ["-c", "advice.detachedHead=false", "clone", "--quiet", "--no-local"]
    args += ["--depth", str(depth)]
    if ref:
        args += ["--branch", str(ref)]
    args += ["--", rem.url, path]
    try:
        done = run_git(binary, args, rem=rem, timeout=budget)
        raise_for(done, CLONE_RULES, credential_sent=rem.header is not None)
        commit, branch = _checked_out(binary, path, max(0.1, deadline - time.monotonic()))
    except BaseException:
        _clean(path, created)
        raise
    return {
        "url": rem.display,
        "path": path,
        "commit": commit,
        "branch": branch,
        "ref": str(ref) if ref else None,
        "depth": depth,
    }


def _checked_out(binary: str, path: str, budget: float) -> tuple[str, str | None]:
    """The commit sha and branch (``None`` when detached) of the fresh clone at ``path``."""
    head = run_git(
        binary, ["rev-parse", "--verify", "-q", "HEAD"], rem=None, timeout=budget, cwd=path
    )
    if not head.ok and not head.stderr.strip():
        # git clones an empty repository "successfully"; there is nothing to check out.
        raise not_found("the repository is empty: there is no commit to check out")
    raise_for(head)
    branch = run_git(
        binary, ["symbolic-ref", "-q", "--short", "HEAD"], rem=None, timeout=budget, cwd=path
    )
    name = branch.stdout.decode("utf-8", "replace").strip() if branch.ok else ""
    return head.stdout.decode("ascii", "replace").strip(), name or None


LS_REMOTE = Pack(
    name="git.ls_remote",
    version="1.0.0",
    summary="List the refs of a git remote; git/ssh stderr becomes a closed set of codes.",
    input_schema=LS_REMOTE_INPUT,
    output_schema=LS_REMOTE_OUTPUT,
    handler=ls_remote,
    codes=LS_REMOTE_CODES,
    docs=LS_REMOTE_DOCS,
)

CLONE = Pack(
    name="git.clone",
    version="1.0.0",
    summary="Shallow-clone a git repository (depth 1) and return its path and commit sha.",
    input_schema=CLONE_INPUT,
    output_schema=CLONE_OUTPUT,
    handler=clone,
    codes=CLONE_CODES,
    docs=CLONE_DOCS,
)


@hookimpl
def register_packs(register: Callable[[Pack], None]) -> None:
    """Register ``git.ls_remote`` and ``git.clone``."""
    register(LS_REMOTE)
    register(CLONE)
