"""The hooks a capability-packs plugin may implement.

A plugin is any module or object with ``@hookimpl``-decorated functions, loaded from
:data:`control_plane.runtime.plugins.DEFAULT_PLUGINS` or from the ``capability_packs`` entry-point
group.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

from control_plane.core.classify import Classification
from control_plane.core.pack import Pack

if TYPE_CHECKING:
    from control_plane.runtime.events import ErrorEvent

__all__ = ["PROJECT", "hookimpl", "hookspec"]

PROJECT = "capability_packs"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_packs(register: Callable[[Pack], None]) -> None:
    """Register this plugin's packs by calling ``register(pack)`` once per pack.

    :param register: checks the :class:`~control_plane.core.pack.Pack` at once (schemas,
        closed vocabulary, code docs, unique name) and adds it to the registry. A pack that
        fails a check is recorded as a load failure naming this plugin; the plugin's other
        packs and every other plugin still load.
    :return: nothing; the return value is ignored.
    """


@hookspec(firstresult=True)
def classify_exception(exc: BaseException) -> Classification | None:
    """Classify an exception the built-in rules do not know.

    Called for each exception in a failure's chain (outermost first) after typed
    :class:`~control_plane.core.errors.PackError` handling and before the HTTP-status, type and
    errno tables. Return a :class:`~control_plane.core.classify.Classification` whose ``code``
    is a baseline code (or a pack code), or ``None`` to pass. ``firstresult``: the first
    implementation (newest registered first) that returns a classification wins.
    The built-in classifiers (``control_plane/core/classifiers``: grpc, httpx, requests,
    aiohttp, tls, smtp, xmlrpc, subprocess, sockets) implement this same hook and are
    asked after every other plugin. ``Classification(weak=True)`` marks a generic
    wrapper's guess, used only if nothing deeper in the chain classifies.
    Enforcement still maps the code onto each pack's vocabulary. A classifier that raises,
    or returns anything but a ``Classification``, is logged and counts as ``None``.
    A plugin may declare ``EXCEPTION_MODULES = ("acme_sdk",)`` (top-level package names):
    it is then asked only about exceptions with a class of one of them in their MRO.

    :param exc: one exception of the failure's cause chain.
    :return: a classification, or ``None``.
    """


@hookspec
def register_event_sinks(register: Callable[[Callable[[ErrorEvent], None]], None]) -> None:
    """Register sinks for structured error events by calling ``register(sink)``.

    A sink is any callable taking one :class:`~control_plane.runtime.events.ErrorEvent`. It is
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
