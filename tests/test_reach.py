"""The grant model (control_plane._kernel.reach): parsing grants, the declaration/grant merge,
the path means, and the operator's mistakes refused at start-up."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from server_support import PACKCTL, ROOT, subprocess_env

from control_plane import Context, Reach
from control_plane._features.grants.grant_cli import grants_from_file
from control_plane._features.grants.tool_process import run_program
from control_plane._kernel.errors import PackError
from control_plane._kernel.reach import (
    Grant,
    GrantError,
    Grants,
    PackReach,
    Reaches,
    Scratch,
    parse_grant,
)
from control_plane._kernel.stderr import ToolRun
from control_plane._runtime.plugins import load_registry
from control_plane._runtime.runtime import RuntimeConfig, build_runtime


def test_flags_add_up_per_key_and_an_empty_value_grants_nothing() -> None:
    grants = parse_grant("av.validate:fs.read=/srv/a")
    grants = parse_grant("av.validate:fs.read=/srv/b", grants)
    grants = parse_grant("git.clone:credentials=ambient", grants)
    grants = parse_grant("git.clone:programs=", grants)
    assert grants["av.validate"].reads == ("/srv/a", "/srv/b")
    assert grants["git.clone"].ambient_credentials is True
    assert grants["git.clone"].programs == ()


@pytest.mark.parametrize(
    ("flag", "fault"),
    [
        ("av.validate", "expected PACK:KEY=VALUE"),
        ("av.validate:fs.exec=/x", "unknown key 'fs.exec'"),
        ("av.validate:fs.read=relative/dir", "a root is an absolute path"),
        ("git.clone:credentials=maybe", "credentials is 'ambient' or 'none'"),
    ],
)
def test_a_bad_flag_names_its_fault(flag: str, fault: str) -> None:
    with pytest.raises(GrantError, match=fault):
        parse_grant(flag)


def test_a_granted_key_replaces_the_declared_one_and_others_stay() -> None:
    declared = Reach(reads=("$CWD",), programs=("ffprobe",))
    reach = Grant(reads=("/srv/media",)).over(declared)
    assert reach.reads == ("/srv/media",) and reach.programs == ("ffprobe",)
    assert Grant().over(None) == Reach()  # an undeclared pack granted anything is confined


def test_the_grants_file(tmp_path: Path) -> None:
    path = tmp_path / "grants.toml"
    path.write_text(
        '[packs."av.validate"]\nfs.read = ["/srv/media", "$TMP"]\n'
        '[packs."git.clone"]\nfs = { write = ["/srv/clones"] }\ncredentials = "none"\n'
    )
    grants = grants_from_file(path).by_pack
    assert grants["av.validate"].reads == ("/srv/media", "$TMP")
    assert grants["git.clone"].writes == ("/srv/clones",)
    assert grants["git.clone"].ambient_credentials is False
    path.write_text('[packs."git.clone"]\nfs.write = "/srv/clones"\n')
    with pytest.raises(GrantError, match=r"grants.toml: packs.git.clone.fs.write: a list"):
        grants_from_file(path)


def test_paths_resolve_inside_the_roots_or_are_refused_alike(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "in.txt").write_text("x")
    (tmp_path / "out.txt").write_text("y")
    (root / "escape").symlink_to(tmp_path / "out.txt")
    reach = PackReach("p", Reach(reads=(str(root),)))
    assert reach.readable(str(root / "in.txt")) == str(root / "in.txt")
    assert reach.readable("in.txt") == str(root / "in.txt")  # relative: under the first root
    answers = set()
    for path in (
        str(tmp_path / "out.txt"),
        str(tmp_path / "missing"),
        str(root / ".." / "out.txt"),
        str(root / "escape"),
    ):
        with pytest.raises(PackError) as caught:
            reach.readable(path)
        assert caught.value.code == "not_permitted"
        answers.add(str(caught.value))
    assert len(answers) == 1


def test_an_undeclared_pack_is_unconfined_until_granted(tmp_path: Path) -> None:
    # A table that neither declares nor grants it (a plain Invoker's, --trust's).
    ctx = Context("legacy.pack", "r1", None, Reaches())
    assert ctx.reach.confined is False
    assert ctx.reach.egress is None  # the pack's own default (http.fetch: public only)
    assert ctx.reach.readable("/etc/hostname") == "/etc/hostname"
    # No table at all (a bare Context, outside any runtime): nothing, never unconfined.
    assert Context("legacy.pack", "r2", None).reach.confined is True
    reaches = Reaches(Grants({"legacy.pack": Grant(reads=(str(tmp_path),))}))
    assert Context("legacy.pack", "r2", None, reaches).reach.confined is True
    with pytest.raises(PackError):
        Context("legacy.pack", "r3", None, reaches).reach.readable("/etc/hostname")


@pytest.mark.system
def test_serve_refuses_a_grant_for_an_unknown_pack_and_a_bad_file(tmp_path: Path) -> None:
    for args, fault in (
        (["--grant", "av.validat:fs.read=/srv"], "a grant names unknown pack(s): av.validat"),
        (["--grants", str(tmp_path / "none.toml")], "none.toml: no such grants file"),
    ):
        done = subprocess.run(
            [*PACKCTL, "serve", "--address", "127.0.0.1:0", *args],
            capture_output=True,
            text=True,
            env=subprocess_env(CAPABILITY_PACKS_PLUGINS="packs.av_validate"),
            cwd=ROOT,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert fault in done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.system
def test_describe_local_shows_declared_and_granted_reach() -> None:
    done = subprocess.run(
        [*PACKCTL, "describe", "av.validate", "--local", "--grant", "av.validate:fs.read=/srv/m"],
        capture_output=True,
        text=True,
        env=subprocess_env(CAPABILITY_PACKS_PLUGINS="packs.av_validate"),
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "declared: fs.read $TMP;" in done.stdout
    assert "  fs.read:     /srv/m\n" in done.stdout
    assert "  programs:    ffprobe, ffmpeg\n" in done.stdout


# -- programs: the grant checked in core, the process started by the runtime's runner -----


class _Recorder:
    """A ``ProgramRunner`` that records what ``PackReach.run`` handed it."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, argv: Sequence[str], **kwargs: Any) -> tuple[ToolRun, bool]:
        self.calls.append({"argv": list(argv), **kwargs})
        return ToolRun(tuple(argv), 0, b"", ""), False


def test_run_checks_the_grant_before_the_runner_and_hands_it_a_scrubbed_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_planted_secret_value")
    runner = _Recorder()
    reach = PackReach("p", Reach(programs=("git",)), runner)
    with pytest.raises(PackError) as refused:
        reach.run(["/usr/bin/ssh", "host"], timeout=5)
    assert refused.value.code == "not_permitted" and runner.calls == []
    ctx = Context("p", "r1", None)
    reach.run(["git", "ls-remote"], timeout=7, ctx=ctx, env={"GIT_X": "1"}, tool="git")
    (call,) = runner.calls
    assert call["argv"] == ["git", "ls-remote"] and call["timeout"] == 7 and call["tool"] == "git"
    env = call["env"]
    assert "GITHUB_TOKEN" not in env and env["GIT_X"] == "1" and env["LC_ALL"] == "C"
    assert Path(env["HOME"]).is_dir() and not any(Path(env["HOME"]).iterdir())
    assert call["cancelled"]() is False
    ctx.cancel()
    assert call["cancelled"]() is True


def test_a_reach_no_runtime_gave_a_runner_refuses_to_run_and_says_why() -> None:
    with pytest.raises(PackError, match="no runtime built") as info:
        PackReach("p", Reach(programs=("true",))).run(["true"], timeout=5)
    assert info.value.code == "internal_error"


@pytest.mark.system
def test_a_runtime_gives_every_reach_its_runner() -> None:
    """``build_runtime`` hands its reaches ``_features/grants/tool_process.run_program``:
    ``ctx.reach.run`` starts a real process."""
    with build_runtime(RuntimeConfig(builtins=False, entry_points=False)) as runtime:
        reach = Context("legacy.pack", "r1", None, runtime.reaches).reach
    assert reach.runner is run_program
    done, stopped = reach.run(
        [sys.executable, "-c", "import sys; print('out'); sys.stderr.write('err'); sys.exit(3)"],
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr, stopped) == (3, b"out\n", "err", False)
    with pytest.raises(PackError) as late:
        reach.run(["sh", "-c", "sleep 30 & sleep 30"], timeout=0.3)
    assert late.value.code == "timeout"


def test_open_read_of_a_directory_or_a_fifo_is_a_typed_refusal(tmp_path: Path) -> None:
    """Issue 42 item 3: a directory gave internal_error and a FIFO raised
    IsADirectoryError; anything but a regular file is not_permitted (in every pack's
    vocabulary), and the open never blocks on a FIFO without a writer."""
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    reach = PackReach("p", Reach(reads=(str(tmp_path),)))
    fd = reach.open_read(str(tmp_path / "file.txt"))
    try:
        assert os.read(fd, 10) == b"x" and os.get_blocking(fd)
    finally:
        os.close(fd)
    for name in ("dir", "fifo", "."):
        with pytest.raises(PackError) as refused:
            reach.open_read(str(tmp_path / name), "source")
        assert refused.value.code == "not_permitted", name
        assert "source is not a regular file" in refused.value.message
    with pytest.raises(FileNotFoundError):
        reach.open_read(str(tmp_path / "missing"))


def test_grants_file_trust_and_what_is_wider_than_the_declaration(tmp_path: Path) -> None:
    path = tmp_path / "grants.toml"
    path.write_text('[packs."legacy.x"]\ntrust = true\n[packs."av.validate"]\nfs.read = ["/"]\n')
    grants = grants_from_file(path)
    assert grants.trusted == frozenset({"legacy.x"}) and "legacy.x" not in grants.by_pack
    assert grants.unknown(["av.validate"]) == ["legacy.x"]
    path.write_text('[packs."legacy.x"]\ntrust = "yes"\n')
    with pytest.raises(GrantError, match=r"packs.legacy.x.trust: true or false"):
        grants_from_file(path)
    declared = Reach(reads=("/srv",), egress=("public",), programs=("git",))
    assert (
        Grant(reads=("/srv/media",), egress=("example.com", "8.8.8.0/24")).wider_than(declared)
        == []
    )
    assert Grant(
        reads=("/",), egress=("loopback", "10.0.0.0/8"), programs=("sh",), ambient_credentials=True
    ).wider_than(declared) == [
        "fs.read=/",
        "egress=loopback",
        "egress=10.0.0.0/8",
        "programs=sh",
        "credentials=ambient",
    ]
    assert Grant.nothing().wider_than(None) == []
    assert Grant(writes=("/tmp",)).wider_than(None) == ["fs.write=/tmp"]


def test_which_packs_run_confined_and_which_trusted() -> None:
    """build_runtime's decision (issue 42): a pack that declares no reach runs in an
    isolated worker under its grant or nothing, unless trusted; a declared pack stays."""
    import dataclasses

    from runtime_support import make_pack

    from control_plane._kernel.registry import Registry
    from control_plane._runtime.runtime import TRUST_ALL, decide_confinement

    registry = Registry()
    for pack in (
        make_pack("legacy.a"),
        make_pack("legacy.b"),
        dataclasses.replace(make_pack("modern.c"), reach=Reach(reads=("$CWD",))),
    ):
        registry.register(pack, "tests")
    operator = Grants({"legacy.b": Grant(reads=("/srv",))})
    held = decide_confinement(registry, operator)
    assert held.confined == {"legacy.a", "legacy.b"} and not held.trusted
    installed = held.grants()
    assert installed.by_pack["legacy.a"] == Grant.nothing()
    assert installed.by_pack["legacy.b"] == Grant(reads=("/srv",))
    assert installed.implied == {"legacy.a"} and installed.operator() == operator
    assert held.wider == {"legacy.b": ("fs.read=/srv",)}
    held = decide_confinement(registry, operator, ("legacy.a",))
    assert held.confined == {"legacy.b"} and held.trusted == {"legacy.a"}
    held = decide_confinement(registry, Grants(trusted=frozenset({"legacy.b"})), TRUST_ALL[:0])
    assert held.trusted == {"legacy.b"}
    assert decide_confinement(registry, Grants(), TRUST_ALL).trusted == {"legacy.a", "legacy.b"}


def test_an_undeclared_pack_a_worker_cannot_import_is_told_how_to_run() -> None:
    from runtime_support import make_pack, plugin

    from control_plane._features.isolation.isolation import IsolationError
    from control_plane._runtime.runtime import RuntimeConfig, build_runtime

    def inner(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {}

    config = RuntimeConfig(
        builtins=False,
        entry_points=False,
        extra=(("p", plugin(make_pack("legacy.inner", handler=inner))),),
    )
    with pytest.raises(IsolationError, match=r"declares no reach.*--trust legacy.inner"):
        build_runtime(config)


def test_a_grant_for_a_mistyped_pack_says_which_pack_was_meant() -> None:
    """Issue 45 item 6: the refusal names the loaded pack closest to the typo (difflib)."""
    from control_plane._runtime.runtime import RuntimeConfig, build_runtime

    config = RuntimeConfig(grants=Grants(parse_grant("av.validat:fs.read=/srv")))
    load = load_registry(builtins=True, entry_points_=False, extra=[])
    try:
        with pytest.raises(GrantError) as caught:
            build_runtime(config, load=load)
    finally:
        load.close()
    assert "a grant names unknown pack(s): av.validat (did you mean av.validate?)" in str(
        caught.value
    )


def test_the_runner_gets_the_grant_as_a_confinement(tmp_path: Path) -> None:
    """What the kernel holds a program to (issue 41 B): the read and write roots, the
    programs' HOME read-only, TCP only to the checked ports, none without egress."""
    runner = _Recorder()
    scratch = Scratch()
    reach = PackReach(
        "p",
        Reach(reads=(str(tmp_path),), writes=("$SCRATCH",), egress=("public",), programs=("git",)),
        runner,
        scratch=scratch,
    )
    reach.run(["git"], timeout=5, connect=(443,))
    reach.run(["git"], timeout=5)
    first, second = (c["confinement"] for c in runner.calls)
    assert first.connect == (443,) and second.connect is None
    assert str(tmp_path) in first.reads and first.writes == (scratch.root(),)
    home = first.reads[-1]
    assert runner.calls[0]["env"]["HOME"] == home
    silent = PackReach("q", Reach(programs=("git",)), runner)
    silent.run(["git"], timeout=5, connect=(443,))
    assert runner.calls[-1]["confinement"].connect == ()  # no egress: no TCP at all
    assert PackReach("legacy", None, runner).confinement() is None  # unconfined: as before


def test_the_programs_home_is_outside_every_root_a_caller_can_write() -> None:
    """On main HOME was ``.home`` inside the scratch root: ``git.clone`` with ``dest:
    ".home"`` planted a ``.netrc`` every later git run read."""
    scratch = Scratch()
    home = PackReach("p", Reach(), scratch=scratch).environment()["HOME"]
    root = scratch.root()
    assert not (home == root or home.startswith(root + "/"))
    clone = PackReach("git.clone", Reach(writes=("$SCRATCH",)), scratch=scratch)
    made = clone.destination(".home")
    try:
        assert os.path.realpath(made.final) != os.path.realpath(home)
    finally:
        made.discard()


def test_a_path_with_a_nul_character_is_refused_not_a_crash() -> None:
    """On main ``av.validate`` with ``"path": "a\\u0000b"`` was ``internal_error`` (a
    ValueError from the file system calls)."""
    reach = PackReach("p", Reach(reads=("$TMP",)))
    with pytest.raises(PackError) as refused:
        reach.open_read(tempfile.gettempdir() + "/media\x00.mp4")
    assert refused.value.code == "not_permitted"
