"""``packctl new`` and ``packctl check``: the kit on the command line."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from control_plane import _version
from control_plane._features.cli.cli import EXIT_OK, EXIT_PACK_ERROR, EXIT_USAGE, _json
from control_plane._kernel.hookspecs import hookimpl

from .scaffold import scaffold
from .static import KitUsageError, StaticReport, check_installed, check_path, declares_packs

__all__ = ["add_commands"]


@hookimpl
def add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``new`` and ``check`` to ``packctl``."""
    new = subparsers.add_parser(
        "new",
        help="scaffold a pack distribution (entry point, schemas, tests on the kit)",
        description="Scaffold a pack distribution for pack NAME (dotted, e.g. acme.word_count).",
    )
    new.add_argument("name", metavar="NAME", help="the pack's dotted name")
    new.add_argument(
        "--dir", default=None, metavar="PATH", help="directory to create (default ./<dist-name>)"
    )
    new.set_defaults(func=_new)

    check = subparsers.add_parser(
        "check",
        help="static conformance of a pack or pack repository (for CI)",
        description="Check packs statically: closed vocabulary, every code documented, "
        "valid schemas, and the effective contract callers see. TARGET is a pack name, a "
        "pack repository (its pyproject.toml entry points) or a plugin .py file; without "
        "it, the repository in the current directory, else every installed third-party pack.",
        epilog="exit codes: 0 conforms, 1 a pack breaks its contract, 2 nothing to check",
    )
    check.add_argument("target", nargs="?", default=None, metavar="PACK|PATH")
    check.add_argument("--output", choices=("human", "json"), default="human")
    check.set_defaults(func=_check)


def _new(args: argparse.Namespace) -> int:
    try:
        made = scaffold(args.name, args.dir)
    except KitUsageError as exc:
        print(f"packctl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"created {made.dist} in {made.directory} (pack {made.pack_name}):")
    for path in made.files:
        print(f"  {path.relative_to(made.directory)}")
    # capability-packs is not on a public index: install into this very environment,
    # where pip finds it installed (the scaffold asks for this version).
    python = shlex.quote(sys.executable)
    print(
        f"\nnext (into this environment, which has capability-packs {_version.version()}):"
        f"\n  cd {shlex.quote(str(made.directory))}\n  {python} -m pip install -e '.[test]'"
        f"\n  {python} -m pytest\n  packctl list --local"
    )
    return EXIT_OK


def _looks_like_path(target: str) -> bool:
    return os.sep in target or target.endswith(".py") or Path(target).exists()


def _check(args: argparse.Namespace) -> int:
    target: str | None = args.target
    try:
        if target is None:
            report = check_path(".") if declares_packs(Path.cwd()) else check_installed()
        elif _looks_like_path(target):
            report = check_path(target)
        else:
            report = check_installed(target)
    except KitUsageError as exc:
        if args.output == "json":
            _json({"problem": {"kind": "usage", "message": str(exc)}})
        else:
            print(f"packctl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return _verdict(args, report)


def _verdict(args: argparse.Namespace, report: StaticReport) -> int:
    if args.output == "json":
        _json(report.to_dict())
    else:
        print(report.render())
    if not report.packs and not report.findings:
        if args.output != "json":
            print("packctl: no packs to check", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK if not report.errors else EXIT_PACK_ERROR
