"""The git packs: ``git.ls_remote`` and a shallow ``git.clone``, on the git CLI."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from control_plane import Context, Pack, Reach, hookimpl
from control_plane.errors import not_found
from control_plane.tools import GIT, rule
from packs.git.cli import git_binary, raise_for, remote, run_git
from packs.git.egress import DECLARED_EGRESS
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
| `not_permitted` | no | outside the grant: a host, a local remote, a URL secret, a `dest` |
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


class _RefReader:
    """``git ls-remote`` output read as it comes: at most ``limit`` refs kept, and git
    stopped once one more shows that the list is cut (bounded memory for any remote)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.refs: list[dict[str, str]] = []
        self.symrefs: dict[str, str] = {}
        self.head_sha: str | None = None
        self.total = 0
        self._partial = b""

    def feed(self, chunk: bytes) -> bool:
        """Take a chunk of stdout; False once more refs than ``limit`` were seen."""
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        if len(self._partial) > _MAX_LINE:
            self._partial = b""  # no ref line is that long: not git's output
        for line in lines:
            self._line(line.decode("utf-8", "replace"))
            if self.total > self.limit:
                return False
        return True

    def finish(self) -> None:
        if self._partial:
            self._line(self._partial.decode("utf-8", "replace"))
            self._partial = b""

    def _line(self, line: str) -> None:
        left, _, name = line.partition("\t")
        if not name:
            return
        if left.startswith("ref: "):
            if len(self.symrefs) < _MAX_SYMREFS:
                self.symrefs[name] = left[5:].strip()
            return
        if name == "HEAD":
            self.head_sha = left.strip()
        self.total += 1
        if len(self.refs) < self.limit:
            self.refs.append({"name": name, "sha": left.strip()})


#: Longest line of ``git ls-remote`` output kept; most symbolic refs kept.
_MAX_LINE = 16384
_MAX_SYMREFS = 64


def ls_remote(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """``git ls-remote --symref`` on ``doc["url"]``, read only up to ``limit`` refs."""
    binary = git_binary()
    budget = _budget(doc, ctx)
    rem = remote(str(doc["url"]), doc.get("credential"), ctx.reach, budget)
    patterns = [str(p) for p in doc.get("patterns") or []]
    args = ["ls-remote", "--symref"]
    if doc.get("heads"):
        args.append("--heads")
    if doc.get("tags"):
        args.append("--tags")
    if patterns:
        args.append("--exit-code")
    args += ["--", rem.url, *patterns]
    reader = _RefReader(int(doc.get("limit", DEFAULT_LIMIT)))
    done, stopped = run_git(binary, args, rem=rem, timeout=budget, ctx=ctx, on_stdout=reader.feed)
    if not stopped:
        if patterns and done.returncode == 2 and not done.stderr.strip():
            raise not_found("no ref of the repository matches the given patterns")
        raise_for(done, credential_sent=rem.header is not None)
        reader.finish()
    head: dict[str, str | None] | None = None
    if reader.head_sha is not None or "HEAD" in reader.symrefs:
        head = {"target": reader.symrefs.get("HEAD")}
        if reader.head_sha is not None:
            head["sha"] = reader.head_sha
    return {
        "url": rem.display,
        "head": head,
        "refs": reader.refs,
        "count": reader.total,
        "truncated": reader.total > len(reader.refs),
    }


def clone(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """A shallow ``git clone`` of ``doc["url"]``; the path and the checked-out commit.

    git writes only into a directory this call made (``ctx.reach.destination``): with
    ``dest``, a work directory beside it, renamed onto ``dest`` when the clone is whole;
    without, a scratch directory. A failed or timed-out clone removes that directory and
    nothing else.
    """
    binary = git_binary()
    budget = _budget(doc, ctx)
    deadline = time.monotonic() + budget
    rem = remote(str(doc["url"]), doc.get("credential"), ctx.reach, budget)
    depth = int(doc.get("depth", 1))
    ref = doc.get("ref")
    dest = doc.get("dest")
    target = ctx.reach.destination(str(dest) if dest else None)
    args = ["-c", "advice.detachedHead=false", "clone", "--quiet", "--no-local"]
    args += ["--depth", str(depth)]
    if ref:
        args += ["--branch", str(ref)]
    args += ["--", rem.url, target.work]
    try:
        done, _ = run_git(binary, args, rem=rem, timeout=budget, ctx=ctx)
        raise_for(done, CLONE_RULES, credential_sent=rem.header is not None)
        left = max(0.1, deadline - time.monotonic())
        commit, branch = _checked_out(binary, target.work, left, ctx)
        path = target.commit()
    except BaseException:
        target.discard()
        raise
    return {
        "url": rem.display,
        "path": path,
        "commit": commit,
        "branch": branch,
        "ref": str(ref) if ref else None,
        "depth": depth,
    }


def _checked_out(binary: str, path: str, budget: float, ctx: Context) -> tuple[str, str | None]:
    """The commit sha and branch (``None`` when detached) of the fresh clone at ``path``."""
    head, _ = run_git(
        binary, ["rev-parse", "--verify", "-q", "HEAD"], rem=None, timeout=budget, ctx=ctx, cwd=path
    )
    if not head.ok and not head.stderr.strip():
        # git clones an empty repository "successfully"; there is nothing to check out.
        raise not_found("the repository is empty: there is no commit to check out")
    raise_for(head)
    branch, _ = run_git(
        binary,
        ["symbolic-ref", "-q", "--short", "HEAD"],
        rem=None,
        timeout=budget,
        ctx=ctx,
        cwd=path,
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
    # Network only; a file:// or local remote needs an operator's fs.read grant.
    reach=Reach(egress=DECLARED_EGRESS, programs=("git",)),
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
    # dest only inside the server's scratch directory unless the operator grants fs.write.
    reach=Reach(writes=("$SCRATCH",), egress=DECLARED_EGRESS, programs=("git",)),
)


@hookimpl
def register_packs(register: Callable[[Pack], None]) -> None:
    """Register ``git.ls_remote`` and ``git.clone``."""
    register(LS_REMOTE)
    register(CLONE)
