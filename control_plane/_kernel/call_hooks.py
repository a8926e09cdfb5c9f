"""The per-call hooks (``call_started``, ``call_finished``, ``incident_recorded``,
``request_refused``), resolved once per plugin change and called with each plugin failing
alone."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pluggy
from pluggy import HookImpl

from control_plane._kernel import hookspecs

__all__ = ["Bound", "CallHooks", "bound", "new_plugin_manager"]

logger = logging.getLogger("capability_packs.plugins")

_Fn = Callable[..., Any]

#: One hook implementation, ready to call with the spec's arguments in the spec's order,
#: and the name of its plugin.
Bound = tuple[_Fn, str]


def new_plugin_manager() -> pluggy.PluginManager:
    """A plugin manager knowing every capability-packs hook, with no plugin registered."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def bound(impls: Iterable[HookImpl], names: tuple[str, ...]) -> tuple[Bound, ...]:
    """Each of ``impls``, in the order given, bound to take ``names`` positionally (an
    implementation may name fewer arguments than the spec offers, in any order). The one
    hand-written hook caller: everything that walks a hook's implementations itself, to call
    each inside a plugin boundary, resolves them here (pluggy's order is
    ``reversed(caller.get_hookimpls())``: newest and ``tryfirst`` first)."""
    found: list[Bound] = []
    for impl in impls:
        fn = impl.function
        if impl.argnames != names:
            fn = _picking(fn, tuple(names.index(n) for n in impl.argnames))
        found.append((fn, impl.plugin_name))
    return tuple(found)


def _picking(fn: _Fn, picked: tuple[int, ...]) -> _Fn:
    def call(*args: Any) -> Any:
        return fn(*(args[i] for i in picked))

    return call


def _failed(plugin: str, exc: BaseException) -> None:
    # Not logger.exception: the traceback may hold the call's data.
    logger.error("plugin %s raised %s in a call hook; skipped", plugin, type(exc).__name__)


class CallHooks:
    """The call hooks of one plugin manager, as tuples walked on the call path.

    pluggy's own call costs more per call than a tuple walk, so the implementations are
    read once (:meth:`refresh`, run by :meth:`register` and :meth:`unregister`) through
    pluggy's public ``get_hookimpls()``. Every implementation is called inside a plugin
    boundary: whatever it raises (``BaseException`` included) is logged and the call,
    and the other plugins, go on.
    """

    def __init__(self, pm: pluggy.PluginManager | None = None) -> None:
        self.plugin_manager = pm if pm is not None else new_plugin_manager()
        self.started: tuple[Bound, ...] = ()
        self.finished: tuple[Bound, ...] = ()
        self.incident: tuple[Bound, ...] = ()
        self.refused: tuple[Bound, ...] = ()
        self.refresh()

    def refresh(self) -> None:
        """Read the implementations again (after a plugin was registered elsewhere)."""
        hook = self.plugin_manager.hook
        self.started = bound(reversed(hook.call_started.get_hookimpls()), ("pack",))
        self.finished = bound(
            reversed(hook.call_finished.get_hookimpls()), ("pack", "outcome", "elapsed_s")
        )
        self.incident = bound(reversed(hook.incident_recorded.get_hookimpls()), ("incident",))
        self.refused = bound(reversed(hook.request_refused.get_hookimpls()), ("event",))

    def register(self, plugin: object, name: str | None = None) -> None:
        """Register ``plugin`` (an object or module with ``@hookimpl`` functions)."""
        self.plugin_manager.register(plugin, name=name)
        self.refresh()

    def unregister(self, plugin: object) -> None:
        """Unregister ``plugin`` (no-op when it is not registered)."""
        if self.plugin_manager.is_registered(plugin):
            self.plugin_manager.unregister(plugin)
            self.refresh()

    def notify(self, impls: Sequence[Bound], *args: Any) -> None:
        """Call each implementation with ``args``; results are ignored."""
        for fn, plugin in impls:
            try:
                fn(*args)
            # Plugin boundary: a hook implementation may raise anything, SystemExit
            # included; the call it observes and the server go on.
            except BaseException as exc:  # noqa: BLE001
                _failed(plugin, exc)

    def started_call(self, pack: Any) -> list[Bound]:
        """Run ``call_started``; the end callbacks its implementations returned."""
        ends = []
        for fn, plugin in self.started:
            try:
                end = fn(pack)
            # Plugin boundary, as in :meth:`notify`.
            except BaseException as exc:  # noqa: BLE001
                _failed(plugin, exc)
                continue
            if callable(end):
                ends.append((end, plugin))
        return ends

    def ended(self, ends: Sequence[Bound]) -> None:
        """Run each end callback of :meth:`started_call`, each failing alone."""
        self.notify(ends)
