"""The ``packctl gate`` subcommand: exit 0 passed, 1 failed on findings, 2 a step could not run."""

from __future__ import annotations

import argparse
import math
import os
import sys
import traceback
from pathlib import Path

from control_plane._features.cli.backends import Blocking
from control_plane._features.cli.cli import (
    EXIT_USAGE,
    UsageProblem,
    add_backend_options,
    run_with_backend,
)
from control_plane._features.gate.config import (
    DEFAULT_DEADLINE,
    DEFAULT_FILE,
    GateConfig,
    GateFileError,
    find_gate_file,
    load_gate,
)
from control_plane._features.gate.formats import FORMATS, render, render_text
from control_plane._features.gate.run import run_gate
from control_plane._kernel.hookspecs import hookimpl
from control_plane._runtime.cli import positive_int

__all__ = ["add_commands", "gate_command"]

_MACHINE_FORMATS = frozenset({"json", "junit", "junit-xunit1", "sarif"})


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number > 0")
    return value


@hookimpl
def add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``packctl gate``."""
    p = subparsers.add_parser(
        "gate",
        help="run pack validations over artifacts in strict mode and gate CI on them",
        description="Run the steps of a gate file (packctl-gate.toml, or [tool.packctl.gate] "
        "in pyproject.toml) and report in a format CI understands.",
        epilog="exit codes: 0 passed (warnings shown), 1 failed on findings "
        "(artifact_failed), 2 a step could not run (pack error, unreachable server, bad "
        "gate file)",
    )
    p.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help=f"gate file (default: ./{DEFAULT_FILE}, else ./pyproject.toml)",
    )
    add_backend_options(p)
    p.add_argument(
        "--format",
        choices=sorted(FORMATS),
        default="text",
        help="report format (default text)",
    )
    p.add_argument(
        "--report",
        "--output",  # its first spelling; hidden: --output means human|json elsewhere
        dest="report_path",
        metavar="PATH",
        help="write the report to PATH (the text summary still goes to stdout)",
    )
    report = p._option_string_actions["--output"]
    report.option_strings = ["--report"]
    p.add_argument(
        "--jobs",
        "-j",
        type=positive_int,
        default=1,
        metavar="N",
        help="calls to run at once (default 1)",
    )
    p.add_argument(
        "--deadline",
        type=_seconds,
        default=DEFAULT_DEADLINE,
        metavar="S",
        help="deadline of each call whose step sets none "
        f"(default {DEFAULT_DEADLINE:g}, the server's default)",
    )
    p.set_defaults(func=gate_command)


def _config(args: argparse.Namespace) -> GateConfig:
    path = Path(args.file) if args.file else find_gate_file(Path.cwd())
    return load_gate(path)


def gate_command(args: argparse.Namespace) -> int:
    """Run the gate; returns the exit code.

    The exit code only ever means what docs/gate.md says: whatever goes wrong inside the
    gate itself is "could not run" (2), never the 1 of an uncaught exception ("failed on
    findings").
    """
    try:
        return _gate(args)
    # Process boundary: the exit code is the gate's contract with CI.
    except Exception as exc:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        print(
            f"packctl gate: could not run: {type(exc).__name__}: {exc} (a bug: please report it)",
            file=sys.stderr,
        )
        return EXIT_USAGE


def _gate(args: argparse.Namespace) -> int:
    try:
        config = _config(args)
    except GateFileError as exc:
        print(f"packctl gate: bad gate file: {exc}", file=sys.stderr)
        return EXIT_USAGE
    target = "local" if args.local else args.target

    def body(backend: Blocking) -> int:
        packs: dict[str, tuple[str, str]] = {}
        for name in dict.fromkeys(step.pack for step in config.steps):
            desc = backend.describe(name)  # unknown pack / unreachable: exit 2, one line
            packs[name] = (desc.version, desc.summary)
        report = run_gate(
            config, backend, target=target, jobs=args.jobs, packs=packs, deadline=args.deadline
        )
        text = render_text(report)
        if args.report_path:
            try:
                _write(Path(args.report_path), render(report, args.format))
            except OSError as exc:
                raise UsageProblem(
                    f"cannot write the report to {args.report_path}: {exc}"
                ) from None
            _emit(text)
        elif args.format == "text":
            _emit(text)
        else:
            _emit(render(report, args.format), text if args.format in _MACHINE_FORMATS else "")
        return report.exit_code

    return run_with_backend(args, body)


def _emit(out: str, err: str = "") -> None:
    """Write ``out`` to stdout and ``err`` to stderr. A reader that went away (``packctl
    gate | head``) is not an error, and the verdict stands: the exit code is the gate's
    (``main`` would turn the BrokenPipeError into 0, a pass)."""
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    try:
        sys.stderr.write(err)
        sys.stderr.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stderr.fileno())


def _write(path: Path, content: str) -> None:
    if path.parent and not path.parent.exists():
        os.makedirs(path.parent, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(content, encoding="utf-8")
    os.replace(tmp, path)
