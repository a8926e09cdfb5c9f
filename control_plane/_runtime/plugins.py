"""Plugin loading: built-in packs, entry points, ``CAPABILITY_PACKS_PLUGINS`` and MCP sources."""

from __future__ import annotations

import functools
import importlib
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, Protocol

import pluggy
from pluggy import HookImpl

from control_plane._kernel.call_hooks import Bound, bound, new_plugin_manager
from control_plane._kernel.classify import Classification, Classifier
from control_plane._kernel.error_event import ErrorEvent
from control_plane._kernel.errors import PluginLoadError
from control_plane._kernel.pack import Pack
from control_plane._kernel.registry import LoadFailure, Registry

__all__ = [
    "BUILTIN_CLASSIFIERS",
    "BUILTIN_FEATURES",
    "DEFAULT_PLUGINS",
    "ENTRY_POINT_GROUP",
    "ENV_PLUGINS",
    "PLUGIN_FAULTS",
    "RUNTIME_FEATURES",
    "LoadResult",
    "classifiers_of",
    "feature_manager",
    "get_plugin_manager",
    "load_registry",
]

logger = logging.getLogger("capability_packs.plugins")

ENTRY_POINT_GROUP = "capability_packs"
ENV_PLUGINS = "CAPABILITY_PACKS_PLUGINS"

#: The built-in classifier plugins, in the order they are asked (after every other plugin):
#: the kernel's readings of the standard library, then the libraries feature's.
BUILTIN_CLASSIFIERS: tuple[str, ...] = (
    "control_plane._kernel.classifiers.tls",
    "control_plane._kernel.classifiers.subprocess",
    "control_plane._kernel.classifiers.sockets",
    "control_plane._features.libraries.proxy",
    "control_plane._features.libraries.grpc",
    "control_plane._features.libraries.libraries",
    "control_plane._features.libraries.websockets",
)

#: Built-in packs, each a plugin like any third-party one, then the built-in classifiers.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "packs.av_validate",
    "packs.http_fetch",
    "packs.git",
    *BUILTIN_CLASSIFIERS,
)


#: The built-in features' plugin modules, each implementing the command hooks
#: (``add_commands``, ``add_serve_options``, ``add_runtime_options``, ``runtime_config``,
#: ``configure``) for its folder, as pytest's ``default_plugins``:
#: ``packctl`` is built from this tuple; leave one out and its commands are gone.
BUILTIN_FEATURES: tuple[str, ...] = (
    "control_plane._features.cli.cli",
    "control_plane._features.isolation.cli",
    "control_plane._features.grants.grant_cli",
    "control_plane._features.mcp.source.cli",
    "control_plane._features.observability.observability_cli",
    "control_plane._features.mcp.bridge.cli",
    "control_plane._features.temporal.cli",
    "control_plane._features.kit.cli",
    "control_plane._features.gate.cli",
    "control_plane._features.grpc.proto_cli",
    "control_plane._features.grpc.status_cli",
)


#: The features a runtime is built from (``RuntimeConfig.features``), each implementing the
#: runtime hooks for its folder: describing and isolating plugins, MCP servers' tools as
#: packs, the grants' program runner, observability. The grant checks are the kernel's.
RUNTIME_FEATURES: tuple[str, ...] = (
    "control_plane._features.isolation.plugin",
    "control_plane._features.mcp.source.plugin",
    "control_plane._features.grants.plugin",
    "control_plane._features.observability.plugin",
)


class PackSource(Protocol):
    """Packs started with the runtime and stopped with it (an MCP source, whose servers'
    health changes while serving)."""

    def close(self) -> None: ...


def feature_manager(features: Sequence[str] = BUILTIN_FEATURES) -> pluggy.PluginManager:
    """A plugin manager with ``features`` registered (module names), so that their hooks
    are called in the order given."""
    pm = new_plugin_manager()
    for name in reversed(features):  # pluggy calls the newest registered first
        pm.register(importlib.import_module(name), name)
    return pm


#: What a plugin's import or hook may raise that makes it a broken plugin, reported beside
#: the others: any exception, and SystemExit (``sys.exit(0)`` at import would otherwise end
#: ``packctl serve`` quietly, and pass ``packctl check`` with exit 0). KeyboardInterrupt
#: is the operator's and propagates.
PLUGIN_FAULTS: tuple[type[BaseException], ...] = (Exception, SystemExit)


def _allowed() -> set[str] | None:
    value = os.environ.get(ENV_PLUGINS)
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def get_plugin_manager(
    *,
    builtins: bool = True,
    entry_points_: bool = True,
    extra: Sequence[tuple[str, object]] = (),
    failures: list[LoadFailure] | None = None,
    builtin_classifiers: bool = True,
) -> pluggy.PluginManager:
    """A plugin manager with built-in, entry-point and ``extra`` plugins registered."""
    pm = new_plugin_manager()
    allowed = _allowed()
    sink = failures if failures is not None else []

    def add(name: str, load: Any, *, filtered: bool = True) -> None:
        if filtered and allowed is not None and name not in allowed:
            return
        try:
            plugin = load()
            if pm.has_plugin(name) or pm.is_registered(plugin):
                return  # a built-in classifier also passed as ``extra``
            pm.register(plugin, name=name)
        # Plugin boundary: importing third-party code may raise anything, SystemExit
        # included (sys.exit() or an argparse --help at import must not end -- or pass --
        # the command loading it).
        except PLUGIN_FAULTS as exc:
            reason = f"failed to load: {type(exc).__name__}: {exc}"
            failure = LoadFailure(plugin=name, reason=reason)
            logger.error("load failure: %s", failure)  # noqa: TRY400 - reported, not a crash
            sink.append(failure)

    if builtin_classifiers:
        # First, and in reverse: pluggy asks the newest plugin first, so every other
        # plugin's classifier is tried before the built-in ones, which are then tried in
        # BUILTIN_CLASSIFIERS order.
        for module in reversed(BUILTIN_CLASSIFIERS):
            add(module, lambda module=module: importlib.import_module(module), filtered=False)
    if builtins:
        for module in DEFAULT_PLUGINS:
            if module not in BUILTIN_CLASSIFIERS:
                add(module, lambda module=module: importlib.import_module(module))
    if entry_points_:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            add(ep.name, ep.load)
    for name, plugin in extra:
        add(name, lambda plugin=plugin: plugin)
    return pm


class LoadResult:
    """A registry, the plugin classifiers and event sinks, from one plugin manager."""

    def __init__(
        self,
        registry: Registry,
        classifiers: Sequence[Classifier],
        pm: pluggy.PluginManager,
        event_sinks: Sequence[Callable[[ErrorEvent], None]] = (),
        mcp: PackSource | None = None,
    ) -> None:
        self.registry = registry
        self.classifiers = tuple(classifiers)
        self.plugin_manager = pm
        #: Sinks registered through the ``register_event_sinks`` hook.
        self.event_sinks = tuple(event_sinks)
        #: The MCP servers whose tools are packs here (``None``: no MCP config), set by
        #: ``build_runtime`` through the ``open_pack_sources`` hook.
        self.mcp = mcp

    def close(self) -> None:
        """Stop what the load started (the MCP servers); idempotent."""
        if self.mcp is not None:
            self.mcp.close()


#: The attribute of a plugin (module or object) naming the top-level modules of the exception
#: classes its ``classify_exception`` answers for (``EXCEPTION_MODULES = ("httpx",
#: "httpcore")``): it is asked only about exceptions with a class from one of them in their
#: MRO. A plugin without it is asked about every exception.
EXCEPTION_MODULES = "EXCEPTION_MODULES"

#: Most exception types whose implementations are remembered (emptied when full: a pack
#: that makes a new exception class per call cannot grow it).
_BY_TYPE_MAX = 1024


def exception_modules(plugin: object) -> frozenset[str] | None:
    """The modules ``plugin`` declares under :data:`EXCEPTION_MODULES`, or ``None`` (asked
    about every exception). A declaration that is not a tuple, list or set of strings is
    ignored (the plugin is asked about everything, as without one)."""
    declared = getattr(plugin, EXCEPTION_MODULES, None)
    if not isinstance(declared, tuple | list | set | frozenset):
        return None
    if not all(isinstance(name, str) for name in declared):
        return None
    return frozenset(declared)


def _type_modules(kind: type) -> frozenset[str]:
    """The top-level modules of the classes in ``kind``'s MRO."""
    found = set()
    for cls in getattr(kind, "__mro__", ()):
        module = getattr(cls, "__module__", None)
        if isinstance(module, str):
            found.add(module.partition(".")[0])
    return frozenset(found)


class _HookClassifier:
    """The ``classify_exception`` hook as one classifier, each implementation failing alone.

    pluggy's ``firstresult`` loop stops at the first implementation that raises; here a
    raising implementation, or one returning something that is not a
    :class:`Classification`, is logged and counts as ``None``, and the next is asked, in
    pluggy's order (``get_hookimpls()`` reversed: newest and ``tryfirst`` first). Only the
    implementations whose plugin answers for the exception's modules are asked
    (:data:`EXCEPTION_MODULES`). With a hook wrapper registered, pluggy runs the call.
    Only pluggy's public API is used: ``get_hookimpls()``, ``HookImpl`` read, never written.
    """

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self._hook = pm.hook.classify_exception
        #: Per exception type: the implementations asked, and the list they came from (a
        #: plugin registered later changes it).
        self._by_type: dict[type, tuple[list[HookImpl], tuple[Bound, ...]]] = {}

    @property
    def remembered(self) -> int:
        """How many exception types the per-type memory holds (at most ``_BY_TYPE_MAX``)."""
        return len(self._by_type)

    def _chosen(self, kind: type, impls: list[HookImpl]) -> tuple[Bound, ...]:
        known = self._by_type.get(kind)
        if known is not None and known[0] == impls:
            return known[1]
        modules = _type_modules(kind)
        asked = bound(
            (
                impl
                for impl in reversed(impls)
                if (wanted := exception_modules(impl.plugin)) is None or wanted & modules
            ),
            ("exc",),
        )
        if len(self._by_type) >= _BY_TYPE_MAX:
            self._by_type.clear()
        self._by_type[kind] = (impls, asked)
        return asked

    def __call__(self, exc: BaseException) -> Classification | None:
        impls = self._hook.get_hookimpls()
        if any(impl.hookwrapper or impl.wrapper for impl in impls):
            try:
                result = self._hook(exc=exc)
            # Plugin boundary: a broken hook wrapper must not break classification (the
            # built-in rules of core.classify still answer).
            except Exception:
                logger.exception("a classify_exception hook wrapper raised; plugins skipped")
                return None
            return result if isinstance(result, Classification) else None
        for classify, plugin in self._chosen(type(exc), impls):
            try:
                found = classify(exc)
            # Plugin boundary: a broken classifier must not break classification.
            except Exception:
                logger.exception("classifier of plugin %s raised; skipped", plugin)
                continue
            if isinstance(found, Classification):
                return found
        return None


def classifiers_of(pm: pluggy.PluginManager) -> list[Classifier]:
    """The ``classify_exception`` hook of ``pm`` as a classifier list (each implementation
    failing alone; empty when no plugin classifies)."""
    return [_HookClassifier(pm)] if pm.hook.classify_exception.get_hookimpls() else []


def _check_pending(pm: pluggy.PluginManager, registry: Registry) -> None:
    """Report every hook implementation that matches no spec (a misspelled hook) as a load
    failure naming its plugin; such a hook would otherwise never be called."""
    for name in sorted(vars(pm.hook)):
        if name.startswith("_"):
            continue
        caller = getattr(pm.hook, name)
        if caller.spec is not None:
            continue
        for impl in caller.get_hookimpls():
            if impl.optionalhook:
                continue
            known = ", ".join(
                sorted(
                    n
                    for n in vars(pm.hook)
                    if not n.startswith("_") and getattr(pm.hook, n).spec is not None
                )
            )
            registry.record_failure(
                LoadFailure(
                    impl.plugin_name,
                    f"unknown hook {name!r}: no such hook in capability_packs "
                    f"(known hooks: {known}); mark it @hookimpl(optionalhook=True) if intended",
                )
            )
            pm.unregister(name=impl.plugin_name)


def load_registry(
    *,
    builtins: bool = True,
    entry_points_: bool = True,
    extra: Iterable[tuple[str, object] | ModuleType] = (),
    builtin_classifiers: bool = True,
) -> LoadResult:
    """Load every plugin's packs into a fresh :class:`Registry`.

    ``extra`` adds plugins directly (a module, or ``(name, object)``), as tests do.
    """
    named: list[tuple[str, object]] = [
        (p.__name__, p) if isinstance(p, ModuleType) else p for p in extra
    ]
    registry = Registry()
    pm = get_plugin_manager(
        builtins=builtins,
        entry_points_=entry_points_,
        extra=named,
        failures=registry.failures,
        builtin_classifiers=builtin_classifiers,
    )
    _check_pending(pm, registry)
    pm.check_pending()  # nothing left to report: every implementation matches a spec

    def register(plugin: str, pack: Pack) -> None:
        try:
            registry.register(pack, plugin)
        except PluginLoadError as exc:
            registry.record_failure(LoadFailure(exc.plugin, exc.reason, exc.pack))

    _each_registering(pm, registry, "register_packs", register)
    classifiers = classifiers_of(pm)
    return LoadResult(registry, classifiers, pm, _event_sinks(pm, registry))


def _each_registering(
    pm: pluggy.PluginManager,
    registry: Registry,
    hook: str,
    accept: Callable[[str, Any], None],
) -> None:
    """Call every implementation of ``hook`` (``register_packs``, ``register_event_sinks``)
    in registration order with a ``register`` callback that hands what it is given, and the
    plugin's name, to ``accept``; a plugin whose hook raises is a load failure."""
    for fn, plugin in bound(getattr(pm.hook, hook).get_hookimpls(), ("register",)):
        try:
            fn(functools.partial(accept, plugin))
        # Plugin boundary: a plugin's hook may raise anything (SystemExit too).
        except PLUGIN_FAULTS as exc:
            registry.record_failure(
                LoadFailure(plugin, f"{hook} raised {type(exc).__name__}: {exc}")
            )


def _event_sinks(
    pm: pluggy.PluginManager, registry: Registry
) -> list[Callable[[ErrorEvent], None]]:
    sinks: list[Callable[[ErrorEvent], None]] = []

    def register(plugin: str, sink: Callable[[ErrorEvent], None]) -> None:
        if not callable(sink):
            registry.record_failure(
                LoadFailure(plugin, f"register_event_sinks: {type(sink).__name__} is not callable")
            )
            return
        sinks.append(sink)

    _each_registering(pm, registry, "register_event_sinks", register)
    return sinks
