"""``packctl gate``: run pack validations in strict mode over artifacts and gate CI on them
(docs/gate.md).
"""

from __future__ import annotations

import argparse

__all__ = ["add_cli_commands"]


def add_cli_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``packctl gate`` (imported lazily: the CLI imports this package at startup)."""
    from control_plane.adapters.gate.cli import add_cli_commands as add

    add(sub)
