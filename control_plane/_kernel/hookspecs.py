"""The hooks a capability-packs plugin may implement (docs/architecture.md, "Plugins")."""

from __future__ import annotations

import argparse  # the command hooks' parameter types only: the kernel parses nothing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

from control_plane._kernel.classify import Classification
from control_plane._kernel.pack import Pack
from control_plane._kernel.reach import ProgramRunner, Reaches, Scratch
from control_plane._kernel.registry import LoadFailure, Registry

if TYPE_CHECKING:
    from control_plane._kernel.error_event import ErrorEvent
    from control_plane._kernel.incidents import Incident
    from control_plane._kernel.outcome import Outcome
    from control_plane._kernel.registry import LoadedPack

__all__ = ["PROJECT", "Subparsers", "hookimpl", "hookspec"]

#: The runtime's types (``control_plane._runtime.runtime``), named here only: the kernel
#: imports nothing above it.
Runtime = Any
RuntimeConfig = Any

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:  # not subscriptable at run time before Python 3.13
    Subparsers = argparse._SubParsersAction

PROJECT = "capability_packs"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_packs(register: Callable[[Pack], None]) -> None:
    """Register this plugin's packs by calling ``register(pack)`` once per pack.

    :param register: checks the :class:`~control_plane._kernel.pack.Pack` at once (schemas,
        closed vocabulary, code docs, unique name) and adds it to the registry. A pack that
        fails a check is recorded as a load failure naming this plugin; the plugin's other
        packs and every other plugin still load.
    :return: nothing; the return value is ignored.
    """


@hookspec(firstresult=True)
def classify_exception(exc: BaseException) -> Classification | None:
    """Classify an exception the built-in rules do not know.

    Called for each exception in a failure's chain (outermost first) after typed
    :class:`~control_plane._kernel.errors.PackError` handling and before the HTTP-status, type and
    errno tables. Return a :class:`~control_plane._kernel.classify.Classification` whose ``code``
    is a baseline code (or a pack code), or ``None`` to pass. ``firstresult``: the first
    implementation (newest registered first) that returns a classification wins.
    The built-in classifiers (``control_plane/_kernel/classifiers``: tls, subprocess,
    sockets; ``control_plane/_features/libraries``: proxy, grpc, httpx, requests, aiohttp,
    xmlrpc, GitPython, websockets) implement this same hook and are asked after every other
    plugin. ``Classification(weak=True)`` marks a generic
    wrapper's guess, used only if nothing deeper in the chain classifies.
    Enforcement still maps the code onto each pack's vocabulary. A classifier that raises,
    or returns anything but a ``Classification``, is logged and counts as ``None``.
    A plugin may declare ``EXCEPTION_MODULES = ("acme_sdk",)`` (top-level package names):
    it is then asked only about exceptions with a class of one of them in their MRO.

    :param exc: one exception of the failure's cause chain.
    :return: a classification, or ``None``.
    """


@hookspec
def call_started(pack: LoadedPack) -> Callable[[], None] | None:
    """A call of ``pack`` was admitted (input valid); its handler is about to run.

    Called on the thread that runs the call (often the server's event loop): return quickly.
    The built-in metrics count in-flight calls here.

    :param pack: the :class:`~control_plane._kernel.registry.LoadedPack` called.
    :return: ``None``, or a callable run exactly once when the call ends, however it ends
        (even when the awaiting task is cancelled).
    """


@hookspec
def call_finished(pack: LoadedPack, outcome: Outcome, elapsed_s: float) -> None:
    """A call of ``pack`` ended with ``outcome`` (a success or an enforced error).

    Called once per call the invoker ran, on the thread that finished it (often the
    server's event loop), so it must return quickly: hand slow work to a queue and a
    thread of its own, as the built-in error events do. The built-in metrics and error
    events implement it. A raise is logged and skipped; the call is unaffected.

    :param pack: the :class:`~control_plane._kernel.registry.LoadedPack` called.
    :param outcome: the :class:`~control_plane._kernel.outcome.Outcome` the caller receives
        (already scrubbed of secrets).
    :param elapsed_s: seconds from the request to the outcome.
    :return: nothing; the return value is ignored.
    """


@hookspec
def request_refused(event: ErrorEvent) -> None:
    """A request was refused before any pack ran (unknown pack, invalid input, overload...).

    ``event.code`` is the rejection reason, ``event.origin`` is ``transport``. The invoker
    calls it for every refusal of its input check, whatever adapter took the request (gRPC,
    MCP, ``--local``, the author kit, the gate, Temporal); a server calls it for the
    refusals it makes itself (overload, authentication, drain). Once per refusal. Called on
    the thread that refused it: return quickly. The built-in metrics and error events
    implement it. A raise is logged and skipped.

    :param event: the scrubbed :class:`~control_plane._kernel.error_event.ErrorEvent`.
    :return: nothing; the return value is ignored.
    """


@hookspec
def incident_recorded(incident: Incident) -> None:
    """An incident (a pack bug or contract violation, with its traceback) was recorded.

    Called on the thread that recorded it; the built-in incident store implements it
    (writing behind a bounded queue on a thread of its own). A raise is logged and
    skipped; the incident stays in memory and the call is unaffected.

    :param incident: the scrubbed :class:`~control_plane._kernel.incidents.Incident`.
    :return: nothing; the return value is ignored.
    """


@hookspec
def register_event_sinks(register: Callable[[Callable[[ErrorEvent], None]], None]) -> None:
    """Register sinks for structured error events by calling ``register(sink)``.

    A sink is any callable taking one :class:`~control_plane._kernel.error_event.ErrorEvent`. It is
    called once per failed invocation and once per request refused at the transport, on
    the thread that finished the call (often the server's event loop), so it must return
    quickly: hand slow work (network, disk) to a queue and a thread of its own. Events are
    already scrubbed of secrets; ``event.to_dict()`` matches
    ``schemas/error-event.schema.json``. A sink that raises is logged and skipped, and the
    call it describes is unaffected.

    :param register: adds one sink; a non-callable is recorded as a load failure naming
        this plugin.
    :return: nothing; the return value is ignored.
    """


@hookspec
def add_commands(subparsers: Subparsers) -> None:
    """Add this feature's ``packctl`` subcommands.

    Called once per ``packctl`` run, when its parser is built, on every built-in feature
    (``BUILTIN_FEATURES`` in ``control_plane/_runtime/plugins.py``), in that tuple's order.
    Each command is ``subparsers.add_parser(NAME, ...)`` with ``set_defaults(func=handler)``,
    a handler taking the parsed options and returning the exit status. Import what a
    command needs inside its handler: every run builds the whole parser.

    :param subparsers: the object ``argparse.ArgumentParser.add_subparsers()`` returned.
    :return: nothing; the return value is ignored.
    """


@hookspec
def add_serve_options(parser: argparse.ArgumentParser) -> None:
    """Add this feature's options to ``packctl serve``.

    Called once, after every :func:`add_commands`, with the ``serve`` command's parser (not
    called when no feature added ``serve``). The built-in observability adds its metrics,
    events, incident store and tracing options here.

    :param parser: the ``serve`` subcommand's parser.
    :return: nothing; the return value is ignored.
    """


# -- the runtime's features: build_runtime() calls these on RuntimeConfig.features --------


@hookspec(firstresult=True)
def describe_plugins(
    config: RuntimeConfig, plugins: Sequence[tuple[str, str]], scratch: Scratch
) -> tuple[list[tuple[str, object]], list[tuple[str, str]], set[str], list[LoadFailure]] | None:
    """Describe third-party plugin modules in confined workers before any is imported here.

    Called by ``build_runtime`` when the runtime describes plugins first (unless the
    operator trusts every pack and isolates none; docs/grants.md). The built-in isolation
    feature implements it. Without an implementation, no third-party plugin module is
    imported: each is a load failure (confinement never depends on a feature being there).

    :param config: the runtime's configuration.
    :param plugins: ``(as given, module name)`` of each ``--plugin``.
    :param scratch: the runtime's scratch root (the workers' empty ``HOME``).
    :return: ``(described plugins, modules to import here, entry points to load here,
        failures)``, or ``None`` (not implemented).
    """


@hookspec(firstresult=True)
def open_pack_sources(config: RuntimeConfig, registry: Registry, reaches: Reaches) -> object | None:
    """Start the pack sources ``config`` names (the MCP servers of ``mcp_config``) and add
    their packs to ``registry``.

    Called once by ``build_runtime`` when ``config.mcp_config`` is set; the built-in MCP
    feature implements it. Without an implementation, the runtime refuses the config
    (:class:`~control_plane._kernel.limits.ConfigError`).

    :param config: the runtime's configuration (``config.mcp_config``: a path or a config).
    :param registry: the runtime's registry, where the sources' packs are registered.
    :param reaches: the operator's grants: each source's process is confined to its packs'.
    :return: the source: ``close()``, ``pack_health()`` and ``watch(callback)``; or ``None``.
    """


@hookspec(firstresult=True)
def program_runner() -> ProgramRunner | None:
    """The function the runtime's grants start packs' programs with (``ctx.reach.run``).

    The built-in grants feature implements it. The grant checks stay in the kernel
    (:class:`~control_plane._kernel.reach.Reaches`) whatever answers: without a runner, a
    pack's program is refused, never run unchecked.

    :return: the runner, or ``None``.
    """


@hookspec(firstresult=True)
def start_isolation(
    config: RuntimeConfig, registry: Registry, packs: Sequence[str], reaches: Reaches
) -> Any:
    """Start the worker pools of ``packs`` (``--isolate`` and the confined packs).

    Called once by ``build_runtime`` when ``packs`` is not empty; the built-in isolation
    feature implements it. Without an implementation, the runtime refuses to start
    (:class:`~control_plane._kernel.limits.ConfigError`): a pack that must run confined
    never runs in this process instead.

    :param config: the runtime's configuration (workers, memory limit, ``isolate``).
    :param registry: the loaded packs.
    :param packs: the names to isolate (``"all"``: every pack).
    :param reaches: the runtime's grants, each worker confined to its pack's.
    :return: the pools (the invoker's ``isolation``), or ``None`` when none of ``packs``
        runs in this process (an MCP server's tools).
    """


@hookspec(firstresult=True)
def observe(runtime: Runtime, config: object | None, options: dict[str, Any]) -> Any:
    """Attach metrics, error events and the incident store to ``runtime`` (``Runtime.observe``).

    The built-in observability feature implements it.

    :param runtime: the runtime to observe.
    :param config: the typed configuration of ``packctl serve``'s options, or ``None``.
    :param options: keywords of an embedder's call (``events=``, ``store=``...).
    :return: the observability handle (``close()``), or ``None``.
    """


@hookspec
def configure(runtime: Runtime, options: argparse.Namespace) -> None:
    """Install this feature on ``runtime`` from its own parsed options.

    Called by every command that builds a runtime (``serve``, ``worker``), once the
    runtime is built and before it serves, on every built-in feature
    (``BUILTIN_FEATURES``). The built-in observability installs metrics, events, the
    incident store and tracing from the options it added (:func:`add_serve_options`).
    A raise (:class:`~control_plane._kernel.limits.ConfigError`) stops the command.

    :param runtime: the runtime built from the options.
    :param options: the parsed command line.
    :return: nothing; the return value is ignored.
    """


@hookspec
def add_runtime_options(parser: argparse.ArgumentParser, when: str) -> None:
    """Add this feature's options to a command that builds a runtime.

    Called once per such command (``serve``, ``worker``, and every command with
    ``--local``: a parser whose ``runtime_options`` default is set), after every
    :func:`add_commands`. The built-in grants add ``--grant``, ``--grants`` and
    ``--trust``; MCP adds ``--mcp-config``. :func:`runtime_config` reads them back.

    :param parser: the command's parser.
    :param when: the prefix of each option's help (``"with --local: "``, or empty).
    :return: nothing; the return value is ignored.
    """


@hookspec
def runtime_config(options: argparse.Namespace) -> Mapping[str, Any] | None:
    """This feature's fields of the runtime's ``RuntimeConfig``, from its parsed options.

    Called by every command that builds a runtime, on every built-in feature; the fields
    of all are merged (isolation: ``isolate``...; MCP: ``mcp_config``; grants: ``grants``).
    A command lacking a feature's options gets the runtime's defaults. A raise
    (:class:`~control_plane._kernel.limits.ConfigError`) stops the command.

    :param options: the parsed command line.
    :return: ``RuntimeConfig`` field names and values, or ``None``.
    """
