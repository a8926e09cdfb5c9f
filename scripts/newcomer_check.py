#!/usr/bin/env python3
"""README's first command as a newcomer types it, on the system's own Python.

    python scripts/newcomer_check.py [--repo PATH] [--python-path DIRS] [--timeout S]

Clones the repository (its committed HEAD) into a scratch directory, runs
``./scripts/dev serve --address 127.0.0.1:0`` there with a stock ``PATH`` (so ``python3`` is
the distribution's Python: on Debian/Ubuntu ``/usr/bin/python3``, externally managed under
PEP 668, no virtual environment active), waits until the server's health check answers
``SERVING``, then makes the first call README's quickstart makes, with the server's default
grants: ``av.validate`` (``--strict``) on a two-second clip made with ``ffmpeg`` under the
temporary directory, which av.validate reads by default (docs/grants.md; no traffic beyond
this machine but the package downloads of the setup). It stops the server with SIGTERM and
checks that it exits 0. On the way it calls ``git.ls_remote`` on a ``.invalid`` URL with a
password in it, which must fail (``network_error``: the name does not resolve, checked
before git runs) with the password redacted: the scrubber, on that Python.
Prints the Python it ran on and the time from ``git clone`` to the first successful call.
Exit 0 when all of that worked, 1 otherwise.

.ci/run runs it after the tests; it needs the project installed in the Python that runs it
(for the gRPC client), not in the system Python.
"""

from __future__ import annotations

import argparse
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: PATH of a fresh login on Debian/Ubuntu: no pyenv, no active virtual environment.
STOCK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SERVING = re.compile(r"serving (\d+) pack\(s\) on (127\.0\.0\.1:\d+)")


def _fail(message: str) -> int:
    print(f"newcomer check: FAILED: {message}", file=sys.stderr)
    return 1


def _describe_python(python: str) -> str:
    code = (
        "import os, sys, sysconfig; "
        "em = os.path.exists(os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')); "
        "venv = sys.prefix != sys.base_prefix; "
        "print(sys.executable, sys.version.split()[0], 'a virtual environment' if venv else "
        "'externally-managed (PEP 668)' if em else 'pip allowed')"
    )
    done = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, check=False, timeout=30
    )
    return done.stdout.strip() or done.stderr.strip()


def _newcomer_env(path: str) -> dict[str, str]:
    keep = ("HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TERM", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["PATH"] = path
    return env


#: A password that must not come back in any field of the failure it causes.
CANARY = "N3wc0merCanary9x"


def _scrubber_leak(client: Any) -> str | None:
    """Call git.ls_remote on a URL with a password; say what leaked it, if anything did."""
    from control_plane.embed import PackCallError

    url = f"https://newcomer:{CANARY}@capability-packs-newcomer.invalid/repo.git"
    try:
        client.invoke("git.ls_remote", {"url": url, "timeout": 20}, timeout=60)
    except PackCallError as exc:
        seen = exc.envelope.model_dump_json()
        if CANARY in seen:
            return f"the scrubber let a URL password through on this interpreter: {seen}"
        print(f"newcomer check: scrubber ok: {exc.code}, the password redacted", file=sys.stderr)
        return None
    return "git.ls_remote on a .invalid host succeeded"


#: README's quickstart clip: two seconds of test pattern and tone.
CLIP_COMMAND = (
    *("-v", "error", "-f", "lavfi", "-i", "testsrc=duration=2:size=320x240:rate=25"),
    *("-f", "lavfi", "-i", "sine=duration=2", "-shortest"),
)


def _make_clip(scratch: Path, env: dict[str, str]) -> Path | str:
    """The quickstart's clip under ``scratch`` (inside the temporary directory, which
    av.validate reads by default), or why it could not be made."""
    ffmpeg = shutil.which("ffmpeg", path=env["PATH"])
    if ffmpeg is None:
        return "no ffmpeg on the PATH (README's quickstart makes its clip with it)"
    clip = scratch / "clip.mp4"
    print(f"$ ffmpeg {' '.join(CLIP_COMMAND)} {clip}", file=sys.stderr)
    done = subprocess.run(
        [ffmpeg, *CLIP_COMMAND, str(clip)],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        return f"ffmpeg could not make the clip: {done.stderr.strip()[-500:]}"
    return clip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=str(ROOT), help="repository to clone (default: this)")
    parser.add_argument(
        "--python-path",
        default=STOCK_PATH,
        metavar="DIRS",
        help="the newcomer's PATH, which decides their python3 (default: a stock PATH)",
    )
    parser.add_argument("--timeout", type=float, default=900.0, metavar="S")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument(
        "--as-user",
        default=None,
        metavar="NAME",
        help="(as root) run the command as this user, with a scratch HOME: not root",
    )
    args = parser.parse_args(argv)

    from control_plane._features.grpc.client import Client

    python3 = shutil.which("python3", path=args.python_path)
    if python3 is None:
        return _fail(f"no python3 on {args.python_path}")
    print(f"newcomer check: python3 is {_describe_python(python3)}", file=sys.stderr)
    scratch = Path(tempfile.mkdtemp(prefix="newcomer-"))
    clone = scratch / "capability-packs"
    env = _newcomer_env(args.python_path)
    started = time.monotonic()
    proc: subprocess.Popen[str] | None = None
    try:
        print(f"$ git clone {args.repo} {clone}", file=sys.stderr)
        subprocess.run(
            ["git", "clone", "--quiet", args.repo, str(clone)], check=True, env=env, timeout=300
        )
        clip = _make_clip(scratch, env)
        if isinstance(clip, str):
            return _fail(clip)
        command = ["./scripts/dev", "serve", "--address", "127.0.0.1:0"]
        print(f"$ cd {clone} && {' '.join(command)}", file=sys.stderr)
        if args.as_user:
            home = scratch / "home"
            home.mkdir()
            env.update(HOME=str(home), USER=args.as_user, LOGNAME=args.as_user)
            subprocess.run(["chown", "-R", args.as_user, str(scratch)], check=True)
            scratch.chmod(0o755)
            # setpriv, not runuser/su: they reset HOME to the passwd entry's.
            gid = pwd.getpwnam(args.as_user).pw_gid
            command = [
                "setpriv",
                f"--reuid={args.as_user}",
                f"--regid={gid}",
                "--init-groups",
                "--",
                *command,
            ]
            print(f"  (as user {args.as_user}, HOME={home})", file=sys.stderr)
        proc = subprocess.Popen(
            command,
            cwd=clone,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        found: list[str] = []
        lines: list[str] = []

        def read() -> None:
            assert proc is not None and proc.stderr is not None
            for line in proc.stderr:
                lines.append(line)
                if not found:
                    sys.stderr.write("  | " + line)
                    match = SERVING.search(line)
                    if match:
                        found.append(match.group(2))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = started + args.timeout
        while not found and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        if not found:
            return _fail(
                f"scripts/dev serve did not come up (exit {proc.poll()}):\n" + "".join(lines[-40:])
            )
        target = found[0]
        setup_done = time.monotonic()
        with Client(target, timeout=30) as client:
            status = client.health("", timeout=30)
            if status != "SERVING":
                return _fail(f"health is {status}")
            expect = {"duration": 2, "video_codec": "h264"}
            outcome = client.invoke(
                "av.validate", {"path": str(clip), "expect": expect}, strict=True
            )
            first_call = time.monotonic()
            # The scrubber on this interpreter: a failure whose message carries a password
            # (a .invalid host: the lookup fails without leaving this machine).
            leaked = _scrubber_leak(client)
        if leaked:
            return _fail(leaked)
        duration = outcome.result.get("duration") if isinstance(outcome.result, dict) else None
        if not isinstance(duration, int | float) or abs(duration - 2) > 0.5:
            return _fail(f"av.validate on the clip did not find its 2 s: {outcome.result!r}")
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
        reader.join(10)
        if code != 0:
            return _fail(f"packctl serve exited {code} on SIGTERM:\n" + "".join(lines[-20:]))
        print(
            f"newcomer check: ok on {_describe_python(str(clone / '.venv' / 'bin' / 'python'))}"
            f" (.venv of {python3}): health SERVING, av.validate --strict passed "
            f"({duration:.1f} s h264 clip), "
            f"SIGTERM -> exit 0\n"
            f"newcomer check: clone -> serving {setup_done - started:.1f}s, "
            f"clone -> first successful call {first_call - started:.1f}s",
            file=sys.stderr,
        )
        return 0
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"newcomer check: kept {scratch}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
