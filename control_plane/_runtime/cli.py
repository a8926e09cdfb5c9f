"""What every feature's command-line options share: argument types with clear messages."""

from __future__ import annotations

import argparse

__all__ = ["positive_int"]


def positive_int(text: str) -> int:
    """An option's value as an integer >= 1, or argparse's usage error naming it."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 1")
    return value
