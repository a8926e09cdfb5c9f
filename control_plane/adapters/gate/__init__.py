"""``packctl gate``: run pack validations in strict mode over artifacts and gate CI on them.

* :mod:`~control_plane.adapters.gate.config` — the gate file (``packctl-gate.toml`` or
  ``[tool.packctl.gate]`` in ``pyproject.toml``), validated against
  ``schemas/gate.schema.json``;
* :mod:`~control_plane.adapters.gate.run` — globs expanded into step x artifact invocations, run
  on a server or in-process with ``--jobs N`` workers;
* :mod:`~control_plane.adapters.gate.report` — results, statuses and the exit code;
* :mod:`~control_plane.adapters.gate.formats` — text, json, junit, sarif and github renderings;
* :mod:`~control_plane.adapters.gate.cli` — the ``packctl gate`` subcommand.

See ``docs/gate.md``.
"""

from __future__ import annotations

import argparse

__all__ = ["add_cli_commands"]


def add_cli_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``packctl gate`` (imported lazily: the CLI imports this package at startup)."""
    from control_plane.adapters.gate.cli import add_cli_commands as add

    add(sub)
