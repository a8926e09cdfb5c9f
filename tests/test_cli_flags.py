"""One spelling per concept across every ``packctl`` command (the flag audit).

The incident store is ``--incident-db`` wherever it is read or written, output format is
``--output human|json`` wherever a command offers it, and no flag means two things in two
commands. Deprecated spellings keep working, hidden from ``--help``.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

import pytest

from control_plane._features.cli.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _visible(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in parser._actions
        if a.option_strings and a.help != argparse.SUPPRESS and a.dest != "help"
    ]


def test_one_flag_one_meaning_one_spelling() -> None:
    spellings: dict[str, set[str]] = defaultdict(set)  # dest -> flags
    meanings: dict[str, set[str]] = defaultdict(set)  # flag -> dests
    choices: dict[str, set[tuple[str, ...]]] = defaultdict(set)  # flag -> choices
    where: dict[str, set[str]] = defaultdict(set)
    for name, parser in _commands().items():
        for action in _visible(parser):
            longs = tuple(s for s in action.option_strings if s.startswith("--"))
            spellings[action.dest].add(longs[0])
            for flag in longs:
                meanings[flag].add(action.dest)
                where[flag].add(name)
                if action.choices is not None:
                    choices[flag].add(tuple(map(str, action.choices)))
    drift = {dest: flags for dest, flags in spellings.items() if len(flags) > 1}
    assert not drift, f"one setting, several flags: {drift}"
    clash = {flag: dests for flag, dests in meanings.items() if len(dests) > 1}
    assert not clash, f"one flag, several meanings: {clash} (in {[where[f] for f in clash]})"
    # gate's --format chooses among CI report formats; everything else shares its choices.
    mixed = {flag: c for flag, c in choices.items() if len(c) > 1}
    assert not mixed, f"one flag, different choices: {mixed}"


def test_every_command_on_the_incident_store_spells_it_incident_db() -> None:
    commands = _commands()
    store = {
        name
        for name, parser in commands.items()
        if any(a.dest == "incident_db" for a in parser._actions)
    }
    assert store == {"serve", "worker", "incident", "errors"}
    for name in store:
        flags = [a.option_strings for a in _visible(commands[name]) if a.dest == "incident_db"]
        assert flags == [["--incident-db"]], (name, flags)
        assert "--incident-db PATH" in commands[name].format_help(), name


def test_output_is_human_or_json_wherever_offered() -> None:
    offering = {
        name
        for name, parser in _commands().items()
        if any("--output" in a.option_strings for a in _visible(parser))
    }
    assert {"list", "describe", "call", "check", "incident", "errors", "temporal-call"} <= offering
    assert "gate" not in offering  # gate writes CI reports: --format F --report PATH


@pytest.mark.parametrize(
    ("argv", "dest", "value"),
    [
        (["errors", "--db", "x.db"], "incident_db", Path("x.db")),
        (["incident", "ref_1", "--db", "x.db"], "incident_db", Path("x.db")),
        (["errors", "--json"], "output", "json"),
        (["incident", "ref_1", "--json"], "output", "json"),
        (["gate", "--output", "r.xml"], "report_path", "r.xml"),
        (["gate", "--report", "r.xml"], "report_path", "r.xml"),
    ],
)
def test_deprecated_spellings_still_parse(argv: list[str], dest: str, value: object) -> None:
    args = build_parser().parse_args(argv)
    assert getattr(args, dest) == value
    hidden = {"--db", "--json", "--output"} & set(argv)
    help_text = _commands()[argv[0]].format_help()
    for flag in hidden:
        if argv[0] == "gate" or flag != "--output":
            assert f"{flag} " not in help_text and f"{flag}\n" not in help_text, (argv, flag)


def test_every_visible_flag_is_documented() -> None:
    text = (ROOT / "README.md").read_text() + "".join(
        p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))
    )
    missing = sorted(
        f"packctl {name} {flag}"
        for name, parser in _commands().items()
        for action in _visible(parser)
        for flag in action.option_strings
        if flag.startswith("--") and not re.search(rf"(?<![\w-]){flag}(?![\w-])", text)
    )
    assert not missing, f"undocumented flags: {missing}"
