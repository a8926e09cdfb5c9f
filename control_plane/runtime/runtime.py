"""``build_runtime(RuntimeConfig(...))``: the one runtime every adapter uses."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from control_plane.core.invoke import Invoker
from control_plane.core.reach import GrantError, Grants, install_grants, install_message_limit
from control_plane.core.redact import require_scrubber
from control_plane.core.registry import LoadFailure, Registry
from control_plane.runtime import isolation
from control_plane.runtime.events import EventSink
from control_plane.runtime.mcp_source.config import McpConfig, load_config
from control_plane.runtime.observability import (
    Observability,
    ObservabilityConfig,
    install,
    install_configured,
)
from control_plane.runtime.plugins import PLUGIN_FAULTS, LoadResult, load_registry

__all__ = ["DEFAULT_TIMEOUT", "PackHealthSource", "Runtime", "RuntimeConfig", "build_runtime"]


class PackHealthSource(Protocol):
    """Packs whose health changes while serving (the MCP source: its servers' states).

    ``watch`` callbacks may run on any thread; a server hands them to its own loop.
    """

    def pack_health(self) -> Mapping[str, bool]: ...

    def watch(self, watcher: Callable[[str, bool], None]) -> None: ...


#: Deadline of a call that carries none, in seconds, on every adapter.
DEFAULT_TIMEOUT = 300.0


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
    #: (``None``: half of the pool; see :mod:`control_plane.core.threads`).
    pack_threads: int | None = None
    #: Deadline of calls that carry none (``None``: no deadline).
    default_timeout: float | None = DEFAULT_TIMEOUT
    #: Load failures found before loading (e.g. a ``--plugin`` module that did not import).
    failures: tuple[LoadFailure, ...] = field(default=())
    #: MCP servers whose tools load as packs (:mod:`control_plane.runtime.mcp_source`): a config
    #: file's path or a loaded config; ``None``: none. The servers start with the runtime
    #: and stop when it closes.
    mcp_config: str | os.PathLike[str] | McpConfig | None = None
    #: The operator's grants (``--grant``, ``--grants``; docs/grants.md), installed for the
    #: whole process when the runtime is built; ``None``: keep what is installed (at first,
    #: no grants: every pack reaches what it declares). A grant naming no loaded pack raises
    #: :class:`~control_plane.core.reach.GrantError`.
    grants: Grants | None = None
    #: The server's message limit (``--max-message-bytes``), handed to packs as
    #: ``ctx.reach.message_limit`` (e.g. ``http.fetch`` caps a body by it); ``None``: keep
    #: what is installed (at first gRPC's default, 4 MiB).
    max_message_bytes: int | None = None


class Runtime:
    """Loaded packs under full enforcement; built by :func:`build_runtime`."""

    def __init__(self, load: LoadResult, invoker: Invoker, config: RuntimeConfig) -> None:
        self.load = load
        self.invoker = invoker
        self.config = config
        #: Metrics, events and incidents, once :meth:`observe` attached them.
        self.observability: Observability | None = None
        self._closed = False

    @property
    def registry(self) -> Registry:
        return self.invoker.registry

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
        ``kwargs`` go to :func:`~control_plane.runtime.observability.install`. Plugin
        event sinks and the load failures are always included.
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


def _import_plugins(names: Iterable[str]) -> tuple[list[tuple[str, object]], list[LoadFailure]]:
    """``--plugin`` values: module names, or paths of ``.py`` files (imported by their stem,
    their directory put first on ``sys.path``, so isolated workers import them too)."""
    plugins: list[tuple[str, object]] = []
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
        try:
            plugins.append((name, importlib.import_module(name)))
        except ModuleNotFoundError as exc:
            reason = f"failed to load: {type(exc).__name__}: {exc}"
            if exc.name == name:  # the module itself, not one it imports
                reason += (
                    " (is it installed, or is its directory on PYTHONPATH? e.g. "
                    f"PYTHONPATH=. packctl ...; or give the file: --plugin ./{name}.py)"
                )
            failed.append(LoadFailure(given, reason))
        # Plugin boundary: importing a plugin module may raise anything (SystemExit too).
        except PLUGIN_FAULTS as exc:
            failed.append(LoadFailure(given, f"failed to load: {type(exc).__name__}: {exc}"))
    return plugins, failed


def build_runtime(
    config: RuntimeConfig | None = None, *, load: LoadResult | None = None
) -> Runtime:
    """The runtime for ``config``: plugins loaded, isolation started.

    ``load`` reuses plugins already loaded (a :func:`load_registry` result) instead of
    loading them from ``config``. Raises
    :class:`~control_plane.runtime.isolation.IsolationError` when ``config.isolate`` names
    an unknown pack, :class:`~control_plane.runtime.mcp_source.McpConfigError` when
    ``config.mcp_config`` cannot be used.
    """
    require_scrubber()  # a process whose scrubber leaks never serves (SystemExit)
    config = config if config is not None else RuntimeConfig()
    owns_load = load is None
    if config.grants is not None:
        # Before loading: the MCP servers start now, confined to their packs' grants.
        install_grants(config.grants)
    if load is None:
        mcp = config.mcp_config
        mcp_config = mcp if isinstance(mcp, McpConfig) or mcp is None else load_config(mcp)
        imported, failed = _import_plugins(config.plugins)
        load = load_registry(
            builtins=config.builtins,
            entry_points_=config.entry_points,
            extra=[*config.extra, *imported],
            mcp_config=mcp_config,
        )
        for failure in (*config.failures, *failed):
            load.registry.record_failure(failure)
    if config.grants is not None:
        unknown = config.grants.unknown(load.registry.names())
        if unknown:
            if owns_load:
                load.close()
            install_grants(Grants())
            raise GrantError(f"a grant names unknown pack(s): {', '.join(unknown)}")
    if config.max_message_bytes is not None:
        install_message_limit(config.max_message_bytes)
    invoker = Invoker(
        load.registry,
        classifiers=load.classifiers,
        max_workers=config.handler_threads,
        default_timeout=config.default_timeout,
        pack_threads=config.pack_threads,
        plugins=load.plugin_manager,
    )
    try:
        invoker.isolation = isolation.Isolation.for_registry(
            load.registry,
            config.isolate,
            workers=config.isolation_workers,
            memory_limit=config.isolation_memory_limit,
        )
    except BaseException:
        invoker.close()
        if owns_load:
            load.close()
        raise
    return Runtime(load, invoker, config)
