"""``packctl describe`` from a wheel install points at pack pages that exist (issue 38,
item 9): the wheel ships docs/packs (``control_plane/_docs/packs``), and describe names the
installed file instead of a ``docs/packs/...`` path only a source checkout has."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.system  # a wheel built and installed into a fresh venv

ROOT = Path(__file__).resolve().parent.parent


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CAPABILITY_PACKS_PLUGINS")
    }
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_describe_from_a_wheel_names_a_page_that_exists(tmp_path: Path) -> None:
    built = _run(
        [
            sys.executable,
            "-c",
            "import sys; from hatchling.build import build_wheel; print(build_wheel(sys.argv[1]))",
            str(tmp_path),
        ],
        ROOT,
    )
    assert built.returncode == 0, built.stderr
    wheel = tmp_path / built.stdout.strip().splitlines()[-1]
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        assert "control_plane/_docs/packs/http.fetch.md" in zf.namelist()
        zf.extractall(site)
    # The unpacked wheel stands in for site-packages; run from a directory with no docs/.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _run(
        [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {str(site)!r}); "
            "from control_plane._features.cli.cli import main; "
            "sys.exit(main(['describe', 'http.fetch', '--local']))",
        ],
        elsewhere,
    )
    assert done.returncode == 0, done.stderr
    found = re.search(r"Full page: (\S+?)\.?$", done.stdout, re.M)
    assert found is not None, done.stdout
    page = Path(found.group(1))
    assert page.is_absolute() and page.is_file(), page
    assert page.is_relative_to(site)
    assert page.read_text().startswith("#")
