"""What an isolation worker may read of its import path (``confine.import_paths``): the
interpreter's prefixes whole; of any other directory on the path (a ``--plugin FILE``'s
folder, a ``PYTHONPATH`` entry, a working directory) only the code Python imports."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from control_plane._features.grants.confine import import_paths


def _loose(tmp_path: Path) -> Path:
    d = tmp_path / "operator"
    (d / "pkg").mkdir(parents=True)
    (d / "pkg" / "__init__.py").write_text("")
    (d / "pkg" / "data.toml").write_text("x = 1")  # a package's data: read with it
    (d / "nsp").mkdir()
    (d / "nsp" / "mod.py").write_text("")  # a namespace package
    (d / "notes").mkdir()
    (d / "notes" / "todo.txt").write_text("secret plans")  # no code: not a package
    (d / "secrets-dir").mkdir()
    (d / "secrets-dir" / "x.py").write_text("")  # not an identifier: never imported
    (d / "__pycache__").mkdir()
    (d / "snoop_plugin.py").write_text("")
    (d / "native.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    (d / "tokens").write_text("PLANTED")
    (d / ".env").write_text("KEY=PLANTED")
    (d / "plugin.dist-info").mkdir()
    return d


def test_a_loose_directory_gives_its_code_and_its_names_nothing_else(tmp_path: Path) -> None:
    d = _loose(tmp_path)
    got = import_paths([str(d)])
    real = os.path.realpath(d)
    assert real in got.listed
    assert real not in got.code  # the folder itself is never read whole
    names = {os.path.relpath(p, real) for p in got.code if p.startswith(real + os.sep)}
    assert names == {
        "pkg",
        "nsp",
        "__pycache__",
        "snoop_plugin.py",
        "native.cpython-311-x86_64-linux-gnu.so",
        "plugin.dist-info",
    }


def test_the_interpreters_own_paths_stay_whole_and_unlisted() -> None:
    purelib = sysconfig.get_paths()["purelib"]
    got = import_paths([purelib, sysconfig.get_paths()["stdlib"]])
    assert os.path.realpath(sys.prefix) in got.code
    assert not got.listed  # beneath a prefix: already read whole


def test_a_venv_prefix_handed_over_is_whole(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "lib").mkdir(parents=True)
    (venv / "lib" / "tokens").write_text("a venv's own files are the interpreter's")
    got = import_paths([str(venv / "lib")], [str(venv)])
    assert os.path.realpath(venv) in got.code
    assert not got.listed


def test_never_the_root_nor_the_home_directory(tmp_path: Path) -> None:
    got = import_paths(["/", os.path.expanduser("~")])
    assert "/" not in got.code + got.listed
    assert os.path.realpath(os.path.expanduser("~")) not in got.code + got.listed


def test_a_missing_entry_grants_nothing(tmp_path: Path) -> None:
    got = import_paths([str(tmp_path / "gone")])
    assert not got.listed
    assert all(not p.startswith(str(tmp_path)) for p in got.code)
