"""Re-capture the real git and ssh stderr samples in this directory.

Run from the repository root: ``python3 tests/data/stderr/capture.py``. Every sample is
the verbatim stderr of a real ``git`` or ``ssh`` run against servers on 127.0.0.1 (git
daemon, smart HTTP behind Basic auth, raw TCP listeners, and ``sshd`` when
``/usr/sbin/sshd`` exists). File names are ``<expected code>--<what>.txt``; the unit
tests of ``control_plane._kernel.stderr`` feed each file to the git classifier and expect that
code. Credentials planted in URLs (``PLANTED_TOKEN``) show up in some samples: the
classifier must never let them out.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "packs"))
sys.path.insert(0, str(HERE.parent.parent))  # child_processes, for pack_servers

from pack_servers import (  # noqa: E402
    LOOPBACK,
    UNRESOLVABLE_HOST,
    BacklogFull,
    GitSmartHTTP,
    HTTPServerThread,
    QuietHandler,
    RawTCPServer,
    free_port,
    git_daemon,
    make_repo,
)

PLANTED_TOKEN = "tok-PLANTED-SECRET-4242"
BASE_ENV = {
    **os.environ,
    "LC_ALL": "C",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=2",
}


def run(argv: list[str], env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        argv,
        env={**BASE_ENV, **(env or {})},
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
        check=False,
    )
    return done.stderr.decode("utf-8", "replace")


def save(name: str, text: str) -> None:
    assert text.strip(), f"{name}: empty stderr"
    (HERE / f"{name}.txt").write_text(text)
    print(f"{name}: {text.strip().splitlines()[-1][:100]}")


def ls_remote(url: str, *extra: str) -> list[str]:
    return ["git", "-c", "credential.helper=", "ls-remote", *extra, "--", url]


class StatusHandler(QuietHandler):
    """Answers every request with the status in the path (``/s/429`` -> 429)."""

    def do_GET(self) -> None:
        status = int(self.path.split("/")[2])
        body = b"no\n"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def sshd(tmp: Path) -> Iterator[int | None]:
    """``sshd`` on loopback accepting only public keys nobody has, if installed."""
    binary = Path("/usr/sbin/sshd")
    if not binary.exists():
        yield None
        return
    Path("/run/sshd").mkdir(exist_ok=True)
    key = tmp / "host_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    port = free_port()
    config = tmp / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress {LOOPBACK}\nHostKey {key}\nPidFile {tmp}/sshd.pid\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "PubkeyAuthentication yes\nAuthorizedKeysFile /nonexistent\nStrictModes no\n"
    )
    proc = subprocess.Popen(
        [str(binary), "-D", "-e", "-f", str(config)],
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    time.sleep(0.5)
    try:
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)


def main() -> None:
    for old in HERE.glob("*.txt"):
        old.unlink()
    tmp = Path(tempfile.mkdtemp(prefix="stderr-capture-"))
    try:
        repo = make_repo(tmp)
        missing = str(tmp / "missing.git")
        save("not_found--git-local-path-missing", run(ls_remote(missing)))
        save("not_found--git-file-url-missing", run(ls_remote("file://" + missing)))
        save(
            "not_found--git-clone-unknown-branch",
            run(
                [
                    "git",
                    "clone",
                    "--depth",
                    "1",
                    "--no-local",
                    "-b",
                    "nope",
                    str(repo.path),
                    str(tmp / "c1"),
                ]
            ),
        )
        save(
            "not_found--git-clone-unknown-branch-file-url",
            run(
                [
                    "git",
                    "clone",
                    "--depth",
                    "1",
                    "-b",
                    "nope",
                    "file://" + str(repo.path),
                    str(tmp / "c2"),
                ]
            ),
        )
        with git_daemon(tmp) as port:
            save(
                "not_found--git-daemon-not-exported",
                run(ls_remote(f"git://{LOOPBACK}:{port}/missing.git")),
            )
        with git_daemon(tmp, informative_errors=True) as port:
            save(
                "not_found--git-daemon-informative",
                run(ls_remote(f"git://{LOOPBACK}:{port}/missing.git")),
            )
        with GitSmartHTTP(tmp, "alice", "right-password") as server:
            good = server.url("/missing.git").replace("://", "://alice:right-password@")
            save("not_found--git-http-404", run(ls_remote(good)))
            save("auth_failed--git-http-no-credentials", run(ls_remote(server.url("/demo.git"))))
            wrong = server.url("/demo.git").replace("://", f"://alice:{PLANTED_TOKEN}@")
            save("auth_failed--git-http-wrong-url-credentials", run(ls_remote(wrong)))
            header = f"Authorization: Bearer {PLANTED_TOKEN}"
            save(
                "auth_failed--git-http-wrong-extraheader",
                run(
                    ls_remote(server.url("/demo.git")),
                    {
                        "GIT_CONFIG_COUNT": "1",
                        "GIT_CONFIG_KEY_0": "http.extraHeader",
                        "GIT_CONFIG_VALUE_0": header,
                    },
                ),
            )
            # A caller's environment with curl tracing on: the token is in stderr itself.
            save(
                "auth_failed--git-http-traced-bearer-token",
                run(
                    ls_remote(server.url("/demo.git")),
                    {
                        "GIT_CONFIG_COUNT": "1",
                        "GIT_CONFIG_KEY_0": "http.extraHeader",
                        "GIT_CONFIG_VALUE_0": header,
                        "GIT_TRACE_CURL": "1",
                        "GIT_TRACE_CURL_NO_DATA": "1",
                        "GIT_TRACE_REDACT": "0",
                    },
                ),
            )
        with HTTPServerThread(StatusHandler) as server:
            for status, code in (
                (403, "auth_failed"),
                (429, "rate_limited"),
                (500, "network_error"),
                (502, "network_error"),
                (504, "timeout"),
            ):
                save(f"{code}--git-http-{status}", run(ls_remote(server.url(f"/s/{status}"))))
        port = free_port()
        save("network_error--git-daemon-refused", run(ls_remote(f"git://{LOOPBACK}:{port}/x")))
        save("network_error--git-http-refused", run(ls_remote(f"http://{LOOPBACK}:{port}/x")))
        save(
            "network_error--git-ssh-refused",
            run(ls_remote(f"ssh://git@{LOOPBACK}:{port}/x.git")),
        )
        save(
            "network_error--ssh-refused",
            run(["ssh", "-o", "BatchMode=yes", "-p", str(port), f"git@{LOOPBACK}", "true"]),
        )
        save(
            "network_error--git-daemon-unresolvable",
            run(ls_remote(f"git://{UNRESOLVABLE_HOST}/x")),
        )
        save(
            "network_error--git-http-unresolvable-with-token",
            run(ls_remote(f"https://user:{PLANTED_TOKEN}@{UNRESOLVABLE_HOST}/x.git")),
        )
        save(
            "network_error--git-ssh-unresolvable",
            run(ls_remote(f"ssh://git@{UNRESOLVABLE_HOST}/x.git")),
        )
        save(
            "network_error--ssh-unresolvable",
            run(["ssh", "-o", "BatchMode=yes", f"git@{UNRESOLVABLE_HOST}", "true"]),
        )
        with RawTCPServer("reset") as server:
            save(
                "network_error--git-http-reset",
                run(ls_remote(f"http://{LOOPBACK}:{server.port}/x.git")),
            )
            save(
                "network_error--git-daemon-reset",
                run(ls_remote(f"git://{LOOPBACK}:{server.port}/x.git")),
            )
        with RawTCPServer("garbage") as server:
            save(
                "network_error--git-daemon-garbage",
                run(ls_remote(f"git://{LOOPBACK}:{server.port}/x.git")),
            )
        with RawTCPServer("silent") as server:
            save(
                "timeout--git-http-low-speed",
                run(
                    [
                        "git",
                        "-c",
                        "http.lowSpeedLimit=1000",
                        "-c",
                        "http.lowSpeedTime=1",
                        "ls-remote",
                        "--",
                        f"http://{LOOPBACK}:{server.port}/x.git",
                    ]
                ),
            )
        with BacklogFull() as server:
            save(
                "timeout--ssh-connect",
                run(
                    [
                        "ssh",
                        "-o",
                        "BatchMode=yes",
                        "-o",
                        "ConnectTimeout=1",
                        "-p",
                        str(server.port),
                        f"git@{LOOPBACK}",
                        "true",
                    ]
                ),
            )
            save(
                "timeout--git-ssh-connect",
                run(
                    ls_remote(f"ssh://git@{LOOPBACK}:{server.port}/x.git"),
                    {"GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=1"},
                ),
            )
        with sshd(tmp) as port:
            if port is not None:
                lax = "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
                save(
                    "auth_failed--ssh-publickey",
                    run(
                        [
                            "ssh",
                            "-o",
                            "BatchMode=yes",
                            *lax.split(),
                            "-p",
                            str(port),
                            f"git@{LOOPBACK}",
                            "true",
                        ]
                    ),
                )
                save(
                    "auth_failed--git-ssh-publickey",
                    run(
                        ls_remote(f"ssh://git@{LOOPBACK}:{port}/demo.git"),
                        {"GIT_SSH_COMMAND": f"ssh -o BatchMode=yes {lax}"},
                    ),
                )
                strict = "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=/dev/null"
                save(
                    "auth_failed--git-ssh-host-key-unknown",
                    run(
                        ls_remote(f"ssh://git@{LOOPBACK}:{port}/demo.git"),
                        {"GIT_SSH_COMMAND": f"ssh -o BatchMode=yes {strict}"},
                    ),
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
