"""The hooks a capability-packs plugin may implement.

A plugin is any module or object with ``@hookimpl``-decorated functions, loaded from
:data:`control_plane.plugins.DEFAULT_PLUGINS` or from the ``capability_packs`` entry-point
group.
"""

from __future__ import annotations

from collections.abc import Callable

import pluggy

from control_plane.classify import Classification
from control_plane.pack import Pack

__all__ = ["PROJECT", "hookimpl", "hookspec"]

PROJECT = "capability_packs"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_packs(register: Callable[[Pack], None]) -> None:
    """Register this plugin's packs by calling ``register(pack)`` once per pack.

    :param register: checks the :class:`~control_plane.pack.Pack` at once (schemas,
        closed vocabulary, code docs, unique name) and adds it to the registry. A pack that
        fails a check is recorded as a load failure naming this plugin; the plugin's other
        packs and every other plugin still load.
    :return: nothing; the return value is ignored.
    """


@hookspec
def classify_exception(exc: BaseException) -> Classification | None:
    """Classify an exception the built-in rules do not know.

    Called for each exception in a failure's chain (outermost first) after typed
    :class:`~control_plane.errors.PackError` handling and before the HTTP-status, type and
    errno tables. Return a :class:`~control_plane.classify.Classification` whose ``code``
    is a baseline code (or a pack code), or ``None`` to pass. Enforcement still maps the
    code onto each pack's vocabulary. A classifier that raises is logged and skipped.

    :param exc: one exception of the failure's cause chain.
    :return: a classification, or ``None``.
    """
