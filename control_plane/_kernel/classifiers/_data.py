"""The built-in classifiers' tables, as data (``tables.toml``): exception classes named, not
imported (:class:`~control_plane._kernel.classify.TypeRule`), and number or name -> code
tables (OpenSSL reasons here; gRPC statuses and WebSocket close codes in the libraries
feature's own ``tables.toml``, read with these functions)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from control_plane._kernel.classify import TypeRule
from control_plane._kernel.fact_rules import Rows, load, message

__all__ = ["DATA", "code_table", "type_rules"]

DATA: dict[str, Any] = load(Path(__file__).with_name("tables.toml"))


def type_rules(plugin: str, data: Mapping[str, Any] = DATA) -> tuple[TypeRule, ...]:
    """``plugin``'s ``types`` rows of ``data``: ``["package.ClassName", code, message,
    "weak"?]``."""
    return Rows(
        TypeRule(row[0], row[1], message(row[2], data), weak=row[3:] == ["weak"])
        for row in data[plugin]["types"]
    )


def code_table(
    plugin: str, table: str, data: Mapping[str, Any] = DATA
) -> Mapping[Any, tuple[str, str]]:
    """``plugin``'s ``table`` of ``data``: key (a number when it is digits) -> (code,
    message)."""
    rows: dict[str, list[str]] = data[plugin][table]
    return MappingProxyType(
        {
            (int(k) if k.isdigit() else k): (code, message(msg, data))
            for k, (code, msg) in rows.items()
        }
    )
