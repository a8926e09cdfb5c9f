"""``build_runtime(RuntimeConfig(...))``: the one runtime every adapter uses."""

from __future__ import annotations

import importlib
import importlib.machinery
import logging
import os
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from control_plane._features.grants import tool_process
from control_plane._features.isolation import isolation
from control_plane._features.mcp.source.config import McpConfig, load_config
from control_plane._features.observability.events import EventSink
from control_plane._features.observability.observability import (
    Observability,
    ObservabilityConfig,
    install,
    install_configured,
)
from control_plane._kernel.hookspecs import hookimpl
from control_plane._kernel.invoke import Invoker
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
    ENV_PLUGINS,
    PLUGIN_FAULTS,
    LoadResult,
    load_registry,
)
from control_plane._runtime.suggest import unknown_names

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
    isolation_workers: int = isolation.DEFAULT_WORKERS
    isolation_memory_limit: int | None = isolation.DEFAULT_MEMORY_LIMIT
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
    ) -> None:
        self.load = load
        self.invoker = invoker
        self.config = config
        #: How each pack is held (what ``packctl serve`` says at start-up).
        self.confinement = confinement if confinement is not None else Confinement()
        #: Metrics, events and incidents, once :meth:`observe` attached them.
        self.observability: Observability | None = None
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
    def event_sinks(self) -> Sequence[EventSink]:
        """Sinks registered by plugins through ``register_event_sinks``."""
        return self.load.event_sinks

    # -- observability -------------------------------------------------------------------

    def observe(self, config: ObservabilityConfig | None = None, **kwargs: Any) -> Observability:
        """Attach metrics, error events and the incident store (once).

        With ``config`` (``packctl serve``'s options, typed), as it says; without,
        ``kwargs`` go to :func:`~control_plane._features.observability.observability.install`.
        Plugin event sinks and the load failures are always included.
        """
        if self.observability is not None:
            return self.observability
        failures = self.registry.failures
        if config is not None:
            obs = install_configured(
                self.invoker, config, load_failures=failures, event_sinks=self.event_sinks
            )
        else:
            sinks = [*self.event_sinks, *kwargs.pop("event_sinks", ())]
            obs = install(self.invoker, load_failures=failures, event_sinks=sinks, **kwargs)
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
        self.load.close()

    @property
    def pack_health_sources(self) -> tuple[PackHealthSource, ...]:
        """Sources whose packs' health changes while serving (the MCP servers)."""
        return (self.load.mcp,) if self.load.mcp is not None else ()

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


def _not_found_hint(name: str) -> str:
    return (
        " (is it installed, or is its directory on PYTHONPATH? e.g. "
        f"PYTHONPATH=. packctl ...; or give the file: --plugin ./{name}.py)"
    )


def _findable(module: str) -> bool:
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
                reason += _not_found_hint(name)
            failed.append(LoadFailure(given, reason))
        # Plugin boundary: importing a plugin module may raise anything (SystemExit too).
        except PLUGIN_FAULTS as exc:
            failed.append(LoadFailure(given, f"failed to load: {type(exc).__name__}: {exc}"))
    return plugins, failed


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


class _Described:
    """A plugin module known only by what a confined worker said it registers: its packs,
    built from that JSON data, run in isolated workers (never imported here)."""

    def __init__(self, packs: Sequence[Any]) -> None:
        self._packs = tuple(packs)

    @hookimpl
    def register_packs(self, register: Callable[[Any], None]) -> None:
        for pack in self._packs:
            register(pack)


def _listed(value: object) -> list[Any]:
    """``value`` if it is a list (of a worker's reply: untrusted), else empty."""
    return value if isinstance(value, list) else []


def _trusted(config: RuntimeConfig) -> set[str]:
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
    return bool(config.isolate) or TRUST_ALL[0] not in _trusted(config)


def _describe_plugins(
    config: RuntimeConfig, plugins: Sequence[tuple[str, str]], scratch: Scratch
) -> tuple[list[tuple[str, object]], list[tuple[str, str]], set[str], list[LoadFailure]]:
    """Describe each third-party plugin module (``--plugin`` and entry points) in a fresh
    confined worker. A module registering a pack that is to be isolated (named by
    ``--isolate``, ``all``, or declaring ``isolated=True``) is isolated whole: its packs are
    registered from their declarations and run in workers. The others are returned to be
    imported here as before. ``(described plugins, modules to import, entry points to load,
    failures)``."""
    from importlib.metadata import entry_points

    wanted = set(config.isolate)
    trusted = _trusted(config)
    # (as given, what a worker imports, the plugin's name here)
    candidates = [(given, module, module) for given, module in plugins]
    if config.entry_points:
        allowed = os.environ.get(ENV_PLUGINS)
        allow = None if allowed is None else {p.strip() for p in allowed.split(",")}
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if allow is None or ep.name in allow:
                candidates.append((ep.name, ep.value, ep.name))
    described: list[tuple[str, object]] = []
    local: list[tuple[str, str]] = []
    entry_points_here: set[str] = set()
    failed: list[LoadFailure] = []
    missing = [c for c in candidates if c[1] == c[2] and not _findable(c[1])]
    for given, module, _ in missing:
        reason = f"failed to load: ModuleNotFoundError: No module named {module!r}"
        failed.append(LoadFailure(given, reason + _not_found_hint(module)))
    candidates = [c for c in candidates if c not in missing]
    # Described side by side (each a process of its own, a second or so to start).
    with ThreadPoolExecutor(max(1, min(4, len(candidates)))) as pool:
        replies = list(
            pool.map(
                lambda module: isolation.describe_module(module, scratch=scratch),
                [c[1] for c in candidates],
            )
        )
    for (given, module, plugin), reply in zip(candidates, replies, strict=True):
        if reply.get("kind") != "ok":
            failed.append(
                LoadFailure(
                    given,
                    f"failed to load: {reply.get('error')} (in a confined worker: no files "
                    "but its code's, no network, no environment)",
                )
            )
            continue
        packs = [p for p in _listed(reply.get("packs")) if isinstance(p, dict)]
        isolate = isolation.ALL in wanted or any(
            p.get("name") in wanted
            or p.get("isolated") is True
            # A pack that declares no reach runs confined unless trusted: its module is
            # never imported here (decide_confinement isolates the pack).
            or (p.get("reach") is None and p.get("name") not in trusted)
            for p in packs
        )
        if not isolate:
            if plugin == module:
                local.append((given, module))
            else:  # an entry point: loaded here by the plugin manager, as before
                entry_points_here.add(plugin)
            continue
        stand_ins = []
        for data in packs:
            try:
                stand_ins.append(isolation.declared_pack(data, module))
            except (KeyError, TypeError, ValueError) as exc:
                failed.append(
                    LoadFailure(given, f"a malformed declaration: {type(exc).__name__}: {exc}")
                )
        for refused in _listed(reply.get("refused")):
            name, why = [*_listed(refused), "?", "?"][:2]
            failed.append(LoadFailure(given, f"its declaration cannot cross: {why}", str(name)))
        named = {p.get("name") for p in packs} & wanted
        if isolation.ALL not in wanted and {p.get("name") for p in packs} - named:
            logger.warning(
                "plugin module %s runs isolated whole (its packs %s): its code never runs in "
                "the control plane",
                module,
                ", ".join(sorted(str(p.get("name")) for p in packs)),
                extra={"event": "module_isolated", "plugin": given},
            )
        described.append((plugin, _Described(stand_ins)))
    return described, local, entry_points_here, failed


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
    if load is None:
        mcp = config.mcp_config
        mcp_config = mcp if isinstance(mcp, McpConfig) or mcp is None else load_config(mcp)
        names, failed = _plugin_names(config.plugins)
        described: list[tuple[str, object]] = []
        entry_points = config.entry_points
        if _isolating(config):
            described, names, here, refused = _describe_plugins(config, names, scratch)
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
            mcp_config=mcp_config,
            # The MCP servers start now, confined to their packs' grants.
            grants=operator,
            scratch=scratch,
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
        runner=tool_process.run_program,
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
    try:
        for name in sorted(confinement.confined):
            held = load.registry.get(name)
            try:
                isolation.locate(name, held.pack.handler, held.plugin)
            except isolation.IsolationError as exc:
                raise isolation.IsolationError(
                    f"{exc}. It declares no reach, so it runs in an isolated worker: declare "
                    f"what it reaches (Pack(reach=Reach(...))), or trust it to run in this "
                    f"process (--trust {name}; RuntimeConfig(trust=...))"
                ) from None
        invoker.isolation = isolation.Isolation.for_registry(
            load.registry,
            (*config.isolate, *sorted(confinement.confined)),
            workers=config.isolation_workers,
            memory_limit=config.isolation_memory_limit,
            reaches=reaches,
        )
    except BaseException:
        invoker.close()
        if owns_load:
            load.close()
        raise
    return Runtime(load, invoker, config, confinement)
