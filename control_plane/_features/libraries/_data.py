"""The library classifiers' tables, as data (``tables.toml`` next to this module), read with
the kernel's loader (:mod:`control_plane._kernel.classifiers._data`): class-name rows, gRPC
statuses, WebSocket close codes, the proxy texts. A ``"@name"`` message may also name one of
the kernel's messages (its TLS ones)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from control_plane._kernel.classifiers import _data as kernel_data
from control_plane._kernel.classify import TypeRule
from control_plane._kernel.fact_rules import load

__all__ = ["DATA", "code_table", "type_rules"]

_OWN: dict[str, Any] = load(Path(__file__).with_name("tables.toml"))
#: This folder's tables; ``[messages]`` holds the kernel's too (this file's win a clash).
DATA: Mapping[str, Any] = MappingProxyType(
    {**_OWN, "messages": {**kernel_data.DATA["messages"], **_OWN["messages"]}}
)


def type_rules(plugin: str) -> tuple[TypeRule, ...]:
    """``plugin``'s ``types`` rows: ``["package.ClassName", code, message, "weak"?]``."""
    return kernel_data.type_rules(plugin, DATA)


def code_table(plugin: str, table: str) -> Mapping[Any, tuple[str, str]]:
    """``plugin``'s ``table``: key (a number when it is digits) -> (code, message)."""
    return kernel_data.code_table(plugin, table, DATA)
