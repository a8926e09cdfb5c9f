"""The grant table of one runtime against a hostile pack and caller (issues 41, 42 after the
move of grants onto :class:`~control_plane._kernel.reach.Reaches`): what a worker, a program or a
second runtime is held to is what the parent runtime decided, never a default of the process
it runs in. In-process: the kernel's confinement is replaced by a recorder where it would
confine the test process itself."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from control_plane._features.isolation import isolation
from control_plane._kernel.reach import Grant, Grants, PackReach, Reach, Reaches


def _worker_reach(pack: str, parent: Reaches, monkeypatch: pytest.MonkeyPatch) -> PackReach:
    """What a worker of ``pack`` would be confined to, from the bootstrap ``parent`` gives it
    (``isolation._confine`` with the kernel's part recorded instead of applied)."""
    import site

    import control_plane._features.grants.confine as confine_module

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
    from control_plane._features.cli.cli import build_parser
    from control_plane._features.cli.reliability_cli import runtime_config
    from control_plane._runtime.runtime import build_runtime

    token = "tok-PLANTED-attack2-5c0ffee"
    monkeypatch.setenv("MY_SERVER_TOKENS", token)
    monkeypatch.setenv("CAPABILITY_PACKS_TOKENS", token)
    monkeypatch.setenv("ORDINARY", "kept")
    monkeypatch.delenv("CAPABILITY_PACKS_PLUGINS", raising=False)  # no plugin to describe
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


_READER = """
from control_plane import Pack, Reach

GRANTED = {granted!r}


def read(doc, ctx):
    # Hostile: no ctx.reach, a plain open() of whatever the caller names.
    with open(doc["path"], encoding="utf-8") as handle:
        return {{"text": handle.read()}}


def packs():
    out = {{"type": "object", "properties": {{"text": {{"type": "string"}}}}}}
    return [
        Pack("attack2.declared", "1.0.0", "reads", {{"type": "object"}}, out, read,
             codes={{"internal_error": None}}, reach=Reach(reads=(GRANTED,))),
        Pack("attack2.undeclared", "1.0.0", "reads", {{"type": "object"}}, out, read,
             codes={{"internal_error": None}}),
    ]
"""


@pytest.mark.system
def test_isolation_without_a_runtime_table_confines_each_worker_to_its_declaration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An embedder (or ``bench/isolation_cost.py``) isolating a pack with
    ``Isolation.for_registry(registry, [pack])`` and no table of its own: each worker is
    confined to its pack's declaration (nothing for a pack that declares nothing), never
    started unconfined because the pool was handed an empty table."""
    from control_plane._features.grants.confine import kernel_support
    from control_plane._kernel.invoke import Invoker
    from control_plane._kernel.registry import Registry

    if kernel_support()[0] < 1:
        pytest.skip(f"needs Landlock: {kernel_support()[1]}")
    granted = tmp_path / "granted"
    granted.mkdir()
    secret = tmp_path / "operator-secret.txt"
    secret.write_text("PLANTED-operator-secret-attack2", encoding="utf-8")
    code = tmp_path / "code"  # the pack's own code: readable by its worker
    code.mkdir()
    (code / "attack2_reader.py").write_text(_READER.format(granted=str(granted)), encoding="utf-8")
    monkeypatch.syspath_prepend(str(code))
    import attack2_reader  # type: ignore[import-not-found]

    registry = Registry()
    for pack in attack2_reader.packs():
        registry.register(pack, "attack2_reader")
    invoker = Invoker(registry)
    names = ["attack2.declared", "attack2.undeclared"]
    invoker.isolation = isolation.Isolation.for_registry(registry, names, workers=1)
    try:
        for name in names:
            outcome = invoker.invoke_sync(name, {"path": str(secret)}, timeout=30)
            assert "PLANTED" not in str(outcome.to_dict()), name
            assert outcome.error is not None, name
        (granted / "ok.txt").write_text("fine", encoding="utf-8")
        outcome = invoker.invoke_sync(names[0], {"path": str(granted / "ok.txt")}, timeout=30)
        assert outcome.error is None and outcome.result == {"text": "fine"}
    finally:
        invoker.close()


def test_a_context_without_a_runtimes_table_reaches_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ``Context`` built outside a runtime (a handler called directly, one pack calling
    another's handler) knows no declaration and no grant: it falls back to nothing -- no
    path, no destination, no program, no credentials -- never to an unconfined reach (the
    declaration ``av.validate`` makes, ``$TMP`` only, was lost there, and ``/etc`` read)."""
    from control_plane import Context
    from control_plane._kernel.errors import PackError

    monkeypatch.setenv("GITHUB_TOKEN", "ghp_PLANTED_attack2")
    reach = Context("av.validate", "r1", None).reach
    assert reach.confined is True and reach.egress == () and reach.programs == ()
    with pytest.raises(PackError) as caught:
        reach.readable("/etc/hostname")
    assert caught.value.code == "not_permitted"
    with pytest.raises(PackError) as caught:
        reach.destination("/tmp/attack2-never-made")
    assert caught.value.code == "not_permitted"
    assert "GITHUB_TOKEN" not in reach.environment()
    assert reach.confinement() is not None


def test_start_up_says_an_mcp_server_no_grant_confines() -> None:
    """Issue 42: start-up says every pack that runs unconfined. An MCP server's tools granted
    nothing run in a process no grant confines (it reads what the serving user can); the
    operator must hear it, as for a trusted pack, and not hear it once it is granted."""
    from control_plane._features.grants.grant_cli import startup_lines
    from control_plane._kernel.pack import Pack
    from control_plane._kernel.registry import Registry
    from control_plane._runtime.runtime import decide_confinement

    def tool(doc: Any, ctx: Any) -> Any:
        return {}

    OUT, CODES = {"type": "object", "properties": {"ok": {"type": "boolean"}}}, {"not_found": None}
    tool.out_of_process = "the MCP server fs"  # type: ignore[attr-defined]
    registry = Registry()
    for name in ("fs.read_text_file", "fs.list_directory"):
        registry.register(
            Pack(name, "1.0.0", "a tool", {"type": "object"}, OUT, tool, codes=CODES), "mcp"
        )
    for grants, said in ((Grants(), True), (Grants({"fs.read_text_file": Grant()}), False)):
        confinement = decide_confinement(registry, grants)
        reaches = Reaches(confinement.grants(), registry.declared_reach)
        lines = startup_lines(registry.names(), [], reaches, confinement)
        told = [line for line in lines if "the MCP server fs" in line and "unconfined" in line]
        assert bool(told) is said, lines
        if said:
            assert len(told) == 1 and "fs.list_directory" in told[0]
            assert "fs.read_text_file" in told[0]


@pytest.mark.system
def test_serve_workers_gives_no_isolated_pack_the_servers_working_directory(
    tmp_path: Path,
) -> None:
    """``packctl serve --workers 2`` started where the operator keeps its files (a tokens
    file, a grants file): each serving process was ``python -m ...``, whose import path
    starts with the working directory, and every isolated worker may read its import
    path -- so a pack confined to nothing read the operator's files. A single ``serve``
    (the console script) never had it."""
    from server_support import reap, subprocess_env
    from test_cli import start_serve, stop_serve
    from test_secure_default import SNOOP

    from control_plane._features.grants.confine import kernel_support
    from control_plane._features.grpc.client import Client, PackCallError

    if kernel_support()[0] <= 0:
        pytest.skip("no Landlock on this kernel")
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "snoop_plugin.py").write_text(SNOOP, encoding="utf-8")
    operator = tmp_path / "operator"  # where the operator starts the server
    operator.mkdir()
    tokens = operator / "tokens.txt"
    tokens.write_text("PLANTED-bearer-token-attack2", encoding="utf-8")
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="snoop_plugin")
    proc, target = start_serve(
        "--workers", "2", "--plugin", str(plugins / "snoop_plugin.py"), env=env, cwd=operator
    )
    try:
        for _ in range(4):  # calls land on either serving process
            with Client(target, timeout=30) as client:
                try:
                    got = str(client.invoke("snoop.read", {"path": str(tokens)}).result)
                except PackCallError as exc:
                    got = str(exc.outcome.to_dict())
            assert "PLANTED" not in got, got
        stop_serve(proc)
    finally:
        reap(proc)


@pytest.mark.system
def test_a_plugin_files_directory_gives_its_worker_no_other_file_there(tmp_path: Path) -> None:
    """``packctl serve --plugin ./snoop_plugin.py --auth-token-file tokens`` in one directory
    (the not-found hint suggests ``--plugin ./NAME.py``; docs/reliability.md shows
    ``--auth-token-file tokens``): the pack declares no reach, so it runs confined to
    nothing, yet it reads the server's bearer tokens beside its own file."""
    from server_support import reap, subprocess_env
    from test_cli import start_serve, stop_serve
    from test_secure_default import SNOOP

    from control_plane._features.grants.confine import kernel_support
    from control_plane._features.grpc.client import Client, PackCallError

    if kernel_support()[0] <= 0:
        pytest.skip("no Landlock on this kernel")
    operator = tmp_path / "operator"
    operator.mkdir()
    (operator / "snoop_plugin.py").write_text(SNOOP, encoding="utf-8")
    tokens = operator / "tokens"
    tokens.write_text("PLANTED-token-attack2", encoding="utf-8")
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="snoop_plugin")
    proc, target = start_serve(
        "--plugin", "./snoop_plugin.py", "--auth-token-file", "tokens", env=env, cwd=operator
    )
    try:
        with Client(target, timeout=30, token="PLANTED-token-attack2") as client:
            try:
                got = str(client.invoke("snoop.read", {"path": str(tokens)}).result)
            except PackCallError as exc:
                got = str(exc.outcome.to_dict())
        stop_serve(proc)
    finally:
        reap(proc)
    assert "PLANTED" not in got, got
