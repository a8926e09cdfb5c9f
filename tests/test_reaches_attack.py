"""The grant table of one runtime against a hostile pack and caller (issues 41, 42 after the
move of grants onto :class:`~control_plane.core.reach.Reaches`): what a worker, a program or a
second runtime is held to is what the parent runtime decided, never a default of the process
it runs in. In-process: the kernel's confinement is replaced by a recorder where it would
confine the test process itself."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from control_plane.core.reach import Grant, Grants, PackReach, Reach, Reaches
from control_plane.runtime import isolation


def _worker_reach(pack: str, parent: Reaches, monkeypatch: pytest.MonkeyPatch) -> PackReach:
    """What a worker of ``pack`` would be confined to, from the bootstrap ``parent`` gives it
    (``isolation._confine`` with the kernel's part recorded instead of applied)."""
    import site

    import control_plane.runtime.confine as confine_module

    seen: list[PackReach] = []

    def record(reach: PackReach, paths: Any = ()) -> None:
        seen.append(reach)

    monkeypatch.setattr(confine_module, "confine", record)
    monkeypatch.setattr(site, "main", lambda: None)
    monkeypatch.setattr(sys, "path", list(sys.path))
    boot = {"reach": isolation._reach_of(pack, parent), "sys_path": [], "prefixes": []}
    worker = isolation._confine(pack, boot)
    assert seen == [worker.reach_for(pack)]
    return seen[0]


def test_a_worker_reaches_the_parents_cwd_not_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$CWD`` is the directory the runtime was built in (what start-up checked and said);
    a worker started after the embedding process moved elsewhere (a daemon's ``chdir``
    to ``/`` or to a home directory) must not read where it happens to start."""
    started, later = tmp_path / "started", tmp_path / "home-of-the-user"
    started.mkdir()
    later.mkdir()
    parent = Reaches(
        Grants({"p": Grant(writes=("$CWD",))}),
        {"p": Reach(reads=("$CWD",))},
        start_dir=str(started),
    )
    try:
        monkeypatch.chdir(later)
        reach = _worker_reach("p", parent, monkeypatch)
        assert reach.reads == parent.reach_for("p").reads == (str(started.resolve()),)
        assert reach.writes == parent.reach_for("p").writes
        assert reach.start_dir == parent.start_dir
    finally:
        parent.close()


def test_the_servers_bearer_tokens_never_reach_a_packs_programs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``packctl serve --auth-token-env NAME``: the tokens are the control plane's. A pack
    granted ambient credentials hands its programs the serving user's environment, and a
    program it runs (git, curl, ``sh`` if granted) must not find the tokens there -- the
    same promise a worker's environment keeps (issue 42)."""
    from control_plane.adapters.cli import build_parser
    from control_plane.adapters.reliability_cli import runtime_config
    from control_plane.runtime.runtime import build_runtime

    token = "tok-PLANTED-attack2-5c0ffee"
    monkeypatch.setenv("MY_SERVER_TOKENS", token)
    monkeypatch.setenv("CAPABILITY_PACKS_TOKENS", token)
    monkeypatch.setenv("ORDINARY", "kept")
    args = build_parser().parse_args(
        [
            "serve",
            "--auth-token-env",
            "MY_SERVER_TOKENS",
            "--grant",
            "http.fetch:credentials=ambient",
        ]
    )
    config = runtime_config(args)
    runtime = build_runtime(dataclasses.replace(config, entry_points=False, mcp_config=None))
    try:
        env = runtime.reaches.reach_for("http.fetch").environment()
    finally:
        runtime.close()
    assert env.get("ORDINARY") == "kept"  # ambient: the serving user's environment...
    assert token not in env.values()  # ...but never the server's own secrets
    grant = runtime.reaches.grants.by_pack["http.fetch"]
    worker_env = isolation.worker_environment(
        None, grant.to_data(), str(tmp_path), runtime.reaches.withheld
    )
    assert token not in worker_env.values() and worker_env.get("ORDINARY") == "kept"
