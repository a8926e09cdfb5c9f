"""What the wheel carries: the proto (and schemas) ship with the package, no clone needed.

The wheel is built here with hatchling's PEP 517 hook (no network, no build isolation),
listed, unpacked into a directory that stands in for site-packages, and ``packctl proto``
is run from that copy: the files it writes compile with protoc.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.system  # docs/setup.md, Test tiers

ROOT = Path(__file__).resolve().parent.parent
PROTO = "control_plane/v1/control_plane.proto"


def _run(cmd: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    full.update(env)
    return subprocess.run(
        cmd, cwd=cwd, env=full, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    built = _run(
        [
            sys.executable,
            "-c",
            "import sys; from hatchling.build import build_wheel; print(build_wheel(sys.argv[1]))",
            str(out),
        ],
        ROOT,
    )
    assert built.returncode == 0, built.stderr
    return out / built.stdout.strip().splitlines()[-1]


def test_the_wheel_holds_the_proto_and_the_schemas(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        shipped = zf.read(f"control_plane/_proto/{PROTO}")
    protos = sorted(n for n in names if n.endswith(".proto"))
    print(f"{wheel.name}: {len(names)} files; protos: {protos}")
    expected = sorted(
        f"control_plane/_proto/{p.relative_to(ROOT / 'proto').as_posix()}"
        for p in (ROOT / "proto").rglob("*.proto")
    )
    assert protos == expected
    assert shipped == (ROOT / "proto" / PROTO).read_bytes()
    assert "control_plane/_schemas/vocabulary.json" in names
    assert "control_plane/v1/control_plane_pb2.py" in names
    # Nothing lands at the top of site-packages but the two packages (and the metadata).
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"control_plane", "packs"}


def test_packctl_proto_from_the_installed_wheel_writes_protos_that_compile(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    out = tmp_path / "protos"
    # Run from elsewhere with the unpacked wheel first on the path: not the checkout.
    done = _run(
        [
            sys.executable,
            "-c",
            "import sys, control_plane; from control_plane._features.cli.cli import main; "
            "print(control_plane.__file__, file=sys.stderr); sys.exit(main(sys.argv[1:]))",
            "proto",
            "--out",
            str(out),
        ],
        tmp_path,
        PYTHONPATH=str(site),
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().startswith(str(site)), done.stderr
    written = sorted(Path(line).relative_to(out).as_posix() for line in done.stdout.split())
    assert written == [
        PROTO,
        "google/rpc/code.proto",
        "google/rpc/error_details.proto",
        "google/rpc/status.proto",
    ]
    assert (out / PROTO).read_bytes() == (ROOT / "proto" / PROTO).read_bytes()
    gen = tmp_path / "gen"
    gen.mkdir()
    compiled = _run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{out}",
            f"--python_out={gen}",
            *written,
        ],
        out,
    )
    assert compiled.returncode == 0, compiled.stderr
    assert (gen / "control_plane" / "v1" / "control_plane_pb2.py").is_file()
    assert (gen / "google" / "rpc" / "error_details_pb2.py").is_file()


def test_packctl_proto_prints_the_proto(capsys: pytest.CaptureFixture[str]) -> None:
    from control_plane._features.cli.cli import main

    assert main(["proto"]) == 0
    assert capsys.readouterr().out == (ROOT / "proto" / PROTO).read_text()
