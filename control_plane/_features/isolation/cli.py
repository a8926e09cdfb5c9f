"""The isolation feature on the command line: ``serve``'s ``--isolate`` options, read back
into the runtime's config (docs/reliability.md)."""

from __future__ import annotations

import argparse
from typing import Any

from control_plane._features.isolation.isolation import DEFAULT_MEMORY_LIMIT, DEFAULT_WORKERS
from control_plane._kernel.hookspecs import hookimpl
from control_plane._runtime.cli import positive_int

__all__ = ["add_serve_options", "runtime_config"]


def _megabytes(text: str) -> int:
    return positive_int(text) * 1024 * 1024


@hookimpl
def add_serve_options(parser: argparse.ArgumentParser) -> None:
    """``--isolate``, ``--isolation-workers``, ``--isolation-memory-mb``."""
    iso = parser.add_argument_group("isolation (docs/reliability.md)")
    iso.add_argument(
        "--isolate",
        action="append",
        default=[],
        metavar="PACK|all",
        help="run this pack's handler in worker processes (repeatable; 'all' for every pack)",
    )
    iso.add_argument(
        "--isolation-workers",
        type=positive_int,
        default=DEFAULT_WORKERS,
        metavar="N",
        help=f"worker processes per isolated pack (default {DEFAULT_WORKERS})",
    )
    iso.add_argument(
        "--isolation-memory-mb",
        type=_megabytes,
        default=DEFAULT_MEMORY_LIMIT,
        metavar="MB",
        help=f"address-space limit of each worker (default {DEFAULT_MEMORY_LIMIT >> 20})",
    )


@hookimpl
def runtime_config(options: argparse.Namespace) -> dict[str, Any]:
    """The isolation fields of the options (a command without them: the defaults)."""
    return {
        "isolate": tuple(getattr(options, "isolate", ()) or ()),
        "isolation_workers": getattr(options, "isolation_workers", DEFAULT_WORKERS),
        "isolation_memory_limit": getattr(options, "isolation_memory_mb", DEFAULT_MEMORY_LIMIT),
    }
