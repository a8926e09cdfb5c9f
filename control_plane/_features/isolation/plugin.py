"""The isolation feature on the runtime's hooks: third-party plugin modules described in
confined workers before any is imported, and the isolated packs' worker pools
(docs/reliability.md, docs/grants.md)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from control_plane._features.isolation.isolation import (
    ALL,
    Isolation,
    IsolationError,
    declared_pack,
    describe_module,
    locate,
)
from control_plane._kernel.hookspecs import hookimpl
from control_plane._kernel.registry import LoadFailure
from control_plane._runtime.plugins import ENTRY_POINT_GROUP, ENV_PLUGINS
from control_plane._runtime.runtime import findable, not_found_hint, trusted_packs

if TYPE_CHECKING:
    from control_plane._kernel.reach import Reaches, Scratch
    from control_plane._kernel.registry import Registry
    from control_plane._runtime.runtime import RuntimeConfig

__all__ = ["describe_plugins", "start_isolation"]

logger = logging.getLogger("capability_packs.isolation")


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


@hookimpl
def describe_plugins(
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
    trusted = trusted_packs(config)
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
    missing = [c for c in candidates if c[1] == c[2] and not findable(c[1])]
    for given, module, _ in missing:
        reason = f"failed to load: ModuleNotFoundError: No module named {module!r}"
        failed.append(LoadFailure(given, reason + not_found_hint(module)))
    candidates = [c for c in candidates if c not in missing]
    # Described side by side (each a process of its own, a second or so to start).
    with ThreadPoolExecutor(max(1, min(4, len(candidates)))) as pool:
        replies = list(
            pool.map(
                lambda module: describe_module(module, scratch=scratch),
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
        isolate = ALL in wanted or any(
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
                stand_ins.append(declared_pack(data, module))
            except (KeyError, TypeError, ValueError) as exc:
                failed.append(
                    LoadFailure(given, f"a malformed declaration: {type(exc).__name__}: {exc}")
                )
        for refused in _listed(reply.get("refused")):
            name, why = [*_listed(refused), "?", "?"][:2]
            failed.append(LoadFailure(given, f"its declaration cannot cross: {why}", str(name)))
        named = {p.get("name") for p in packs} & wanted
        if ALL not in wanted and {p.get("name") for p in packs} - named:
            logger.warning(
                "plugin module %s runs isolated whole (its packs %s): its code never runs in "
                "the control plane",
                module,
                ", ".join(sorted(str(p.get("name")) for p in packs)),
                extra={"event": "module_isolated", "plugin": given},
            )
        described.append((plugin, _Described(stand_ins)))
    return described, local, entry_points_here, failed


@hookimpl
def start_isolation(
    config: RuntimeConfig, registry: Registry, packs: Sequence[str], reaches: Reaches
) -> Isolation | None:
    """The worker pools of ``packs``; a pack that cannot be found by a worker is refused
    (raises :class:`IsolationError`)."""
    for name in packs:
        if name == ALL or name in config.isolate or name not in registry.names():
            continue  # named by --isolate: Isolation.for_registry says what is wrong
        held = registry.get(name)
        try:
            locate(name, held.pack.handler, held.plugin)
        except IsolationError as exc:
            raise IsolationError(
                f"{exc}. It declares no reach, so it runs in an isolated worker: declare "
                f"what it reaches (Pack(reach=Reach(...))), or trust it to run in this "
                f"process (--trust {name}; RuntimeConfig(trust=...))"
            ) from None
    return Isolation.for_registry(
        registry,
        packs,
        workers=config.isolation_workers,
        memory_limit=config.isolation_memory_limit,
        reaches=reaches,
    )
