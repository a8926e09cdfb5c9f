"""The attack pass over pack isolation (issues 41 and 42): a hostile ``--isolate``d pack
against a real ``packctl serve``, going beyond ``test_isolation_escapes.py``: the reply
channel, the describing worker, the worker's resources."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from raw_wire import Received, Serve, call_raw, serve_env

from control_plane._features.grants.confine import kernel_support
from control_plane._features.isolation import isolation
from control_plane.v1 import control_plane_pb2 as pb

pytestmark = pytest.mark.system

PACK = "attack.probe"
HERE = Path(__file__).resolve().parent


class Attack:
    def __init__(self, root: Path) -> None:
        plugin_dir = root / "plugin"
        plugin_dir.mkdir()
        shutil.copy(HERE / "attack_pack.py", plugin_dir / "attack_pack.py")
        env = serve_env(root / "incidents.db", CAPABILITY_PACKS_PLUGINS="attack_pack")
        self.server = Serve(
            root / "incidents.db",
            "--isolate",
            PACK,
            "--isolation-workers",
            "1",
            env=env,
            plugin=str(plugin_dir / "attack_pack.py"),
        )

    def call(self, doc: dict[str, Any], timeout: float = 30, pack: str = PACK) -> Received:
        request = pb.InvokePackRequest(pack=pack, input=json.dumps(doc).encode())
        return call_raw(
            self.server.channel, "InvokePack", request.SerializeToString(), timeout=timeout
        )


@pytest.fixture(scope="module")
def attack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Attack]:
    if kernel_support()[0] < 1:
        pytest.skip(kernel_support()[1])
    found = Attack(tmp_path_factory.mktemp("attack"))
    try:
        yield found
    finally:
        found.server.stop()
        found.server.kill()


def test_a_reply_header_without_its_bytes_does_not_wedge_the_pool(attack: Attack) -> None:
    """The worker sends a reply's length and never its bytes, and a child of its own session
    keeps the socket open after the worker is killed at the deadline: the read of the reply
    waited for ever, holding the pool's only worker (every later call waited out its own
    deadline). Killing a worker now shuts the control plane's end of its socket."""
    wedged = attack.call({"mode": "wedge", "hold": 30}, timeout=3)
    assert wedged.code == "timeout", (wedged.code, wedged.message)
    time.sleep(0.5)
    started = time.monotonic()
    after = attack.call({}, timeout=10)
    assert after.code == "ok", (after.code, after.message, "".join(attack.server.stderr)[-2000:])
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("pack", "allowed"),
    [
        (PACK, set()),
        ("attack.unix_only", {"unix"}),
        ("attack.ip_only", {"inet", "inet6", "netlink"}),
    ],
)
def test_a_worker_makes_only_the_socket_families_its_reach_needs(
    attack: Attack, pack: str, allowed: set[str]
) -> None:
    """The seccomp filter listed the families it refused (AF_INET, AF_INET6, AF_PACKET for
    a pack granted no egress): a pack with ambient credentials and no egress, or with
    egress, made AF_VSOCK sockets (a network to the hypervisor's host that no grant
    checks), and the first AF_NETLINK too. Now it lists the families it allows."""
    got = attack.call({"mode": "families"}, pack=pack)
    assert got.code == "ok", (got.code, got.message)
    assert isinstance(got.result, dict)
    made = {name for name, outcome in got.result.items() if outcome == "made"}
    assert made <= allowed, got.result
    refused = {name: got.result[name] for name in set(got.result) - allowed}
    assert set(refused.values()) <= {"EACCES", "EAFNOSUPPORT"}, got.result


def test_what_a_worker_prints_never_passes_for_the_control_planes_own_lines(
    attack: Attack,
) -> None:
    """A worker's stdout and stderr reached the control plane's stderr as they were: a JSON
    log record or a ``packctl:`` line printed by the pack was the control plane's own to any
    reader, and terminal control sequences (colours, an OSC title, backspaces, a carriage
    return) drove the operator's terminal. Each relayed line now names its process, with
    its control characters spelled out."""
    got = attack.call({"mode": "forge"})
    assert got.code == "ok", (got.code, got.message)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(
        "written" in line for line in attack.server.stderr
    ):
        time.sleep(0.05)
    lines = "".join(attack.server.stderr).splitlines()
    label = f"[isolated worker of {PACK}] "
    forged = [line for line in lines if "forged by a pack" in line]
    assert len(forged) == 2, lines
    assert all(line.startswith(label) for line in forged), forged
    shown = [line for line in lines if "colour" in line or "written" in line]
    assert shown == [
        label + "colour \\x1b[31mred\\x1b]0;a title\\x07 back\\x08\\x08 over\\x0dwritten"
    ], shown
    assert not any(ch in "".join(lines) for ch in "\x1b\x07\x08\r"), lines


def test_a_pack_writing_the_scratch_root_cannot_plant_the_programs_home(attack: Attack) -> None:
    """The HOME of every program run without ambient credentials (git for git.clone,
    ffprobe for av.validate) was ``.home`` inside the scratch root: a pack declaring
    ``writes=("$SCRATCH",)`` (as git.clone does, as the authoring guide shows) chmodded it
    and planted a ``.gitconfig`` (``url.insteadOf`` sends every later clone elsewhere;
    ``core.hooksPath`` runs a program). It now lives beside the scratch root."""
    got = attack.call({"mode": "plant_home"}, pack="attack.scratch_writer")
    assert got.code == "ok", (got.code, got.message)
    assert isinstance(got.result, dict)
    assert got.result["planted"] is False, got.result
    assert not Path(got.result["home"], ".gitconfig").exists()


HANGING_MODULE = """
import os, struct, sys, time

# In the describing worker, at import: a reply header promising bytes, then silence.
os.write(int(sys.argv[2]), struct.pack("!i", 1000))
time.sleep(600)


def register_packs(register):
    pass
"""


def test_a_describing_worker_that_sends_half_a_reply_is_cut_at_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The describe timeout held only until the first byte of the reply arrived: a module
    that sent a length header and nothing else held ``packctl serve``'s start for ever."""
    (tmp_path / "attack_half_reply.py").write_text(HANGING_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    started = time.monotonic()
    got = isolation.describe_module("attack_half_reply", timeout=3.0)
    assert time.monotonic() - started < 10
    assert got == {"kind": "error", "error": "describing it took longer than 3s"}
