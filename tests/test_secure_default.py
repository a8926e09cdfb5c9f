"""Issue 42: every pack secure by default, against a real ``packctl serve``.

A plugin that declares no reach runs in an isolated worker under an empty grant: its own
``open()`` of a server file gets nothing back unless the operator trusts it (``--trust``),
and start-up says which packs are confined, trusted, or granted more than they declare.
``packctl check`` warns on a pack with no declaration.
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest
from server_support import PACKCTL, ROOT, reap, subprocess_env
from test_cli import start_serve, stop_serve

from control_plane._features.grants.confine import kernel_support
from control_plane._features.grpc.client import Client, PackCallError

pytestmark = pytest.mark.system

SNOOP = textwrap.dedent(
    '''
    """A plugin written before reach: its handler opens whatever path it is given."""
    from typing import Any

    from control_plane import Context, Pack, hookimpl


    def snoop(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
        with open(doc["path"], encoding="utf-8") as fh:
            return {"content": fh.read()}


    PACK = Pack(
        name="snoop.read",
        version="1.0.0",
        summary="Reads a file with open(), past ctx.reach.",
        input_schema={"type": "object"},
        output_schema={"type": "object", "properties": {"content": {"type": "string"}}},
        handler=snoop,
        codes={"not_found": None},
    )


    @hookimpl
    def register_packs(register: Any) -> None:
        register(PACK)
    '''
)
SECRET = "the-operators-own-file-7f3a"


@pytest.fixture
def snoop(tmp_path: Path) -> tuple[Path, Path]:
    """The plugin file, and a server file outside everything it could be granted."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    plugin = plugins / "snoop_plugin.py"
    plugin.write_text(SNOOP)
    server = tmp_path / "server-files"
    server.mkdir()
    secret = server / "operator.txt"
    secret.write_text(SECRET)
    return plugin, secret


def _serve(plugin: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    env = subprocess_env(
        CAPABILITY_PACKS_PLUGINS="packs.av_validate,packs.git,packs.http_fetch,snoop_plugin"
    )
    # drain: the lines after the banner are read through the same buffered stream.
    return start_serve("--plugin", str(plugin), *extra, env=env, cwd=ROOT, drain=True)


def _read(target: str, path: Path) -> tuple[str, str]:
    """What the call got: ``("ok", content)`` or ``("error", code)``."""
    with Client(target, timeout=30) as client:
        try:
            outcome = client.invoke("snoop.read", {"path": str(path)})
        except PackCallError as exc:
            return "error", str(exc.code) + " " + str(exc.outcome.to_dict())
    return "ok", str(outcome.result)


@pytest.mark.skipif(kernel_support()[0] <= 0, reason="no Landlock on this kernel")
def test_an_undeclared_plugin_reads_no_server_file_unless_trusted(
    snoop: tuple[Path, Path],
) -> None:
    plugin, secret = snoop
    proc, target = _serve(plugin)
    try:
        kind, got = _read(target, secret)
        assert SECRET not in got and kind == "error", got
        banner = proc.banner + stop_serve(proc)  # type: ignore[attr-defined]
    finally:
        reap(proc)
    assert (
        "snoop.read declares no reach: it runs in an isolated worker confined to nothing "
        "(an empty grant); --trust snoop.read runs it unconfined"
    ) in banner, banner
    assert "trusted" not in banner.replace("--trust snoop.read runs", "")

    proc, target = _serve(plugin, "--trust", "snoop.read")
    try:
        assert _read(target, secret) == ("ok", str({"content": SECRET}))
        banner = proc.banner + stop_serve(proc)  # type: ignore[attr-defined]
    finally:
        reap(proc)
    assert (
        "snoop.read declares no reach and is trusted (--trust): it runs in this process, unconfined"
    ) in banner, banner


def test_start_up_says_each_grant_wider_than_the_declaration(snoop: tuple[Path, Path]) -> None:
    plugin, _ = snoop
    proc, _target = _serve(
        plugin,
        "--grant",
        "av.validate:fs.read=/etc",
        "--grant",
        "git.clone:credentials=ambient",
        "--grant",
        "git.ls_remote:egress=loopback",
        "--grant",
        "http.fetch:egress=public",  # what it declares already: not wider
        "--grant",
        "snoop.read:fs.read=/srv",
    )
    try:
        banner = proc.banner + stop_serve(proc)  # type: ignore[attr-defined]
    finally:
        reap(proc)
    assert "av.validate is granted more than it declares: fs.read=/etc (" in banner, banner
    assert "git.clone is granted more than it declares: credentials=ambient (" in banner
    assert "git.ls_remote is granted more than it declares: egress=loopback (" in banner
    assert "http.fetch is granted more" not in banner
    assert "snoop.read declares no reach: it runs in an isolated worker confined to its grant" in (
        banner
    )
    assert "snoop.read is granted more than it declares: fs.read=/srv (" in banner


def test_packctl_check_warns_on_a_pack_with_no_declaration(snoop: tuple[Path, Path]) -> None:
    plugin, _ = snoop
    done = subprocess.run(
        [*PACKCTL, "check", str(plugin)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr  # a warning, not a failure
    assert "snoop.read" in done.stdout and "declares no reach" in done.stdout, done.stdout
    assert "--trust snoop.read" in done.stdout
    assert "1 warning(s)" in done.stdout, done.stdout


EAGER = textwrap.dedent(
    '''
    """A plugin written before reach whose module runs code at import: it reads an
    operator file and leaves a marker, wherever it is imported."""
    import os
    from typing import Any

    from control_plane import Context, Pack, hookimpl

    try:
        with open({secret!r}, encoding="utf-8") as fh:
            READ = "ok:" + fh.read()
    except OSError as exc:
        READ = "denied:" + type(exc).__name__
    try:
        with open({marker!r}, "a", encoding="utf-8") as fh:
            fh.write(f"{{os.getpid()}} {{READ}}\\n")
    except OSError:
        pass


    def eager(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {{"pid": os.getpid(), "read": READ}}


    PACK = Pack(
        name="eager.read",
        version="1.0.0",
        summary="Says what its module read when it was imported.",
        input_schema={{"type": "object"}},
        output_schema={{"type": "object"}},
        handler=eager,
        codes={{"not_found": None}},
    )


    @hookimpl
    def register_packs(register: Any) -> None:
        register(PACK)
    '''
)


@pytest.mark.skipif(kernel_support()[0] <= 0, reason="no Landlock on this kernel")
def test_an_undeclared_plugins_module_is_never_imported_in_the_control_plane(
    tmp_path: Path,
) -> None:
    """Without --isolate, a module whose pack declares no reach is described and served by
    confined workers only: its import-time code never runs in the control plane (no
    marker, the operator file unread), and the pack still answers. Trusted, it is imported
    here as before."""
    secret = tmp_path / "server-files" / "operator.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    marker = tmp_path / "marker.txt"
    plugin = tmp_path / "plugins" / "eager_plugin.py"
    plugin.parent.mkdir()
    plugin.write_text(EAGER.format(secret=str(secret), marker=str(marker)))
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="eager_plugin")

    proc, target = start_serve("--plugin", str(plugin), env=env, cwd=ROOT, drain=True)
    try:
        with Client(target, timeout=30) as client:
            answered = client.invoke("eager.read", {}).result
        stop_serve(proc)
    finally:
        reap(proc)
    assert not marker.exists(), marker.read_text()  # nobody unconfined imported it
    assert answered["read"].startswith("denied:"), answered  # its worker could not read
    assert answered["pid"] != proc.pid

    proc, target = start_serve(
        "--plugin", str(plugin), "--trust", "eager.read", env=env, cwd=ROOT, drain=True
    )
    try:
        with Client(target, timeout=30) as client:
            answered = client.invoke("eager.read", {}).result
        stop_serve(proc)
    finally:
        reap(proc)
    assert answered == {"pid": proc.pid, "read": "ok:" + SECRET}
    assert marker.read_text().splitlines() == [f"{proc.pid} ok:{SECRET}"]
