"""The serving process's event loop (``packctl serve --loop``): uvloop where installed."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from control_plane._kernel.limits import ConfigError

__all__ = ["LOOPS", "EventLoop", "resolve_loop", "run"]

#: The values of ``--loop``.
LOOPS = ("auto", "asyncio", "uvloop")

T = TypeVar("T")


class EventLoop:
    """A resolved choice: its name (``asyncio`` or ``uvloop``) and the loop factory."""

    __slots__ = ("factory", "name")

    def __init__(self, name: str, factory: Callable[[], asyncio.AbstractEventLoop]) -> None:
        self.name = name
        self.factory = factory

    def __repr__(self) -> str:
        return f"EventLoop({self.name!r})"


def _uvloop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        module = importlib.import_module("uvloop")
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = module.new_event_loop
    return factory


def resolve_loop(choice: str = "auto") -> EventLoop:
    """The loop for ``choice`` (one of :data:`LOOPS`).

    Raises :class:`ConfigError` for an unknown choice, or for ``uvloop`` where it cannot
    be imported; ``auto`` falls back to the standard loop instead.
    """
    if choice not in LOOPS:
        raise ConfigError(f"unknown event loop {choice!r}; one of: {', '.join(LOOPS)}")
    if choice == "asyncio":
        return EventLoop("asyncio", asyncio.new_event_loop)
    factory = _uvloop_factory()
    if factory is not None:
        return EventLoop("uvloop", factory)
    if choice == "uvloop":
        raise ConfigError(
            "--loop uvloop: uvloop is not installed here (pip install uvloop; "
            "it has no Windows build), or use --loop asyncio"
        )
    return EventLoop("asyncio", asyncio.new_event_loop)


def run(main: Coroutine[Any, Any, T], loop: EventLoop) -> T:
    """Run ``main`` to completion on a new loop of ``loop`` (as :func:`asyncio.run`)."""
    with asyncio.Runner(loop_factory=loop.factory) as runner:
        return runner.run(main)
