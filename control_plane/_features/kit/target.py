""":class:`PackTarget`: which pack the kit tests, where its plugin comes from, and its seams."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from control_plane._kernel.registry import LoadedPack, LoadFailure
from control_plane._runtime.plugins import ENV_PLUGINS, LoadResult, load_registry

__all__ = ["ConformanceError", "LoadedTarget", "PackTarget", "load_target", "unfiltered"]


class ConformanceError(AssertionError):
    """A pack broke its contract; the message names the pack and the fault.

    An ``AssertionError`` so pytest reports it as a test failure with its message.
    """


#: A seam's replacement while no fault is injected (a fake downstream), or ``None``.
Stub = Callable[..., Any] | None


@dataclass(frozen=True)
class PackTarget:
    """The pack under test.

    :param name: the pack's dotted name.
    :param plugin: the plugin that registers it: a module or object with ``@hookimpl``
        functions, or its import path; ``None`` loads the installed entry points.
    :param seams: the pack's downstream calls, as ``"package.module:attr"`` (or
        ``"package.module:Class.method"``), where the handler looks them up. A mapping
        gives each seam a stub used while no fault is injected (generated inputs, the
        ``no_fault`` run); a plain sequence has none, and then generated inputs are
        always run under an injected fault so no real downstream is ever called.
    :param sample_inputs: inputs that reach the seams; the default is the smallest
        document the input schema admits.
    :param expect: fault name -> the code the caller must see, checked by
        :meth:`~control_plane._features.kit.PackKit.inject_faults` (others are only reported).
    :param network: let the pack reach beyond loopback during the kit's runs (a real
        downstream, on purpose). Off by default: a name resolution or connection elsewhere
        is refused and fails the test (:mod:`control_plane._features.kit.loopback`); names
        under ``.invalid`` fail as DNS failures without any lookup.
    :param grant: what the pack may reach during the kit's runs, in ``--grant``'s keys
        (``{"fs.read": ["$CWD", "/srv/data"], "egress": "public"}``). ``None`` (the
        default): what the pack declares. Either way ``$CWD`` and ``$TMP`` are
        directories the kit made for the run (``pack_kit.root("$CWD")``): a test puts its
        files there (docs/authoring.md).
    """

    name: str
    plugin: object | str | None = None
    seams: Sequence[str] | Mapping[str, Stub] = ()
    sample_inputs: Sequence[Mapping[str, Any]] = ()
    expect: Mapping[str, str] = field(default_factory=dict)
    network: bool = False
    grant: Mapping[str, str | Sequence[str]] | None = None

    def seam_stubs(self) -> dict[str, Stub]:
        """Each seam with its stub (``None`` when it has none)."""
        if isinstance(self.seams, Mapping):
            return dict(self.seams)
        return dict.fromkeys(self.seams)


@dataclass(frozen=True)
class LoadedTarget:
    """A target after loading: the plugin's load result and the pack as registered."""

    target: PackTarget
    load: LoadResult
    loaded: LoadedPack

    @property
    def failures(self) -> list[LoadFailure]:
        return list(self.load.registry.failures)


@contextmanager
def unfiltered() -> Iterator[None]:
    """Ignore ``CAPABILITY_PACKS_PLUGINS`` while the kit loads the plugin it was given."""
    saved = os.environ.pop(ENV_PLUGINS, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[ENV_PLUGINS] = saved


def _plugin_object(plugin: object | str) -> tuple[str, object]:
    if isinstance(plugin, str):
        module = importlib.import_module(plugin)
        return plugin, module
    if isinstance(plugin, ModuleType):
        return plugin.__name__, plugin
    return type(plugin).__name__, plugin


def load_plugin(plugin: object | str | None) -> LoadResult:
    """A registry of one plugin (or of the installed entry points when ``None``)."""
    with unfiltered():
        if plugin is None:
            return load_registry(builtins=False, entry_points_=True)
        return load_registry(builtins=False, entry_points_=False, extra=[_plugin_object(plugin)])


def describe_failures(failures: Sequence[LoadFailure]) -> str:
    return "\n".join(f"  - {failure}" for failure in failures)


def load_target(target: PackTarget) -> LoadedTarget:
    """Load ``target``; :class:`ConformanceError` naming the fault if it did not load."""
    try:
        load = load_plugin(target.plugin)
    except ImportError as exc:
        raise ConformanceError(
            f"pack {target.name!r}: plugin {target.plugin!r} does not import: {exc}"
        ) from exc
    registry = load.registry
    if target.name in registry:
        return LoadedTarget(target, load, registry.get(target.name))
    mine = [f for f in registry.failures if f.pack == target.name]
    if not mine:
        mine = [f for f in registry.failures if f.pack is None]
    if mine:
        raise ConformanceError(
            f"pack {target.name!r} was rejected at load time:\n{describe_failures(mine)}"
        )
    where = "the installed entry points" if target.plugin is None else repr(target.plugin)
    loaded = ", ".join(registry.names()) or "none"
    raise ConformanceError(
        f"pack {target.name!r} is not registered by {where} (packs loaded: {loaded}); "
        "is the distribution installed (pip install -e .) and its entry point in the "
        "'capability_packs' group?"
    )
