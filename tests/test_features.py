"""Every built-in feature is a plugin of its own: ``packctl`` is built from the
``BUILTIN_FEATURES`` tuple, and a feature left out takes its commands with it while the
rest works (docs/architecture.md, "Plugins: one mechanism")."""

from __future__ import annotations

import argparse
from pathlib import Path
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


# -- the runtime from its feature tuple (RuntimeConfig.features) ---------------------------

from control_plane import Context, Pack, Reach, hookimpl  # noqa: E402
from control_plane._features.cli.cli import configure  # noqa: E402
from control_plane._kernel.limits import ConfigError  # noqa: E402
from control_plane._runtime.plugins import RUNTIME_FEATURES  # noqa: E402
from control_plane._runtime.runtime import RuntimeConfig, build_runtime  # noqa: E402

_INPUT: dict[str, Any] = {"type": "object"}
_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "a": {},
        "ran": {"type": "string"},
        "error": {
            "type": "object",
            "properties": {"code": {"enum": ["internal_error"]}, "message": {"type": "string"}},
        },
    },
}


def _runs(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    program = str(doc.get("program", "true"))
    ctx.reach.run([program], timeout=5, ctx=ctx)
    return {"ran": program}


def _echo(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return dict(doc)


class _Packs:
    """``t.echo`` (declares no reach), ``t.runs`` (declares it runs ``true``)."""

    @hookimpl
    def register_packs(self, register: Any) -> None:
        register(_pack("t.echo", _echo))
        register(_pack("t.runs", _runs, reach=Reach(programs=("true",))))


def _pack(name: str, handler: Any, **kwargs: Any) -> Pack:
    return Pack(
        name=name,
        version="1.0.0",
        summary=name,
        input_schema=_INPUT,
        output_schema=_OUTPUT,
        handler=handler,
        **kwargs,
    )


def _without(part: str) -> tuple[str, ...]:
    features = tuple(f for f in RUNTIME_FEATURES if f".{part}." not in f)
    assert features != RUNTIME_FEATURES, part
    return features


def _config(**kwargs: Any) -> RuntimeConfig:
    return RuntimeConfig(builtins=False, entry_points=False, extra=(("t", _Packs()),), **kwargs)


def test_without_isolation_what_must_run_confined_is_refused_not_run_here() -> None:
    """A pack that declares no reach runs only in a confined worker: a runtime without the
    isolation feature refuses to start rather than run it in this process."""
    features = _without("isolation")
    with pytest.raises(ConfigError, match=r"t\.echo.*no isolation feature"):
        build_runtime(_config(features=features))
    with pytest.raises(ConfigError, match=r"t\.runs.*no isolation feature"):
        build_runtime(_config(features=features, trust=("t.echo",), isolate=("t.runs",)))
    # The rest serves: trusted, the undeclared pack runs here, as the operator said.
    with build_runtime(_config(features=features, trust=("t.echo",))) as runtime:
        assert runtime.isolated == frozenset()
        outcome = runtime.invoker.invoke_sync("t.echo", {"a": 1})
        assert outcome.ok and outcome.result == {"a": 1}


def test_without_isolation_no_third_party_module_is_imported(tmp_path: Path) -> None:
    """Plugin modules are described by confined workers before any is imported; with no
    feature to describe them, none is imported (a load failure each), unless the operator
    trusts every pack."""
    (tmp_path / "fold43b_never_imported.py").write_text("raise SystemExit('imported')\n")
    config = RuntimeConfig(
        builtins=False,
        entry_points=False,
        plugins=(str(tmp_path / "fold43b_never_imported.py"),),
        features=_without("isolation"),
    )
    with build_runtime(config) as runtime:
        failures = [str(f) for f in runtime.registry.failures]
    assert len(failures) == 1 and "describes plugin modules" in failures[0], failures


def test_without_mcp_an_mcp_config_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "packctl-mcp.toml"
    config.write_text("")
    with pytest.raises(ConfigError, match="no MCP feature"):
        build_runtime(_config(features=_without("mcp"), trust=("t.echo",), mcp_config=config))


def test_without_grants_programs_are_refused_and_the_grants_still_hold() -> None:
    """The grant checks are the kernel's: without the grants feature a runtime has no
    program runner, so a granted program is refused (never run unchecked), and an
    ungranted one is refused as before."""
    for features in (RUNTIME_FEATURES, _without("grants")):
        with build_runtime(_config(features=features, trust=("t.echo",))) as runtime:
            refused = runtime.invoker.invoke_sync("t.runs", {"program": "sh"})
            assert refused.error is not None and refused.error.code == "not_permitted"
    with build_runtime(_config(features=_without("grants"), trust=("t.echo",))) as runtime:
        assert runtime.reaches.runner is None
        outcome = runtime.invoker.invoke_sync("t.runs", {})
        assert outcome.error is not None and outcome.error.code == "internal_error"


def test_without_observability_observe_is_refused_and_configure_installs_nothing() -> None:
    with build_runtime(_config(features=_without("observability"), trust=("t.echo",))) as rt:
        with pytest.raises(ConfigError, match="no observability feature"):
            rt.observe()
        assert rt.invoker.invoke_sync("t.echo", {}).ok


def test_configure_lets_each_feature_install_itself_from_its_options() -> None:
    """``configure``: observability observes the runtime from ``serve``'s options; a CLI
    built without it leaves the runtime unobserved."""
    argv = ["serve", "--no-event-stream", "--no-incident-db"]
    for features, observed in (
        (BUILTIN_FEATURES, True),
        (tuple(f for f in BUILTIN_FEATURES if "observability" not in f), False),
    ):
        args, _ = build_parser(features).parse_known_args(argv)
        with build_runtime(_config(trust=("t.echo",))) as runtime:
            configure(runtime, args)
            assert (runtime.observability is not None) is observed


@pytest.mark.parametrize(
    ("left_out", "argv"),
    [
        ("control_plane._features.isolation.cli", ["serve", "--isolate", "all"]),
        ("control_plane._features.mcp.source.cli", ["serve", "--mcp-config", "x.toml"]),
        ("control_plane._features.mcp.source.cli", ["call", "p", "--local", "--mcp-config", "x"]),
        ("control_plane._features.grants.grant_cli", ["list", "--local", "--grant", "p:x=y"]),
    ],
    ids=["isolate", "mcp-config-serve", "mcp-config-local", "grant-local"],
)
def test_runtime_options_come_from_their_features(left_out: str, argv: list[str]) -> None:
    """``add_runtime_options``/``add_serve_options``: each runtime option is its feature's;
    without the feature the command has no such option (argparse refuses it, exit 2), and
    ``runtime_config`` reads each back with the feature."""
    args = build_parser().parse_args(argv)
    config_fields = runtime_config_fields(args)
    assert config_fields, argv
    features = tuple(f for f in BUILTIN_FEATURES if f != left_out)
    with pytest.raises(SystemExit) as exited:
        build_parser(features).parse_args(argv)
    assert exited.value.code == 2


def runtime_config_fields(args: argparse.Namespace) -> dict[str, Any]:
    """What the options set in the runtime's config, beside the defaults."""
    from control_plane._features.cli.reliability_cli import runtime_config
    from control_plane._kernel.limits import ConfigError

    try:
        config = runtime_config(args)
    except ConfigError as exc:  # --mcp-config x.toml: read (and refused) by the feature
        return {"refused": str(exc)}
    default = RuntimeConfig()
    return {
        name: getattr(config, name)
        for name in ("isolate", "grants", "mcp_config")
        if getattr(config, name) != getattr(default, name)
    }
