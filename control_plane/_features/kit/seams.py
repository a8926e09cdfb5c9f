"""Seams (``"package.module:attr"``): a pack's named downstream calls, patched where the handler
looks them up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = ["Seam", "constant", "patch_seams", "resolve_seam"]

_MISSING = object()


@dataclass(frozen=True)
class Seam:
    """A resolved seam: the object holding the attribute, and the attribute's name."""

    spec: str
    owner: Any
    attr: str

    @property
    def current(self) -> Any:
        return getattr(self.owner, self.attr)

    def raw(self) -> Any:
        """The attribute as stored (a ``staticmethod`` stays one), for restoring."""
        if isinstance(self.owner, type):
            return self.owner.__dict__.get(self.attr, _MISSING)
        return getattr(self.owner, self.attr, _MISSING)


def resolve_seam(spec: str) -> Seam:
    """The :class:`Seam` for ``spec``; ``LookupError`` naming what is missing."""
    if ":" in spec:
        module_name, _, path = spec.partition(":")
        module = importlib.import_module(module_name)
    else:
        parts = spec.split(".")
        module = None
        for cut in range(len(parts) - 1, 0, -1):
            try:
                module = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            path = ".".join(parts[cut:])
            break
        if module is None:
            raise LookupError(f"seam {spec!r}: no importable module in it")
    names = path.split(".")
    owner: Any = module
    for name in names[:-1]:
        owner = getattr(owner, name, _MISSING)
        if owner is _MISSING:
            raise LookupError(f"seam {spec!r}: {name!r} not found")
    if not hasattr(owner, names[-1]):
        raise LookupError(f"seam {spec!r}: {names[-1]!r} not found on {owner!r}")
    return Seam(spec, owner, names[-1])


def constant(value: Any) -> Callable[[Seam], Any]:
    """A replacement factory that puts ``value`` (a stub) in place of the seam."""

    def make(seam: Seam) -> Any:
        return value

    return make


@contextmanager
def patch_seams(
    replacements: Mapping[str, Callable[[Seam], Any] | None],
) -> Iterator[dict[str, Seam]]:
    """Replace each seam by ``make(seam)`` (``None`` leaves it alone); restore on exit."""
    seams = {spec: resolve_seam(spec) for spec in replacements}
    saved: list[tuple[Seam, Any]] = []
    try:
        for spec, make in replacements.items():
            if make is None:
                continue
            seam = seams[spec]
            saved.append((seam, seam.raw()))
            setattr(seam.owner, seam.attr, make(seam))
        yield seams
    finally:
        for seam, raw in reversed(saved):
            if raw is _MISSING:
                delattr(seam.owner, seam.attr)
            else:
                setattr(seam.owner, seam.attr, raw)
