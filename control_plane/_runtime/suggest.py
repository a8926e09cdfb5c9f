"""Names an operator typed that match nothing: each shown with the known name it is
closest to (``difflib``), so a typo is corrected from the message alone."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean", "unknown_names"]


def did_you_mean(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to ``name``, or ``None`` when none is close."""
    found = difflib.get_close_matches(name, list(known), n=1)
    return found[0] if found else None


def unknown_names(names: Iterable[str], known: Iterable[str]) -> str:
    """``names`` (unknown ones) joined by commas, each followed by ``(did you mean X?)``
    when a known name is close to it."""
    choices = sorted(set(known))
    shown = []
    for name in names:
        near = did_you_mean(name, choices)
        shown.append(f"{name} (did you mean {near}?)" if near else name)
    return ", ".join(shown)
