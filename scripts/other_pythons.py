"""The CPythons this machine has, besides the one running the whole suite.

Prints one ``VERSION PATH`` line per distinct CPython (by full version) that the project
supports (``requires-python``), found on ``PATH`` (``python3.X``), in the system's own
directories and among pyenv's installed versions (whose shims refuse a version that is not
the selected one, so the interpreters themselves are asked). ``.ci/run`` runs the core tests
on each. Usage: ``python scripts/other_pythons.py [--exclude PYTHON] [VERSION ...]`` where
``VERSION`` (``3.12``) limits the search; a version asked for and not found is printed as
``VERSION ABSENT``.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys

MINIMUM = (3, 11)
MINORS = range(MINIMUM[1], 20)


def _candidates() -> list[str]:
    found: list[str] = []
    for minor in MINORS:
        name = f"python3.{minor}"
        on_path = shutil.which(name)
        if on_path:
            found.append(on_path)
        found += [f"{d}/{name}" for d in ("/usr/bin", "/usr/local/bin")]
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found += sorted(glob.glob(f"{root}/versions/3.*/bin/python3"))
    return found


def _identify(path: str) -> tuple[str, str] | None:
    """``(full version, executable)`` of a CPython at ``path``, or ``None``."""
    probe = "import sys, platform; print(platform.python_implementation(), " + (
        "'.'.join(map(str, sys.version_info[:3])), sys.executable)"
    )
    try:
        done = subprocess.run(
            [path, "-I", "-c", probe], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return None
    parts = done.stdout.split()
    if done.returncode != 0 or len(parts) != 3 or parts[0] != "CPython":
        return None
    return parts[1], parts[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exclude", default=sys.executable, help="the whole suite's python")
    parser.add_argument("versions", nargs="*", help="limit to these X.Y versions")
    args = parser.parse_args()
    excluded = _identify(args.exclude)
    seen: dict[str, str] = {}
    for path in _candidates():
        if not os.access(path, os.X_OK):
            continue
        found = _identify(path)
        if found is None or found[0] in seen:
            continue
        version, executable = found
        if tuple(int(p) for p in version.split(".")[:2]) < MINIMUM:
            continue
        if excluded is not None and version == excluded[0]:
            continue
        seen[version] = executable
    wanted = args.versions
    for version, executable in sorted(
        seen.items(), key=lambda kv: [int(p) for p in kv[0].split(".")]
    ):
        if not wanted or any(version == w or version.startswith(w + ".") for w in wanted):
            print(version, executable)
    for w in wanted:
        if not any(v == w or v.startswith(w + ".") for v in seen):
            print(w, "ABSENT")
    return 0


if __name__ == "__main__":
    sys.exit(main())
