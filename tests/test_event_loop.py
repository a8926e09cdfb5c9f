"""``packctl serve --loop``: the server's event loop (uvloop by default where installed).

The rest of the suite serves on the default (``auto``, uvloop here: it is a dependency);
these tests pin each loop explicitly and check the fallback when uvloop cannot import.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from server_support import PACKCTL, reap, subprocess_env
from test_cli import start_serve, stop_serve

from control_plane._features.grpc import event_loop
from control_plane._features.grpc.client import Client, DeadlineExceeded, PackCallError, Timeout
from control_plane._kernel.limits import ConfigError

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system


def _loops(proc: subprocess.Popen[str], err: str) -> list[object]:
    """The ``loop`` of each ``serving`` log record (read before and after the banner)."""
    text = proc.banner + err  # type: ignore[attr-defined]
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    return [line["loop"] for line in lines if line.get("event") == "serving"]


def _server_timeout(client: Client) -> Timeout:
    """The server's own timeout answer to a call past its deadline. The server answers 10 %
    (100 ms here) before the caller's deadline; on a starved CPU that answer can lose the
    race to the client's own deadline (``DeadlineExceeded``), which says nothing of the
    server's: another try, as test_soak and test_buf_curl count such races apart."""
    for _ in range(3):
        try:
            client.invoke("test.hang_async", {"seconds": 30}, timeout=1.0)
        except DeadlineExceeded:
            continue
        except Timeout as late:
            return late
    pytest.fail("the client's own deadline beat the server's timeout answer three times")


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_serve_on_each_loop_answers_fails_times_out_and_drains(loop: str) -> None:
    proc, target = start_serve("--plugin", "testpacks", "--loop", loop, "--grace", "10")
    try:
        assert f"event loop {loop}" in proc.banner  # type: ignore[attr-defined]
        with Client(target) as client:
            assert client.invoke("test.echo", {"n": 1}).result["echo"] == {"n": 1}
            with pytest.raises(PackCallError) as failed:
                client.invoke("test.fail", {"code": "rate_limited"})
            assert failed.value.code == "rate_limited"
            # The deadline is enforced on the server: the pack's own timeout envelope.
            assert _server_timeout(client).envelope.origin != "client"
            with ThreadPoolExecutor(2) as pool:
                slow = pool.submit(client.invoke, "test.slow", {"seconds": 1.5, "tag": loop})
                time.sleep(0.5)
                proc.send_signal(signal.SIGTERM)
                assert slow.result(timeout=30).result == {"done": loop}
        _, err = proc.communicate(timeout=30)
    finally:
        reap(proc)
    assert proc.returncode == 0, err
    assert _loops(proc, err) == [loop]


@pytest.fixture
def no_uvloop(tmp_path: Path) -> dict[str, str]:
    """An environment where ``import uvloop`` fails (a package shadowing the real one)."""
    shadow = tmp_path / "shadow" / "uvloop"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('uvloop hidden by the test')\n")
    env = subprocess_env()
    env["PYTHONPATH"] = f"{shadow.parent}:{env.get('PYTHONPATH', '')}"
    return env


def test_auto_serves_on_the_standard_loop_without_uvloop(no_uvloop: dict[str, str]) -> None:
    proc, target = start_serve("--plugin", "testpacks", env=no_uvloop)
    try:
        assert "event loop asyncio" in proc.banner  # type: ignore[attr-defined]
        with Client(target) as client:
            assert client.invoke("test.echo", {"n": 2}).result["echo"] == {"n": 2}
    finally:
        err = stop_serve(proc)
    assert _loops(proc, err) == ["asyncio"]


def test_asking_for_uvloop_without_it_is_a_usage_error(no_uvloop: dict[str, str]) -> None:
    done = subprocess.run(
        [*PACKCTL, "serve", "--address", "127.0.0.1:0", "--loop", "uvloop"],
        capture_output=True,
        text=True,
        env=no_uvloop,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "uvloop is not installed" in done.stderr
    assert "--loop asyncio" in done.stderr
    assert "Traceback" not in done.stderr


def test_resolve_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    import uvloop

    assert event_loop.resolve_loop("auto").name == "uvloop"
    assert event_loop.resolve_loop("uvloop").factory is uvloop.new_event_loop
    assert event_loop.resolve_loop("asyncio").factory is asyncio.new_event_loop
    with pytest.raises(ConfigError, match="unknown event loop 'trio'"):
        event_loop.resolve_loop("trio")
    monkeypatch.setattr(event_loop, "_uvloop_factory", lambda: None)
    assert event_loop.resolve_loop("auto").name == "asyncio"
    with pytest.raises(ConfigError, match="uvloop is not installed"):
        event_loop.resolve_loop("uvloop")


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_run_returns_the_result_on_a_loop_of_the_choice(loop: str) -> None:
    import asyncio

    async def main() -> str:
        return type(asyncio.get_running_loop()).__module__.partition(".")[0]

    assert event_loop.run(main(), event_loop.resolve_loop(loop)) == loop


def test_workers_serve_on_the_chosen_loop() -> None:
    proc, target = start_serve("--plugin", "testpacks", "--workers", "2", "--loop", "asyncio")
    try:
        banner = proc.banner.splitlines()[-1]  # type: ignore[attr-defined]
        assert "with 2 workers" in banner and "event loop asyncio" in banner, banner
        with Client(target) as client:
            for n in range(4):
                assert client.invoke("test.echo", {"n": n}).result["echo"] == {"n": n}
    finally:
        err = stop_serve(proc)
    assert _loops(proc, err) == ["asyncio", "asyncio"], err


_SPAWN_PLUGIN = """
import asyncio
from typing import Any

from control_plane import Pack, hookimpl

OUTPUT = {
    "type": "object",
    "properties": {"error": {"type": "object", "properties": {"code": {"enum": ["timeout"]}}}},
}


async def spawn(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    async def one() -> list[Any]:
        proc = await asyncio.create_subprocess_exec(
            "sh", "-c", "echo hi", stdout=asyncio.subprocess.PIPE
        )
        out, _ = await proc.communicate()
        return [proc.returncode, out.decode()]

    return {"runs": await asyncio.gather(*(one() for _ in range(doc["n"])))}


@hookimpl
def register_packs(register: Any) -> None:
    register(Pack("spawn.sh", "1.0.0", "Spawn sh n times.", {"type": "object"}, OUTPUT, spawn))
"""


def test_subprocesses_spawned_on_uvloop_under_grpc_do_not_crash(tmp_path: Path) -> None:
    """libuv spawns with ``fork()``, which runs gRPC's fork handlers in the child while the
    server's threads are inside gRPC: with gRPC's fork support on, ~1-2 % of the children
    died of SIGSEGV before ``exec`` (an empty result, or a spurious failure). ``packctl
    serve`` turns the support off (the control plane never forks without ``exec``)."""
    (tmp_path / "spawnpack.py").write_text(_SPAWN_PLUGIN)
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="spawnpack,testpacks")
    env.pop("GRPC_ENABLE_FORK_SUPPORT", None)  # as on an operator's machine
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    proc, target = start_serve(
        "--plugin", "spawnpack", "--plugin", "testpacks", "--loop", "uvloop", env=env, drain=True
    )
    try:
        with Client(target) as client, ThreadPoolExecutor(8) as pool:
            echoes = [pool.submit(client.invoke, "test.echo", {"i": i}) for i in range(400)]
            spawns = [pool.submit(client.invoke, "spawn.sh", {"n": 16}) for _ in range(12)]
            runs = [run for call in spawns for run in call.result(timeout=120).result["runs"]]
            assert all(call.result(timeout=120).result["echo"] for call in echoes)
    finally:
        err = stop_serve(proc)
        reap(proc)
    assert runs == [[0, "hi\n"]] * 192
    assert "fork" not in err, err[-2000:]
