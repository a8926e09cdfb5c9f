"""Real servers of the third held-out half, started on 127.0.0.1 in a scratch directory and
stopped by the stack (Debian's packages, ``scripts/setup`` installs them)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from corpus_live.core import LOOPBACK, daemon, free_port, require

# -- ZooKeeper ----------------------------------------------------------------------------


@dataclass
class ZooKeeper:
    port: int

    @property
    def hosts(self) -> str:
        return f"{LOOPBACK}:{self.port}"


def zookeeper(stack: contextlib.ExitStack, work: Path) -> ZooKeeper:
    require("java")
    jar = Path("/usr/share/java/zookeeper.jar")
    if not jar.exists():
        raise RuntimeError("zookeeper is not installed (scripts/setup, CP_APT_DEV)")
    port = free_port()
    data = work / "zk-data"
    data.mkdir()
    cfg = work / "zoo.cfg"
    cfg.write_text(
        "tickTime=500\n"
        f"dataDir={data}\n"
        f"clientPort={port}\n"
        f"clientPortAddress={LOOPBACK}\n"
        "admin.enableServer=false\n"
        "4lw.commands.whitelist=\n"
    )
    daemon(
        stack,
        [
            "java",
            "-Xmx128m",
            "-cp",
            str(jar),
            "org.apache.zookeeper.server.ZooKeeperServerMain",
            str(cfg),
        ],
        port,
        log=work / "zookeeper.log",
        timeout=60,
    )
    return ZooKeeper(port)


# -- Subversion's svnserve ----------------------------------------------------------------


@dataclass
class Svnserve:
    port: int  # repository "repo": users app (rw), reader (r); /secret only app; anon none
    config: Path  # an empty --config-dir for the client (no cached credentials)

    def url(self, path: str = "", repo: str = "repo") -> str:
        return f"svn://{LOOPBACK}:{self.port}/{repo}{path}"


_SVN_CONF = """[general]
anon-access = none
auth-access = write
password-db = passwd
authz-db = authz
realm = corpus
"""

_SVN_AUTHZ = """[/]
app = rw
reader = r

[/secret]
app = rw
reader =
"""

_PRE_COMMIT = """#!/bin/sh
if svnlook log -t "$2" "$1" | grep -q WIP; then
  echo "Commit blocked: log messages marked WIP are not accepted on this repository." >&2
  exit 1
fi
exit 0
"""


def svnserve(stack: contextlib.ExitStack, work: Path) -> Svnserve:
    import subprocess

    require("svnserve", "svnadmin", "svn")
    root = work / "svn"
    root.mkdir()
    repo = root / "repo"
    subprocess.run(["svnadmin", "create", str(repo)], check=True, capture_output=True)
    seed = work / "seed"
    (seed / "trunk").mkdir(parents=True)
    (seed / "trunk" / "a.txt").write_text("alpha\n")
    (seed / "secret").mkdir()
    (seed / "secret" / "key.txt").write_text("k\n")
    subprocess.run(
        ["svn", "import", "-q", "-m", "seed", str(seed), f"file://{repo}"],
        check=True,
        capture_output=True,
    )
    (repo / "conf" / "svnserve.conf").write_text(_SVN_CONF)
    (repo / "conf" / "passwd").write_text("[users]\napp = app-pw\nreader = reader-pw\n")
    (repo / "conf" / "authz").write_text(_SVN_AUTHZ)
    hook = repo / "hooks" / "pre-commit"
    hook.write_text(_PRE_COMMIT)
    hook.chmod(0o755)
    port = free_port()
    daemon(
        stack,
        [
            "svnserve",
            "-d",
            "--foreground",
            "--listen-host",
            LOOPBACK,
            "--listen-port",
            str(port),
            "-r",
            str(root),
        ],
        port,
        log=work / "svnserve.log",
    )
    config = work / "svn-client"
    config.mkdir()
    return Svnserve(port, config)
