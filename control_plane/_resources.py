"""Locate the ``schemas/`` JSON and ``proto/`` files, in the wheel or in a source checkout."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, cast

import orjson

__all__ = ["load_schema_file", "proto_dir", "schemas_dir"]


@functools.cache
def schemas_dir() -> Path:
    """The directory holding the project's JSON Schemas and vocabulary."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_schemas", here.parent / "schemas"):
        if (candidate / "vocabulary.json").is_file():
            return candidate
    raise FileNotFoundError("capability-packs schemas directory not found")


@functools.cache
def proto_dir() -> Path:
    """The proto root: ``control_plane/v1/control_plane.proto`` lies under it."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_proto", here.parent / "proto"):
        if (candidate / "control_plane" / "v1" / "control_plane.proto").is_file():
            return candidate
    raise FileNotFoundError("capability-packs proto directory not found")


@functools.cache
def _load(name: str) -> bytes:
    return (schemas_dir() / name).read_bytes()


def load_schema_file(name: str) -> dict[str, Any]:
    """A fresh copy of one JSON file from ``schemas/``."""
    return cast(dict[str, Any], orjson.loads(_load(name)))
