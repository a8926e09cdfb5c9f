"""The operator's grants on the command line (``--grant``, ``--grants``), and what packs reach."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from control_plane._kernel.hookspecs import hookimpl
from control_plane._kernel.reach import (
    Grant,
    GrantError,
    Grants,
    PackReach,
    Reaches,
    grants_from_data,
    parse_grant,
)
from control_plane._runtime.runtime import Confinement
from control_plane._runtime.tomlfile import TomlFileError, read_toml

__all__ = [
    "add_grant_options",
    "add_runtime_options",
    "grants_from_args",
    "grants_from_file",
    "reach_lines",
    "runtime_config",
    "startup_lines",
]


def add_grant_options(parser: argparse.ArgumentParser, when: str = "") -> None:
    """``--grant PACK:KEY=VALUE`` (repeatable) and ``--grants FILE``."""
    parser.add_argument(
        "--grant",
        action="append",
        default=[],
        metavar="PACK:KEY=VALUE",
        help=f"{when}grant a pack reach (KEY: fs.read, fs.write, egress, programs, "
        "credentials; repeatable; replaces what the pack declares for that key; "
        "docs/grants.md)",
    )
    parser.add_argument(
        "--grants",
        default=None,
        metavar="FILE",
        help=f'{when}grants file (TOML, [packs."NAME"] tables; --grant flags win; docs/grants.md)',
    )
    parser.add_argument(
        "--trust",
        action="append",
        default=[],
        metavar="PACK",
        help=f"{when}trust a pack that declares no reach: run it in this process, unconfined "
        "(default: an isolated worker under an empty grant; repeatable; docs/grants.md)",
    )


@hookimpl
def add_runtime_options(parser: argparse.ArgumentParser, when: str) -> None:
    """The grant options of every command that builds a runtime."""
    add_grant_options(parser, when)


@hookimpl
def runtime_config(options: argparse.Namespace) -> dict[str, Any]:
    """The operator's grants (:func:`grants_from_args`)."""
    return {"grants": grants_from_args(options)}


def grants_from_file(path: str | os.PathLike[str]) -> Grants:
    """The grants of a grants file (``--grants FILE``, TOML; docs/grants.md)."""
    try:
        _, data = read_toml(Path(path), what="grants file")
    except TomlFileError as exc:
        raise GrantError(str(exc)) from None
    return grants_from_data(data, path)


def grants_from_args(args: argparse.Namespace) -> Grants | None:
    """The grants of ``--grants`` then ``--grant`` (later keys replace earlier ones), and
    the packs of ``--trust`` and the file's ``trust = true``; ``None`` when none is given.
    Raises :class:`~control_plane._kernel.reach.GrantError`."""
    path = getattr(args, "grants", None)
    flags: list[str] = list(getattr(args, "grant", None) or [])
    trust: list[str] = list(getattr(args, "trust", None) or [])
    if path is None and not flags and not trust:
        return None
    for name in trust:
        if not name or name == "all":
            raise GrantError(f"--trust {name!r}: name each pack the operator trusts")
    from_file = grants_from_file(path) if path is not None else Grants()
    merged: dict[str, Grant] = dict(from_file.by_pack)
    from_flags: dict[str, Grant] = {}
    for text in flags:
        from_flags = parse_grant(text, from_flags)
    for name, grant in from_flags.items():
        merged[name] = merged[name].merged(grant) if name in merged else grant
    return Grants(merged, frozenset({*from_file.trusted, *trust}))


_AMBIENT = "ambient (the serving user's netrc, gitconfig, ssh agent, environment)"


def _roots(paths: Iterable[str]) -> str:
    return ", ".join(paths) or "nothing"


def reach_lines(reach: PackReach, declared: dict[str, object] | None) -> list[str]:
    """``describe``'s section: what the pack declared and what it may reach here."""
    if not reach.confined:
        return [
            "  declared: nothing (no reach=): unconfined -- it reaches whatever the serving",
            "  user can (trusted with --trust, or an MCP server's tool; docs/grants.md)",
        ]
    lines = []
    if declared is None:
        lines.append(
            "  declared: nothing (no reach=): it runs in an isolated worker confined to what "
            f"follows (--trust {reach.pack} runs it unconfined)"
        )
    else:
        lines.append(
            "  declared: "
            + "; ".join(
                f"{k} {_roots(v) if isinstance(v, list) else v}" for k, v in declared.items()
            )
        )
    lines += [
        f"  fs.read:     {_roots(reach.reads)}",
        f"  fs.write:    {_roots(reach.writes)}",
        f"  egress:      {_roots(reach.egress or ())}",
        f"  programs:    {_roots(reach.programs)}",
        f"  credentials: {_AMBIENT if reach.ambient_credentials else 'none'}",
    ]
    return lines


def startup_lines(
    names: Iterable[str],
    isolated: Iterable[str],
    reaches: Reaches,
    confinement: Confinement | None = None,
) -> list[str]:
    """Said aloud at start-up: each pack that declares no reach (confined in a worker, or
    trusted and unconfined), each grant wider than its pack's declaration, each confined
    pack that reads or writes files or reaches the network, one on kernel confinement when
    a confined pack is isolated, one per MCP server no grant confines, and one on what the
    kernel holds the programs of confined packs to (a pack that runs programs, or one the
    operator granted: an MCP server's)."""
    granted = set(reaches.grants.operator().by_pack)
    lines = []
    isolated_confined = False
    runs_programs = False
    chosen = set(isolated)
    held = confinement if confinement is not None else Confinement()
    for name in names:
        if name in held.trusted:
            lines.append(
                f"packctl: {name} declares no reach and is trusted (--trust): it runs in this "
                "process, unconfined -- it reaches whatever the serving user can (docs/grants.md)"
            )
        elif name in held.confined:
            given = "its grant" if name in held.operator.by_pack else "nothing (an empty grant)"
            lines.append(
                f"packctl: {name} declares no reach: it runs in an isolated worker confined to "
                f"{given}; --trust {name} runs it unconfined (docs/grants.md)"
            )
        if held.wider.get(name):
            lines.append(
                f"packctl: {name} is granted more than it declares: "
                f"{', '.join(held.wider[name])} (docs/grants.md)"
            )
        reach = reaches.reach_for(name)
        if not reach.confined:
            continue
        isolated_confined = isolated_confined or name in chosen
        runs_programs = runs_programs or bool(reach.programs) or name in granted
        only_read = [r for r in reach.reads if r not in reach.writes]
        parts = [f"reads {_roots(only_read)}"] if only_read else []
        if reach.writes:
            parts.append(f"writes {_roots(reach.writes)}")
        if reach.egress:
            parts.append(f"egress {_roots(reach.egress)}")
        if parts:
            lines.append(f"packctl: {name} {'; '.join(parts)} (docs/grants.md)")
    by_process: dict[str, list[str]] = {}
    for name, where in held.unconfined_elsewhere.items():
        by_process.setdefault(where, []).append(name)
    for where, packs in sorted(by_process.items()):
        lines.append(
            f"packctl: {', '.join(sorted(packs))} run in {where}, unconfined: no grant holds "
            "that process -- it reaches whatever the serving user can; grant its packs to "
            "confine it (docs/grants.md)"
        )
    if isolated_confined or chosen:
        from control_plane._features.grants.confine import kernel_support

        lines.append(f"packctl: {kernel_support()[1]}")
    if runs_programs:
        from control_plane._features.grants.confine_program import support_line

        lines.append(f"packctl: {support_line()}")
    return lines
