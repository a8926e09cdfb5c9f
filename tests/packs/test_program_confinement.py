"""Issue 41 B, from outside: the programs the built-in packs run (git, ffprobe) reach past
the path the pack checked. Each attack against a real ``packctl serve``; each reached what
it should not on main. Then the one place that confines them (``confine_program``), alone.
"""

from __future__ import annotations

import base64
import ipaddress
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pack_helpers import make_call
from pack_servers import HTTPServerThread, QuietHandler, Repo, git, git_daemon
from raw_wire import Serve, serve_env

import packs.git as git_pack
import packs.git.egress as git_egress
from control_plane._features.grpc.call_errors import PackCallError
from control_plane._features.grpc.client import Client

pytestmark = pytest.mark.system  # packctl serve, git, git daemon, ffmpeg

BUILT_INS = "hostilepacks,packs.git,packs.av_validate"
CLONE = "git.clone"
LS = "git.ls_remote"
AV = "av.validate"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """``start(*args, **env)``: a real ``packctl serve`` and a client to it."""
    started: list[tuple[Serve, Client]] = []

    def start(*args: str, **env: str) -> Client:
        db = tmp_path / f"incidents-{len(started)}.db"
        env.setdefault("CAPABILITY_PACKS_PLUGINS", BUILT_INS)
        server = Serve(db, *args, env=serve_env(db, **env))
        client = Client(server.target, timeout=60)
        started.append((server, client))
        return client

    yield start
    for server, client in started:
        client.close()
        server.stop()


def failed(client: Client, pack: str, doc: dict[str, Any]) -> Any:
    """The call fails; its envelope."""
    with pytest.raises(PackCallError) as caught:
        client.invoke(pack, doc)
    return caught.value.envelope


# -- av.validate: a playlist names files outside the grant ---------------------------------


def _media(path: Path, seconds: int, fmt: str) -> None:
    subprocess.run(
        [
            *("ffmpeg", "-v", "error", "-y", "-f", "lavfi"),
            *("-i", f"sine=frequency=440:duration={seconds}"),
            *("-c:a", "aac", "-f", fmt, str(path)),
        ],
        check=True,
    )


def test_ffprobe_reads_nothing_a_playlist_names_outside_the_grant(
    serve: Any, tmp_path: Path
) -> None:
    """On main an HLS playlist inside the read root naming a segment outside it came back
    with the segment's facts (an aac stream, its duration): ffprobe read it."""
    granted, outside = tmp_path / "granted", tmp_path / "outside"
    granted.mkdir()
    outside.mkdir()
    _media(outside / "private.ts", 3, "mpegts")
    _media(granted / "own.ts", 2, "mpegts")

    def playlist(name: str, segment: Path) -> str:
        (granted / name).write_text(
            f"#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:3.0,\n{segment}\n#EXT-X-ENDLIST\n"
        )
        return str(granted / name)

    client = serve("--grant", f"{AV}:fs.read={granted}")
    answers = []
    for segment in (outside / "private.ts", outside / "missing.ts"):
        envelope = failed(client, AV, {"path": playlist(f"{segment.stem}.m3u8", segment)})
        answers.append((envelope.code, envelope.message))
    # Refused, and the same answer whether or not the outside file exists (no oracle).
    assert answers[0][0] == "unreadable_media", answers
    assert answers[0] == answers[1], answers
    # A playlist of what the pack may read still probes.
    done = client.invoke(AV, {"path": playlist("own.m3u8", granted / "own.ts")})
    assert done.result is not None and done.result["audio"]["codec"] == "aac"


# -- git: what a clone leaves in scratch is read by the next git ----------------------------


@pytest.fixture
def private(tmp_path: Path) -> Path:
    """A private repository of the serving user's, outside every grant."""
    repo = tmp_path / "private"
    git("init", "-q", "-b", "main", str(repo))
    (repo / "secret.txt").write_text("PRIVATE-REPOSITORY-CONTENT\n")
    git("add", "secret.txt", cwd=repo)
    git("commit", "-q", "-m", "secret", cwd=repo)
    return repo


@pytest.fixture
def trap(tmp_path: Path, private: Path) -> Iterator[str]:
    """A caller's repository, served by ``git daemon`` on loopback, whose working tree
    holds a repository pointing at ``private`` (``commondir``; symlinked ``objects`` and
    ``refs``) and a ``.netrc``."""
    base = tmp_path / "served"
    work = tmp_path / "trap.work"
    git("init", "-q", "-b", "main", str(work))
    (work / "via-commondir").mkdir()
    (work / "via-commondir" / "HEAD").write_text("ref: refs/heads/main\n")
    (work / "via-commondir" / "commondir").write_text(f"{private / '.git'}\n")
    (work / "via-symlinks").mkdir()
    (work / "via-symlinks" / "HEAD").write_text("ref: refs/heads/main\n")
    (work / "via-symlinks" / "objects").symlink_to(private / ".git" / "objects")
    (work / "via-symlinks" / "refs").symlink_to(private / ".git" / "refs")
    (work / ".netrc").write_text("machine 127.0.0.1\nlogin planted\npassword PLANTED-7c1\n")
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "trap", cwd=work)
    base.mkdir()
    git("clone", "-q", "--bare", str(work), str(base / "trap.git"))
    with git_daemon(base) as port:
        yield f"git://127.0.0.1:{port}/trap.git"


LOOPBACK = ("--grant", f"{LS}:egress=loopback", "--grant", f"{CLONE}:egress=loopback")


def test_a_clone_in_scratch_cannot_point_the_next_clone_at_a_private_repository(
    serve: Any, trap: str
) -> None:
    """On main the second clone, of a repository inside the first clone (in scratch, which
    git.clone may read), copied the private repository its ``commondir`` or symlinked
    ``objects`` named."""
    client = serve(*LOOPBACK)
    first = client.invoke(CLONE, {"url": trap})
    assert first.result is not None
    for inner in ("via-commondir", "via-symlinks"):
        url = str(Path(first.result["path"]) / inner)
        try:
            second = client.invoke(CLONE, {"url": url})
        except PackCallError:
            continue  # refused or failed: nothing copied
        assert second.result is not None
        copied = Path(second.result["path"]) / "secret.txt"
        assert not copied.exists(), f"{inner}: {copied.read_text()}"


class _Recorder(QuietHandler):
    """Records every request's headers; answers 401 Basic."""

    seen: list[str] = []

    def do_GET(self) -> None:
        type(self).seen.append(str(self.headers))
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="x"')
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_a_clone_cannot_become_the_programs_home(serve: Any, trap: str) -> None:
    """On main the programs' empty ``HOME`` was ``.home`` in the scratch root: a clone with
    ``dest: ".home"`` planted a ``.netrc`` there, which git then sent for every later
    caller's http remote."""
    client = serve(*LOOPBACK)
    for dest in (".home", "../home"):
        try:
            client.invoke(CLONE, {"url": trap, "dest": dest})
        except PackCallError as exc:
            assert exc.envelope.code in ("not_permitted", "destination_unusable")
    _Recorder.seen.clear()
    with HTTPServerThread(_Recorder) as http:
        failed(client, LS, {"url": http.url("/repo.git"), "timeout": 20})
    assert _Recorder.seen, "git never reached the recorder"
    planted = base64.b64encode(b"planted:PLANTED-7c1").decode()
    assert planted not in "\n".join(_Recorder.seen)


# -- git:// is read once, and connected where it was checked --------------------------------


@pytest.fixture
def ipv6_daemon(tmp_path: Path) -> Iterator[tuple[int, str]]:
    """``git daemon`` on ``[::1]`` serving one repository."""
    base = tmp_path / "v6"
    base.mkdir()
    git("init", "-q", "--bare", str(base / "r.git"))
    work = tmp_path / "v6.work"
    git("init", "-q", "-b", "main", str(work))
    (work / "f").write_text("x\n")
    git("add", "f", cwd=work)
    git("commit", "-q", "-m", "x", cwd=work)
    git("push", "-q", str(base / "r.git"), "main", cwd=work)
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback on this host")
    with git_daemon(base, listen="::1") as port:
        yield port, "r.git"


def test_git_url_with_bracketed_userinfo_is_not_read_two_ways(
    serve: Any, ipv6_daemon: tuple[int, str]
) -> None:
    """Default grant (public addresses only). ``git://[::1]@HOST:PORT/r.git``: the check
    reads the host as ``HOST``, git as ``[::1]`` (and with an IPv4 ``HOST`` this Python's
    urllib raised: ``internal_error`` on main). Refused before anything resolves."""
    port, name = ipv6_daemon
    client = serve()
    for url in (
        f"git://[::1]@93.184.216.34:{port}/{name}",
        f"git://[::1]@repo.invalid:{port}/{name}",
        f"ssh://[::1]@93.184.216.34:{port}/{name}",
        f"ssh://-oProxyCommand=touch@repo.invalid:{port}/{name}",
        "https://stra\u00dfe.invalid/x.git",  # IDNA 2003 (Python) and UTS 46 (curl) differ
    ):
        envelope = failed(client, LS, {"url": url, "timeout": 10})
        assert envelope.code == "not_permitted", (url, envelope)


def test_git_protocol_connects_to_the_checked_address(
    monkeypatch: pytest.MonkeyPatch, git_repo: Repo, daemon_port: int
) -> None:
    """``git://repo.invalid``: the check resolved it (a table: no lookup leaves the host) to
    127.0.0.1; git connects there, not to a second answer (on main git resolved the name
    itself, and failed: docs/grants.md said git:// was pinned)."""
    monkeypatch.setattr(
        git_egress, "RESOLVER", lambda host, port: [ipaddress.ip_address("127.0.0.1")]
    )
    invoker, call = make_call(git_pack)
    try:
        outcome = call(LS, {"url": f"git://repo.invalid:{daemon_port}/{git_repo.name}"})
    finally:
        invoker.close()
    assert outcome.ok, outcome.to_dict()
    assert outcome.result is not None
    assert {r["name"] for r in outcome.result["refs"]} >= {"refs/heads/main"}
    assert outcome.result["url"] == f"git://repo.invalid:{daemon_port}/{git_repo.name}"
