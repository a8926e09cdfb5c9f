"""``build_runtime(RuntimeConfig(...))``: the one runtime every adapter uses."""

from __future__ import annotations

import importlib
import importlib.machinery
import logging
import os
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

from control_plane._kernel.error_event import ErrorEvent
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.limits import ConfigError
from control_plane._kernel.reach import (
    DEFAULT_MESSAGE_LIMIT,
    Grant,
    GrantError,
    Grants,
    Reach,
    Reaches,
    Scratch,
)
from control_plane._kernel.redact import require_scrubber
from control_plane._kernel.registry import LoadFailure, Registry
from control_plane._runtime.plugins import (
    ENTRY_POINT_GROUP,
    PLUGIN_FAULTS,
    RUNTIME_FEATURES,
    LoadResult,
    feature_manager,
    load_registry,
)
from control_plane._runtime.suggest import unknown_names

if TYPE_CHECKING:
    from control_plane._features.mcp.source.config import McpConfig

__all__ = [
    "DEFAULT_TIMEOUT",
    "TRUST_ALL",
    "Confinement",
    "PackHealthSource",
    "Runtime",
    "RuntimeConfig",
    "build_runtime",
    "decide_confinement",
]

logger = logging.getLogger("capability_packs.isolation")


class PackHealthSource(Protocol):
    """Packs whose health changes while serving (the MCP source: its servers' states).

    ``watch`` callbacks may run on any thread; a server hands them to its own loop.
    """

    def pack_health(self) -> Mapping[str, bool]: ...

    def watch(self, watcher: Callable[[str, bool], None]) -> None: ...


#: Worker processes per isolated pack.
ISOLATION_WORKERS = 2
#: Address-space cap of each isolated worker (``RLIMIT_AS``), in bytes.
ISOLATION_MEMORY_LIMIT = 1024 * 1024 * 1024
#: Deadline of a call that carries none, in seconds, on every adapter.
DEFAULT_TIMEOUT = 300.0
#: ``RuntimeConfig(trust=TRUST_ALL)``: every pack that declares no reach runs in this
#: process (an embedder whose packs are its own code; the command line names each pack).
TRUST_ALL = ("all",)


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """Everything that decides how packs run, whatever adapter serves them."""

    #: Plugin modules to import beside the built-in and entry-point ones (``--plugin``).
    plugins: tuple[str, ...] = ()
    #: Plugin objects given directly: a module, or ``(name, object)`` (tests, the kit).
    extra: tuple[tuple[str, object] | ModuleType, ...] = ()
    #: Load the built-in packs (``DEFAULT_PLUGINS``).
    builtins: bool = True
    #: Load third-party plugins from the ``capability_packs`` entry-point group.
    entry_points: bool = True
    #: Packs whose handlers run in worker processes (names, or ``"all"``); packs that
    #: declare ``Pack(isolated=True)`` are isolated whatever this says.
    isolate: tuple[str, ...] = ()
    isolation_workers: int = ISOLATION_WORKERS
    isolation_memory_limit: int | None = ISOLATION_MEMORY_LIMIT
    #: Threads for synchronous handlers (``None``: Python's default for the pool).
    handler_threads: int | None = None
    #: Most of those threads one pack may hold at once, overrunning calls included
    #: (``None``: half of the pool; see :mod:`control_plane._kernel.threads`).
    pack_threads: int | None = None
    #: Deadline of calls that carry none (``None``: no deadline).
    default_timeout: float | None = DEFAULT_TIMEOUT
    #: Load failures found before loading (e.g. a ``--plugin`` module that did not import).
    failures: tuple[LoadFailure, ...] = field(default=())
    #: MCP servers whose tools load as packs (:mod:`control_plane._features.mcp.source`): a config
    #: file's path or a loaded config; ``None``: none. The servers start with the runtime
    #: and stop when it closes.
    mcp_config: str | os.PathLike[str] | McpConfig | None = None
    #: The operator's grants (``--grant``, ``--grants``; docs/grants.md), this runtime's
    #: alone (another runtime in the process keeps its own); ``None``: none (every pack
    #: reaches what it declares). A grant naming no loaded pack raises
    #: :class:`~control_plane._kernel.reach.GrantError`.
    grants: Grants | None = None
    #: The server's message limit (``--max-message-bytes``), handed to packs as
    #: ``ctx.reach.message_limit`` (e.g. ``http.fetch`` caps a body by it); ``None``:
    #: gRPC's default, 4 MiB.
    max_message_bytes: int | None = None
    #: Packs that declare no reach and the operator trusts (``--trust PACK``; ``"all"``:
    #: every one): they run in this process, unconfined. Every other pack that declares
    #: no reach runs in an isolated worker under its grant, or an empty one
    #: (:func:`decide_confinement`; docs/grants.md). ``grants`` may name more
    #: (``Grants.trusted``: the grants file's ``trust = true``).
    trust: tuple[str, ...] = ()
    #: Environment variables that are this server's own secrets (``--auth-token-env``'s
    #: name): never handed to a pack's program or worker, whatever its credentials grant
    #: (beside :data:`~control_plane._kernel.reach.SERVER_SECRETS`).
    withheld_env: tuple[str, ...] = ()
    #: The features this runtime is built from (plugin modules on the runtime hooks of
    #: ``_kernel/hookspecs.py``): isolation, MCP, grants' program runner, observability.
    #: One left out takes its part with it; what must be confined is then refused, never
    #: run unconfined (docs/architecture.md).
    features: tuple[str, ...] = RUNTIME_FEATURES


@dataclass(frozen=True, slots=True)
class Confinement:
    """How each pack is held, decided once when the runtime is built (docs/grants.md)."""

    #: The operator's grants (``--grant``, ``--grants``), as given.
    operator: Grants = field(default_factory=Grants)
    #: Packs that declare no reach, untrusted: each runs in an isolated worker, confined
    #: by the kernel to the operator's grant or, with none, to nothing (:meth:`Grant.nothing`).
    confined: frozenset[str] = frozenset()
    #: Packs that declare no reach and run in this process anyway, unconfined: trusted.
    trusted: frozenset[str] = frozenset()
    #: Pack -> each ``KEY=VALUE`` of its grant wider than what it declares.
    wider: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Packs whose work runs in another process no grant confines (an MCP server's tools
    #: granted nothing) -> that process (``"the MCP server fs"``): said at start-up.
    unconfined_elsewhere: Mapping[str, str] = field(default_factory=dict)

    def grants(self) -> Grants:
        """The grants to install: the operator's, and nothing for each confined pack the
        operator granted nothing."""
        implied = frozenset(n for n in self.confined if n not in self.operator.by_pack)
        by_pack = {**self.operator.by_pack, **dict.fromkeys(implied, Grant.nothing())}
        return Grants(by_pack, self.operator.trusted, implied)


def decide_confinement(
    registry: Registry, operator: Grants, trust: Iterable[str] = ()
) -> Confinement:
    """Which packs of ``registry`` run confined, which trusted, which grants are wider than
    the declaration. A pack whose work runs in another process already (an MCP server's
    tool) is left to its source."""
    trusted_names = {*trust, *operator.trusted}
    everything = TRUST_ALL[0] in trusted_names
    confined: set[str] = set()
    trusted: set[str] = set()
    wider: dict[str, tuple[str, ...]] = {}
    elsewhere: dict[str, str] = {}
    for loaded in registry:
        name = loaded.name
        grant = operator.by_pack.get(name)
        declared = getattr(loaded.pack, "reach", None)
        declared = declared if isinstance(declared, Reach) else None
        if grant is not None:
            found = grant.wider_than(declared)
            if found:
                wider[name] = tuple(found)
        if _runs_elsewhere(loaded):
            elsewhere[name] = str(getattr(loaded.pack.handler, "out_of_process", ""))
            continue
        if declared is not None:
            continue
        if everything or name in trusted_names:
            trusted.add(name)
        else:
            confined.add(name)
    # A grant to any tool of a process confines that process (and so all of its tools).
    held = {where for name, where in elsewhere.items() if name in operator.by_pack}
    elsewhere = {name: where for name, where in elsewhere.items() if where not in held}
    return Confinement(operator, frozenset(confined), frozenset(trusted), wider, elsewhere)


def _runs_elsewhere(loaded: Any) -> bool:
    """Whether the pack's work runs in another process already (its handler carries
    ``out_of_process``: an MCP server's tool)."""
    return isinstance(getattr(loaded.pack.handler, "out_of_process", None), str)


class Runtime:
    """Loaded packs under full enforcement; built by :func:`build_runtime`."""

    def __init__(
        self,
        load: LoadResult,
        invoker: Invoker,
        config: RuntimeConfig,
        confinement: Confinement | None = None,
        features: pluggy.PluginManager | None = None,
    ) -> None:
        self.load = load
        #: The runtime's features (``config.features``), whose hooks it calls.
        self.features = features if features is not None else feature_manager(config.features)
        self.invoker = invoker
        self.config = config
        #: How each pack is held (what ``packctl serve`` says at start-up).
        self.confinement = confinement if confinement is not None else Confinement()
        #: Metrics, events and incidents, once :meth:`observe` attached them.
        self.observability: Any = None
        #: What traces the calls a server serves (``close()``), set by a feature's
        #: ``configure`` (observability: ``--otel-endpoint``); closed with the runtime.
        self.tracing: Any = None
        self._closed = False

    @property
    def registry(self) -> Registry:
        return self.invoker.registry

    @property
    def reaches(self) -> Reaches:
        """What each pack may reach on this runtime: its grants over the packs'
        declarations (``ctx.reach``; ``packctl describe --local``)."""
        return self.invoker.reaches

    @property
    def isolated(self) -> frozenset[str]:
        """Names of the packs whose handlers run in worker processes."""
        pools = self.invoker.isolation
        return frozenset(
            name for name in self.registry.names() if pools is not None and name in pools
        )

    @property
    def event_sinks(self) -> Sequence[Callable[[ErrorEvent], None]]:
        """Sinks registered by plugins through ``register_event_sinks``."""
        return self.load.event_sinks

    # -- observability -------------------------------------------------------------------

    def observe(self, config: object | None = None, **kwargs: Any) -> Any:
        """Attach metrics, error events and the incident store (once), through the
        ``observe`` hook of the runtime's features (the observability feature's
        :func:`~control_plane._features.observability.plugin.observe`).

        With ``config`` (``packctl serve``'s options, typed), as it says; without,
        ``kwargs`` go to :func:`~control_plane._features.observability.observability.install`.
        Plugin event sinks and the load failures are always included. Raises
        :class:`~control_plane._kernel.limits.ConfigError` when no feature observes.
        """
        if self.observability is not None:
            return self.observability
        obs = self.features.hook.observe(runtime=self, config=config, options=kwargs)
        if obs is None:
            raise ConfigError("this runtime has no observability feature (RuntimeConfig.features)")
        self.observability = obs
        return obs

    # -- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        """Stop worker pools and threads, detach observability (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.invoker.close()
        if self.observability is not None:
            self.observability.close()
        if self.tracing is not None:
            self.tracing.close()
        self.load.close()

    @property
    def pack_health_sources(self) -> tuple[PackHealthSource, ...]:
        """Sources whose packs' health changes while serving (the MCP servers)."""
        return (self.load.mcp,) if self.load.mcp is not None else ()  # type: ignore[return-value]

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _plugin_names(names: Iterable[str]) -> tuple[list[tuple[str, str]], list[LoadFailure]]:
    """``--plugin`` values as ``(given, module name)``: a path of a ``.py`` file is imported
    by its stem, its directory put first on ``sys.path`` (so isolated workers find it too)."""
    found: list[tuple[str, str]] = []
    failed: list[LoadFailure] = []
    for given in names:
        name = given
        if given.endswith(".py"):
            path = Path(given).resolve()
            if not path.is_file():
                failed.append(LoadFailure(given, f"failed to load: no such file: {path}"))
                continue
            if str(path.parent) not in sys.path:
                sys.path.insert(0, str(path.parent))
            name = path.stem
        found.append((given, name))
    return found, failed


def not_found_hint(name: str) -> str:
    return (
        " (is it installed, or is its directory on PYTHONPATH? e.g. "
        f"PYTHONPATH=. packctl ...; or give the file: --plugin ./{name}.py)"
    )


def findable(module: str) -> bool:
    """Whether the top-level package of ``module`` is on this import path (found, not
    imported: no code of it runs)."""
    top = module.partition(":")[0].strip().partition(".")[0]
    if top in sys.modules or top in sys.builtin_module_names:
        return True
    return importlib.machinery.PathFinder.find_spec(top, sys.path) is not None


def _import_plugins(
    names: Iterable[tuple[str, str]],
) -> tuple[list[tuple[str, object]], list[LoadFailure]]:
    """Import the ``(given, module name)`` plugins here, in the control plane."""
    plugins: list[tuple[str, object]] = []
    failed: list[LoadFailure] = []
    for given, name in names:
        try:
            plugins.append((name, importlib.import_module(name)))
        except ModuleNotFoundError as exc:
            reason = f"failed to load: {type(exc).__name__}: {exc}"
            if exc.name == name:  # the module itself, not one it imports
                reason += not_found_hint(name)
            failed.append(LoadFailure(given, reason))
        # Plugin boundary: importing a plugin module may raise anything (SystemExit too).
        except PLUGIN_FAULTS as exc:
            failed.append(LoadFailure(given, f"failed to load: {type(exc).__name__}: {exc}"))
    return plugins, failed


def _isolation(
    features: pluggy.PluginManager,
    config: RuntimeConfig,
    registry: Registry,
    packs: Sequence[str],
    reaches: Reaches,
    declared: Sequence[str] = (),
) -> Any:
    """The worker pools of ``packs`` (and of the ``declared`` ``isolated=True`` ones) from
    the isolation feature; without one, a refusal: a pack that must run confined never
    runs in this process instead."""
    if not features.hook.start_isolation.get_hookimpls():
        raise ConfigError(
            f"cannot run {', '.join((*packs, *declared))} in isolated workers: this runtime has no "
            "isolation feature (RuntimeConfig.features); a pack that declares no reach "
            "runs only confined, or trusted (--trust)"
        )
    # None: nothing of these runs here (an MCP server's tools are their server's).
    return features.hook.start_isolation(
        config=config, registry=registry, packs=packs, reaches=reaches
    )


def _undescribed(given: str) -> LoadFailure:
    return LoadFailure(
        given,
        "not loaded: no feature of this runtime describes plugin modules in a confined "
        "worker (the isolation feature is left out; --trust all loads them here)",
    )


def _load_entry_points(
    names: Collection[str],
) -> tuple[list[tuple[str, object]], list[LoadFailure]]:
    """Load the ``capability_packs`` entry points named ``names`` here."""
    from importlib.metadata import entry_points

    loaded: list[tuple[str, object]] = []
    failed: list[LoadFailure] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in names:
            continue
        try:
            loaded.append((ep.name, ep.load()))
        # Plugin boundary: importing a plugin module may raise anything (SystemExit too).
        except PLUGIN_FAULTS as exc:
            failed.append(LoadFailure(ep.name, f"failed to load: {type(exc).__name__}: {exc}"))
    return loaded, failed


def trusted_packs(config: RuntimeConfig) -> set[str]:
    """The packs the operator trusts (``--trust``, ``trust = true``), ``"all"`` included."""
    return {*config.trust, *(config.grants.trusted if config.grants is not None else ())}


def _isolating(config: RuntimeConfig) -> bool:
    """Whether third-party plugin modules (``--plugin``, ``CAPABILITY_PACKS_PLUGINS``, entry
    points; never the built-in packs nor ``RuntimeConfig.extra``) are described by confined
    workers before any of them is imported here: always, unless the operator trusts every
    pack (``--trust all``) and isolates none. A module is then imported here only when
    every pack it holds declares a reach or is trusted; one holding an undeclared,
    untrusted pack (or an isolated one) never is: its code runs in confined workers only,
    from its first line (docs/grants.md)."""
    return bool(config.isolate) or TRUST_ALL[0] not in trusted_packs(config)


def build_runtime(
    config: RuntimeConfig | None = None, *, load: LoadResult | None = None
) -> Runtime:
    """The runtime for ``config``: plugins loaded, isolation started.

    ``load`` reuses plugins already loaded (a :func:`load_registry` result) instead of
    loading them from ``config``. Raises
    :class:`~control_plane._features.isolation.isolation.IsolationError` when ``config.isolate``
    names an unknown pack, :class:`~control_plane._features.mcp.source.config.McpConfigError` when
    ``config.mcp_config`` cannot be used.
    """
    require_scrubber()  # a process whose scrubber leaks never serves (SystemExit)
    config = config if config is not None else RuntimeConfig()
    operator = config.grants if config.grants is not None else Grants()
    scratch = Scratch()
    try:
        return _build(config, load, operator, scratch)
    except BaseException:
        scratch.close()
        raise


def _build(
    config: RuntimeConfig, load: LoadResult | None, operator: Grants, scratch: Scratch
) -> Runtime:
    owns_load = load is None
    features = feature_manager(config.features)
    if load is None:
        names, failed = _plugin_names(config.plugins)
        described: list[tuple[str, object]] = []
        entry_points = config.entry_points
        if _isolating(config):
            found = features.hook.describe_plugins(config=config, plugins=names, scratch=scratch)
            if found is None:  # no feature describes plugins: none is imported here
                found = ([], [], set(), [_undescribed(given) for given, _ in names])
            described, names, here, refused = found
            failed.extend(refused)
            # The entry points were described: only those that hold no isolated pack load
            # here (as extra plugins), none through the plugin manager's own loading.
            entry_points = False
            loaded, unloaded = _load_entry_points(here)
            described.extend(loaded)
            failed.extend(unloaded)
        imported, unimported = _import_plugins(names)
        failed.extend(unimported)
        load = load_registry(
            builtins=config.builtins,
            entry_points_=entry_points,
            extra=[*config.extra, *described, *imported],
        )
        if config.mcp_config is not None:
            # The MCP servers start now, confined to their packs' grants.
            try:
                load.mcp = features.hook.open_pack_sources(
                    config=config,
                    registry=load.registry,
                    reaches=Reaches(operator, scratch=scratch),
                )
            except BaseException:
                load.close()
                raise
            if load.mcp is None:
                load.close()
                raise ConfigError(
                    "an MCP config was given but this runtime has no MCP feature "
                    "(RuntimeConfig.features)"
                )
        for failure in (*config.failures, *failed):
            load.registry.record_failure(failure)
    served = load.registry.names()
    unknown = [
        *(config.grants.unknown(served) if config.grants is not None else ()),
        *(n for n in config.trust if n not in served and n != TRUST_ALL[0]),
    ]
    if unknown:
        if owns_load:
            load.close()
        said = unknown_names(unknown, served)
        raise GrantError(f"a grant names unknown pack(s): {said}")
    confinement = decide_confinement(load.registry, operator, config.trust)
    reaches = Reaches(
        confinement.grants(),
        load.registry.declared_reach,
        runner=features.hook.program_runner(),
        message_limit=config.max_message_bytes or DEFAULT_MESSAGE_LIMIT,
        scratch=scratch,
        withheld=config.withheld_env,
    )
    try:
        reaches.check_roots(served)
    except GrantError:
        if owns_load:
            load.close()
        raise
    invoker = Invoker(
        load.registry,
        classifiers=load.classifiers,
        max_workers=config.handler_threads,
        default_timeout=config.default_timeout,
        pack_threads=config.pack_threads,
        plugins=load.plugin_manager,
        reaches=reaches,
    )
    isolate = (*config.isolate, *sorted(confinement.confined))
    # Packs that declare isolated=True (and the stand-ins of a module isolated whole) run
    # in workers too, named or not: without pools their calls could only fail.
    declared = sorted(held.name for held in load.registry if held.pack.isolated)
    try:
        if isolate or declared:
            invoker.isolation = _isolation(
                features, config, load.registry, isolate, reaches, declared
            )
    except BaseException:
        invoker.close()
        if owns_load:
            load.close()
        raise
    return Runtime(load, invoker, config, confinement, features)
