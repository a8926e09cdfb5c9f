"""``packctl proto``: the gRPC API's ``.proto`` files, from the installed package."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from control_plane._kernel.hookspecs import hookimpl
from control_plane._resources import proto_dir

__all__ = ["GOOGLE_RPC_PROTOS", "add_commands", "proto_files", "write_protos"]

#: The ``google/rpc`` files written next to the control plane's proto.
GOOGLE_RPC_PROTOS = ("status.proto", "error_details.proto", "code.proto")


def _google_rpc_dir() -> Path:
    from google.rpc import status_pb2  # googleapis-common-protos ships the .proto beside it

    return Path(status_pb2.__file__).resolve().parent


def proto_files() -> dict[str, Path]:
    """Every file ``packctl proto --out`` writes: relative path -> source file."""
    root = proto_dir()
    files = {
        path.relative_to(root).as_posix(): path
        for path in sorted((root / "control_plane").rglob("*.proto"))
    }
    google = _google_rpc_dir()
    for name in GOOGLE_RPC_PROTOS:
        source = google / name
        if not source.is_file():
            raise FileNotFoundError(
                f"{source} is missing: reinstall googleapis-common-protos, which ships it"
            )
        files[f"google/rpc/{name}"] = source
    return files


def write_protos(out: Path) -> list[Path]:
    """Write :func:`proto_files` under ``out``; returns the paths written."""
    written = []
    for rel, source in proto_files().items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
        written.append(target)
    return written


@hookimpl
def add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``packctl proto``."""
    p = subparsers.add_parser(
        "proto",
        help="the gRPC API's .proto files (for stubs in other languages)",
        description="Print the control plane's proto, or write it with the google.rpc "
        "protos it uses for error details under --out DIR (proto root: pass DIR as protoc's "
        "-I / buf's input). The files come from the installed package.",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="write DIR/control_plane/v1/*.proto and DIR/google/rpc/*.proto",
    )
    p.set_defaults(func=_proto)


def _proto(args: argparse.Namespace) -> int:
    from control_plane._features.cli.cli import EXIT_OK, EXIT_USAGE

    try:
        if args.out is None:
            sys.stdout.write(proto_files()["control_plane/v1/control_plane.proto"].read_text())
            return EXIT_OK
        written = write_protos(args.out)
    except OSError as exc:
        print(f"packctl proto: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for path in written:
        print(path)
    return EXIT_OK
