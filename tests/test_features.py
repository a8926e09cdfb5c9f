"""Every built-in feature is a plugin of its own: ``packctl`` is built from the
``BUILTIN_FEATURES`` tuple, and a feature left out takes its commands with it while the
rest works (docs/architecture.md, "Plugins: one mechanism")."""

from __future__ import annotations

import argparse
from typing import Any

import orjson
import pytest

from control_plane._features.cli.cli import EXIT_OK, build_parser
from control_plane._runtime.plugins import BUILTIN_FEATURES

#: A feature's plugin module -> the commands it adds.
COMMANDS = {
    "control_plane._features.temporal.cli": {"worker", "temporal-call"},
    "control_plane._features.gate.cli": {"gate"},
    "control_plane._features.mcp.bridge.cli": {"mcp"},
    "control_plane._features.kit.cli": {"new", "check"},
    "control_plane._features.observability.observability_cli": {"incident", "errors"},
}


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    raise AssertionError("no subcommands")


def test_every_builtin_features_commands_are_there() -> None:
    commands = _commands(build_parser())
    for feature, added in COMMANDS.items():
        assert feature in BUILTIN_FEATURES
        assert added <= commands, feature
    assert {"serve", "list", "describe", "call"} <= commands


@pytest.mark.parametrize("left_out", sorted(COMMANDS), ids=lambda m: m.split(".")[2])
def test_a_feature_left_out_takes_its_commands_and_the_rest_works(
    left_out: str, capsys: Any
) -> None:
    features = tuple(f for f in BUILTIN_FEATURES if f != left_out)
    parser = build_parser(features)
    commands = _commands(parser)
    assert not COMMANDS[left_out] & commands, left_out
    for feature, added in COMMANDS.items():
        if feature != left_out:
            assert added <= commands, feature
    for name in COMMANDS[left_out]:
        with pytest.raises(SystemExit) as exited:
            parser.parse_args([name])
        assert exited.value.code == 2
    capsys.readouterr()
    # The rest works: the built-in packs listed in this process by the CLI's own command.
    args = parser.parse_args(["list", "--local", "--output", "json"])
    assert args.func(args) == EXIT_OK
    listed = orjson.loads(capsys.readouterr().out)
    assert "git.clone" in str(listed), listed


def test_serve_options_come_from_the_observability_feature() -> None:
    """``add_serve_options``: observability adds ``serve``'s metrics options; without it,
    ``serve`` parses without them."""
    full = build_parser().parse_args(["serve", "--metrics-port", "0"])
    assert full.metrics_port == 0
    features = tuple(f for f in BUILTIN_FEATURES if "observability" not in f)
    with pytest.raises(SystemExit):
        build_parser(features).parse_args(["serve", "--metrics-port", "0"])
