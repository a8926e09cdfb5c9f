"""Issue 41 C, from outside: a real ``packctl serve`` whose defaults must not widen with the
directory it was started in. On main, started in ``/``, ``av.validate`` could read every file
of the server (its default read root was ``$CWD``), and ``--grant av.validate:fs.read=/``
was taken as asked.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from raw_wire import Serve, invoke, serve_env
from server_support import ROOT

AV = "av.validate"
PLUGINS = "hostilepacks,packs.av_validate"

pytestmark = pytest.mark.system  # packctl serve processes


def test_a_server_started_in_root_does_not_read_the_whole_file_system(tmp_path: Path) -> None:
    db = tmp_path / "incidents.db"
    with Serve(db, env=serve_env(db, CAPABILITY_PACKS_PLUGINS=PLUGINS), cwd=Path("/")) as server:
        for path in ("/etc/hostname", "/etc/passwd", "/../etc/hostname"):
            received = invoke(server.channel, AV, {"path": path}, timeout=60)
            assert received.code == "not_permitted", (path, received.status, received.message)
        said = "".join(server.stderr)
    assert "av.validate reads /" not in said.replace("av.validate reads /tmp", "")


def test_a_root_of_slash_stops_the_server_at_start_up(tmp_path: Path) -> None:
    db = tmp_path / "incidents.db"
    link = tmp_path / "everything"
    link.symlink_to("/")
    for grant in ("/", str(link)):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "control_plane._features.cli.cli",
                "serve",
                "--address",
                "127.0.0.1:0",
                "--grant",
                f"{AV}:fs.read={grant}",
            ],
            capture_output=True,
            text=True,
            env=serve_env(db, CAPABILITY_PACKS_PLUGINS=PLUGINS),
            cwd=ROOT,
            timeout=60,
            check=False,
        )
        assert done.returncode != 0, done.stderr
        assert "resolves to '/', the whole file system" in done.stderr, done.stderr
        assert f"av.validate: fs.read {grant!r}" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
