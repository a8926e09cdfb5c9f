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
