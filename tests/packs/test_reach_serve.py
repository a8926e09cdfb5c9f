"""Issue 33, from outside: an untrusted caller steering the built-in packs of a real
``packctl serve`` (default settings unless a test says otherwise) at what they must not reach.

Each test is one attack of the issue; each failed on main (the pack did what the caller
asked). Remotes are real: ``git daemon`` and raw TCP listeners on 127.0.0.1, repositories the
test builds; the media pack reads real files.
"""

from __future__ import annotations

import base64
import os
import re
import threading
import time
import urllib.request
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pack_servers import HTTPServerThread, QuietHandler, RawTCPServer, Repo, git, git_daemon
from raw_wire import Serve, serve_env

from control_plane._features.grpc.call_errors import PackCallError
from control_plane._features.grpc.client import Client

#: The built-in packs under test (and the hostile test plugin that Serve adds).
BUILT_INS = "hostilepacks,packs.git,packs.av_validate"
CLONE = "git.clone"
LS = "git.ls_remote"
AV = "av.validate"
#: The operator's word that the git packs may reach the tests' loopback servers.
LOOPBACK_GRANTS = (
    *("--grant", f"{LS}:egress=public,loopback"),
    *("--grant", f"{CLONE}:egress=public,loopback"),
)

pytestmark = pytest.mark.system  # git, git daemon and ffmpeg


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """``start(*args, **env)``: a real ``packctl serve`` and a client to it. The test
    remotes are on loopback, so the git packs are granted it (``LOOPBACK_GRANTS``); their
    default egress, public only, is tested in tests/packs/test_git_egress.py."""
    started: list[tuple[Serve, Client]] = []

    def start(*args: str, **env: str) -> tuple[Serve, Client]:
        db = tmp_path / f"incidents-{len(started)}.db"
        env.setdefault("CAPABILITY_PACKS_PLUGINS", BUILT_INS)
        server = Serve(db, *LOOPBACK_GRANTS, *args, env=serve_env(db, **env))
        client = Client(server.target, timeout=60)
        started.append((server, client))
        return server, client

    yield start
    for server, client in started:
        client.close()
        server.stop()


def refused(client: Client, pack: str, doc: dict[str, Any], **kwargs: Any) -> str:
    """The call fails with not_permitted (permanent); its message."""
    with pytest.raises(PackCallError) as caught:
        client.invoke(pack, doc, **kwargs)
    envelope = caught.value.envelope
    assert envelope.code == "not_permitted", envelope
    assert envelope.retryable is False
    return envelope.message


@pytest.fixture
def daemon(git_repo: Repo, daemon_port: int) -> str:
    """A git:// URL of the test repository, served by ``git daemon`` on loopback."""
    return f"git://127.0.0.1:{daemon_port}/{git_repo.name}"


# -- git.clone writes only where it is granted ---------------------------------------------


def test_clone_dest_outside_the_write_root_is_refused(
    serve: Any, daemon: str, tmp_path: Path
) -> None:
    """Absolute, ``../`` and symlinked destinations outside the grant (on main: a clone into
    ``~/.ssh`` or ``site-packages/usercustomize``, parents created)."""
    outside = tmp_path / "home" / ".ssh"
    clones = tmp_path / "clones"
    clones.mkdir()
    (clones / "link").symlink_to(tmp_path / "home", target_is_directory=True)
    _, client = serve("--grant", f"git.clone:fs.write={clones}")
    for dest in (
        str(outside),
        str(clones / ".." / "home" / "planted"),
        "../../home/relative",
        str(clones / "link" / "via-symlink"),
    ):
        message = refused(client, CLONE, {"url": daemon, "dest": dest})
        assert "outside what this pack may write" in message
    assert not (tmp_path / "home").exists() or not any((tmp_path / "home").iterdir())
    # Inside the grant it works, and the clone lands where asked.
    done = client.invoke(CLONE, {"url": daemon, "dest": "kept"})
    assert done.result is not None and done.result["path"] == str(clones / "kept")
    assert (clones / "kept" / "README.md").is_file()


def test_default_clone_dest_is_refused_outside_the_scratch_root(
    serve: Any, daemon: str, tmp_path: Path
) -> None:
    """No configuration: ``dest`` anywhere but the server's scratch directory is refused."""
    _, client = serve()
    refused(client, CLONE, {"url": daemon, "dest": str(tmp_path / "anywhere")})
    assert not (tmp_path / "anywhere").exists()


def test_a_timed_out_clone_deletes_nothing_it_did_not_create(serve: Any, tmp_path: Path) -> None:
    """On main a timed-out clone into an existing empty ``dest`` emptied it, deleting what
    another process wrote there meanwhile."""
    dest = tmp_path / "shared"
    dest.mkdir()
    _, client = serve("--grant", f"git.clone:fs.write={tmp_path}")
    with RawTCPServer("silent") as silent:
        url = f"git://127.0.0.1:{silent.port}/repo.git"
        result: dict[str, Any] = {}

        def call() -> None:
            try:
                client.invoke(CLONE, {"url": url, "dest": str(dest), "timeout": 3})
            except PackCallError as exc:
                result["code"] = exc.envelope.code

        thread = threading.Thread(target=call)
        thread.start()
        time.sleep(1.0)
        (dest / "theirs.txt").write_text("another process's file\n")
        thread.join(30)
    assert result.get("code") == "timeout", result
    assert (dest / "theirs.txt").read_text() == "another process's file\n"
    # And the call's own work directory is gone: nothing of ours is left beside dest.
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".shared")) == []


def test_clones_without_dest_do_not_pile_up(serve: Any, daemon: str) -> None:
    """On main every clone without dest stayed in the temp dir forever. Now they live in the
    server's scratch root, at most ``SCRATCH_KEEP`` of them, and the root goes with the server."""
    server, client = serve(CAPABILITY_PACKS_SCRATCH_KEEP="3")
    paths = []
    for _ in range(5):
        done = client.invoke(CLONE, {"url": daemon})
        assert done.result is not None
        paths.append(Path(done.result["path"]))
    roots = {p.parent for p in paths}
    assert len(roots) == 1, roots
    (root,) = roots
    assert root.name.startswith("capability-packs-scratch-")
    assert len([p for p in paths if p.exists()]) <= 3
    assert paths[-1].exists()
    client.close()
    server.stop()
    assert not root.exists()


# -- local repositories and ambient credentials --------------------------------------------


def test_local_remotes_need_a_read_grant(serve: Any, git_repo: Repo, tmp_path: Path) -> None:
    """On main ``file://`` and plain paths listed and cloned any repository on the server."""
    _, client = serve()
    missing = git_repo.root / "missing.git"
    messages = {
        refused(client, pack, {"url": url})
        for pack in (LS, CLONE)
        for url in (str(git_repo.path), git_repo.path.as_uri(), str(missing))
    }
    assert len(messages) == 1, messages  # the same answer whether a repository is there
    # Granted, it works.
    _, granted = serve("--grant", f"git.ls_remote:fs.read={git_repo.root}")
    done = granted.invoke(LS, {"url": git_repo.path.as_uri()})
    assert done.result is not None and done.result["count"] >= 3


class _Recorder(QuietHandler):
    """Records every request's headers; answers 404."""

    seen: list[str] = []

    def do_GET(self) -> None:
        type(self).seen.append(str(self.headers))
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="x"')
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_the_serving_users_netrc_and_gitconfig_are_not_sent(serve: Any, tmp_path: Path) -> None:
    """On main the serving user's ``~/.netrc`` and ``~/.gitconfig`` ``http.extraHeader`` went
    to a caller-chosen URL."""
    home = tmp_path / "serving-user"
    home.mkdir()
    with HTTPServerThread(_Recorder) as http:
        (home / ".gitconfig").write_text(
            "[http]\n\textraHeader = X-Ambient: gitconfig-SECRET-0d1e\n"
        )
        (home / ".netrc").write_text(
            "machine 127.0.0.1\nlogin ambient\npassword netrc-SECRET-7f2a\n"
        )
        (home / ".netrc").chmod(0o600)
        _Recorder.seen.clear()
        _, client = serve(HOME=str(home))
        with pytest.raises(PackCallError):
            client.invoke(LS, {"url": http.url("/repo.git"), "timeout": 20})
    seen = "\n".join(_Recorder.seen)
    assert _Recorder.seen, "git never reached the recorder"
    assert "gitconfig-SECRET" not in seen
    netrc = base64.b64encode(b"ambient:netrc-SECRET-7f2a").decode()
    assert netrc not in seen


def _cmdlines() -> list[bytes]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    found.append(fh.read())
            except OSError:
                continue
    return found


def test_a_token_in_the_url_query_never_reaches_a_command_line(serve: Any) -> None:
    """On main ``?private_token=`` (and a token as the URL's user name) sat in git's
    world-readable ``/proc/PID/cmdline``."""
    token = "glpat-PLANTED-query-4c1d9e"
    github = "ghp_" + "PLANTEDusername0123456789abcdefghij"
    _, client = serve()
    with RawTCPServer("silent") as silent:
        urls = (
            f"http://127.0.0.1:{silent.port}/group/repo.git?private_token={token}",
            f"http://{github}@127.0.0.1:{silent.port}/group/repo.git",
        )
        seen: list[bytes] = []
        stop = threading.Event()

        def spy() -> None:
            while not stop.is_set():
                seen.extend(c for c in _cmdlines() if token.encode() in c or github.encode() in c)
                time.sleep(0.05)

        thread = threading.Thread(target=spy)
        thread.start()
        try:
            messages = [refused(client, LS, {"url": url, "timeout": 3}) for url in urls]
        finally:
            time.sleep(0.5)
            stop.set()
            thread.join()
    for message in messages:
        assert "credential" in message and token not in message and github not in message
    assert seen == []


# -- bounded output, cancellation ----------------------------------------------------------


def test_ls_remote_stops_reading_past_limit(serve: Any, tmp_path: Path, git_repo: Repo) -> None:
    """On main all of git's output was buffered whatever ``limit`` said."""
    repo = tmp_path / "many.git"
    git("clone", "-q", "--bare", str(git_repo.path), str(repo))
    sha = git("rev-parse", "HEAD", cwd=repo)
    with open(repo / "packed-refs", "a", encoding="ascii") as fh:
        for i in range(20000):
            fh.write(f"{sha} refs/tags/t{i:06d}\n")
    _, client = serve()
    with git_daemon(tmp_path) as port:
        done = client.invoke(LS, {"url": f"git://127.0.0.1:{port}/many.git", "limit": 10})
    assert done.result is not None
    assert len(done.result["refs"]) == 10 and done.result["truncated"] is True
    assert done.result["count"] == 11  # git was stopped right after the limit


def test_a_cancelled_git_call_kills_git(serve: Any) -> None:
    """The caller cancels (no deadline): on main git ran on until its own ``timeout``
    (here 300 s), holding its thread; now the pack kills it within a few seconds."""
    import grpc
    import orjson

    from control_plane.v1 import control_plane_pb2 as pb
    from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

    server, _ = serve()
    with RawTCPServer("silent") as silent, grpc.insecure_channel(server.target) as channel:
        url = f"git://127.0.0.1:{silent.port}/hang.git"
        marker = f"127.0.0.1:{silent.port}".encode()
        stub = pb_grpc.ControlPlaneServiceStub(channel)
        doc = orjson.dumps({"url": url, "timeout": 300})
        call = stub.InvokePack.future(pb.InvokePackRequest(pack=LS, input=doc))
        deadline = time.monotonic() + 10
        while not any(marker in c for c in _cmdlines()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any(marker in c for c in _cmdlines()), "git never started"
        call.cancel()
        deadline = time.monotonic() + 5
        alive = [c for c in _cmdlines() if marker in c]
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = [c for c in _cmdlines() if marker in c]
    assert alive == [], alive


# -- av.validate ---------------------------------------------------------------------------


def test_av_validate_is_no_file_existence_oracle(serve: Any, tmp_path: Path) -> None:
    """On main ``not_found`` vs ``unreadable_media`` told whether any path on the server
    existed, and a text file "probed" as ``tty`` with its size."""
    server, client = serve("--metrics-port", "0")
    messages = {
        refused(client, AV, {"path": path})
        for path in ("/etc/passwd", "/etc/no-such-file", "/root/.ssh/id_rsa", "/proc/self/environ")
    }
    assert len(messages) == 1, messages
    assert "outside what this pack may read" in messages.pop()
    # Inside its default roots ($CWD, $TMP): a text file is not media.
    text = tmp_path / "notes.txt"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n" * 50)
    with pytest.raises(PackCallError) as caught:
        client.invoke(AV, {"path": str(text)})
    assert caught.value.envelope.code == "unreadable_media"
    # A symlink inside the roots that points outside is outside.
    (tmp_path / "passwd-link.mp4").symlink_to("/etc/passwd")
    refused(client, AV, {"path": str(tmp_path / "passwd-link.mp4")})
    # The start-up line says what the pack reads.
    assert any("av.validate reads" in line for line in server.stderr), server.stderr
    # Refusals by grant are counted like every other code.
    (metrics,) = [
        m.group(1)
        for line in server.stderr
        if (m := re.search(r"metrics on (http://127\.0\.0\.1:\d+/metrics)", line))
    ]
    with urllib.request.urlopen(metrics, timeout=10) as answer:
        text = answer.read().decode()
    counted = re.search(
        r'^capability_packs_invocations_total\{[^}]*code="not_permitted"[^}]*pack="av.validate"'
        r"[^}]*\} (\d+)",
        text,
        flags=re.M,
    ) or re.search(
        r'^capability_packs_invocations_total\{[^}]*pack="av.validate"[^}]*code="not_permitted"'
        r"[^}]*\} (\d+)",
        text,
        flags=re.M,
    )
    assert counted is not None, text
    assert float(counted.group(1)) == 5


# -- kernel confinement of an isolated pack ------------------------------------------------


def test_an_isolated_pack_is_held_by_the_kernel(serve: Any, tmp_path: Path) -> None:
    """``hostile.reach`` opens files itself, behind ``ctx.reach``'s back; isolated, Landlock
    holds it to its grant."""
    from control_plane._features.grants.confine import kernel_support

    if kernel_support()[0] <= 0:
        pytest.skip(kernel_support()[1])
    granted = tmp_path / "granted"
    granted.mkdir()
    (granted / "ok.txt").write_text("granted data\n")
    out = tmp_path / "out"
    out.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the pack\n")
    server, client = serve(
        "--plugin",
        "reach_packs",
        "--isolate",
        "hostile.reach",
        "--grant",
        f"hostile.reach:fs.read={granted}",
        "--grant",
        f"hostile.reach:fs.write={out}",
        CAPABILITY_PACKS_PLUGINS=f"{BUILT_INS},reach_packs",
    )

    def run(doc: dict[str, str]) -> dict[str, Any]:
        done = client.invoke("hostile.reach", doc)
        assert done.result is not None
        return done.result

    assert run({"read": str(granted / "ok.txt")})["read"] == "read: granted data\n"
    for path in ("/etc/passwd", "/etc/group", str(secret)):
        assert run({"read": path})["read"] == "refused: PermissionError", path
    assert run({"write": str(out / "fine.txt")})["write"] == "written"
    assert run({"write": str(tmp_path / "planted.txt")})["write"] == "refused: PermissionError"
    assert not (tmp_path / "planted.txt").exists()
    assert any("Landlock" in line for line in server.stderr), server.stderr


def test_isolated_built_in_packs_still_work_under_landlock(
    serve: Any, daemon: str, tmp_path: Path
) -> None:
    """The kernel confinement holds the built-in packs to their grants without breaking
    them: git (its helpers, TLS files, scratch root) and ffprobe run in a confined worker."""
    media = tmp_path / "tone.wav"
    with wave.open(str(media), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\0\0" * 8000)
    server, client = serve("--isolate", "git.clone", "--isolate", "av.validate")
    done = client.invoke(CLONE, {"url": daemon})
    assert done.result is not None and Path(done.result["path"], "README.md").is_file()
    probed = client.invoke(AV, {"path": str(media), "expect": {"duration": 1}})
    assert probed.result is not None and probed.result["duration"] == pytest.approx(1, abs=0.01)
    refused(client, AV, {"path": "/etc/passwd"})
    from control_plane._features.grants.confine import kernel_support

    said = kernel_support()[1]  # Landlock's ABI, or why there is none: said, not silent
    assert any(said in line for line in server.stderr), server.stderr
