#!/usr/bin/env python3
"""Regenerate the Python gRPC code in ``control_plane/v1/`` from ``proto/``.

    python3 scripts/gen_proto.py          # rewrite control_plane/v1/*_pb2*.py[i]
    python3 scripts/gen_proto.py --check  # regenerate into a temp dir; exit 1 on any difference

The proto root is ``proto/``, so the generated imports read ``from control_plane.v1 import
control_plane_pb2``. Messages come from grpcio-tools' protoc, typing stubs (``.pyi``) from
mypy-protobuf. ``--check`` ignores only the generator version stamps (the protobuf runtime
version check and ``GRPC_GENERATED_VERSION``), so a newer grpcio-tools on CI does not fail
the check while any change to the proto does.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PACKAGE_DIR = Path("control_plane") / "v1"
OUT_DIR = ROOT / PACKAGE_DIR
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")
INIT_TEXT = '"""Generated gRPC code for control_plane.v1 (scripts/gen_proto.py); do not edit."""\n'

# Lines that only record which generator version ran.
_VERSION_STAMPS = (
    re.compile(r"^# Protobuf Python Version: .*$", re.M),
    re.compile(r"_runtime_version\.ValidateProtobufRuntimeVersion\([^)]*\)", re.S),
    re.compile(r"^GRPC_GENERATED_VERSION = .*$", re.M),
)


def _plugin(name: str) -> str:
    """Path of a protoc plugin installed next to this Python (or on PATH)."""
    scripts = Path(sysconfig.get_path("scripts"))
    for candidate in (scripts / name, Path(sys.executable).parent / name):
        if candidate.is_file():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        sys.exit(f"gen_proto: {name} not found; install the dev extras (mypy-protobuf)")
    return found


def _protos() -> list[Path]:
    return sorted((PROTO_ROOT / PACKAGE_DIR).glob("*.proto"))


def generate(out: Path) -> list[Path]:
    """Run protoc into ``out``; the generated files, relative to ``out``."""
    from grpc_tools import protoc  # dev dependency (grpcio-tools)

    include = Path(protoc.__file__).resolve().parent / "_proto"
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--plugin=protoc-gen-mypy={_plugin('protoc-gen-mypy')}",
        f"--plugin=protoc-gen-mypy_grpc={_plugin('protoc-gen-mypy_grpc')}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_out={out}",
        f"--mypy_grpc_out={out}",
        *(str(p.relative_to(PROTO_ROOT)) for p in _protos()),
    ]
    if protoc.main(args) != 0:
        sys.exit("gen_proto: protoc failed")
    (out / PACKAGE_DIR / "__init__.py").write_text(INIT_TEXT)
    return sorted(
        p.relative_to(out)
        for p in (out / PACKAGE_DIR).iterdir()
        if p.name == "__init__.py" or p.name.endswith(GENERATED_SUFFIXES)
    )


def _normalise(text: str) -> str:
    for pattern in _VERSION_STAMPS:
        text = pattern.sub("<generator version>", text)
    return text


def _committed() -> set[Path]:
    if not OUT_DIR.is_dir():
        return set()
    return {
        p.relative_to(ROOT)
        for p in OUT_DIR.iterdir()
        if p.name == "__init__.py" or p.name.endswith(GENERATED_SUFFIXES)
    }


def check() -> int:
    """0 when the committed code matches a fresh generation, else 1 with a diff."""
    with tempfile.TemporaryDirectory(prefix="gen_proto_") as tmp:
        fresh = set(generate(Path(tmp)))
        committed = _committed()
        problems: list[str] = []
        for rel in sorted(committed - fresh):
            problems.append(f"{rel}: committed but no longer generated")
        for rel in sorted(fresh - committed):
            problems.append(f"{rel}: generated but not committed")
        for rel in sorted(fresh & committed):
            new = _normalise((Path(tmp) / rel).read_text())
            old = _normalise((ROOT / rel).read_text())
            if new != old:
                diff = difflib.unified_diff(
                    old.splitlines(), new.splitlines(), f"a/{rel}", f"b/{rel}", lineterm="", n=1
                )
                problems.append("\n".join(list(diff)[:40]))
    if problems:
        print("generated gRPC code is stale; run python3 scripts/gen_proto.py", file=sys.stderr)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1
    print(f"generated code in {PACKAGE_DIR} is up to date")
    return 0


def write() -> int:
    """Regenerate in place, removing files no proto produces any more."""
    with tempfile.TemporaryDirectory(prefix="gen_proto_") as tmp:
        fresh = generate(Path(tmp))
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        for rel in sorted(_committed() - set(fresh)):
            (ROOT / rel).unlink()
        for rel in fresh:
            shutil.copyfile(Path(tmp) / rel, ROOT / rel)
            print(f"wrote {rel}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="fail (exit 1) if the committed code is stale"
    )
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    return check() if args.check else write()


if __name__ == "__main__":
    sys.exit(main())
