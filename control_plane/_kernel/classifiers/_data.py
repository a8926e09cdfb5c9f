"""The built-in classifiers' tables, as data (``tables.toml``): exception classes named, not
imported (:class:`~control_plane._kernel.classify.TypeRule`), and number or name -> code
tables (gRPC statuses, WebSocket close codes, OpenSSL reasons)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from control_plane._kernel.classify import TypeRule
from control_plane._kernel.fact_rules import Rows

__all__ = ["code_table", "type_rules"]

with Path(__file__).with_name("tables.toml").open("rb") as _handle:
    _DATA: dict[str, Any] = tomllib.load(_handle)


def _message(text: str) -> str:
    return str(_DATA["messages"][text[1:]]) if text.startswith("@") else text


def type_rules(plugin: str) -> tuple[TypeRule, ...]:
    """``plugin``'s ``types`` rows: ``["package.ClassName", code, message, "weak"?]``."""
    return Rows(
        TypeRule(row[0], row[1], _message(row[2]), weak=row[3:] == ["weak"])
        for row in _DATA[plugin]["types"]
    )


def code_table(plugin: str, table: str) -> Mapping[Any, tuple[str, str]]:
    """``plugin``'s ``table``: key (a number when it is digits) -> (code, message)."""
    rows: dict[str, list[str]] = _DATA[plugin][table]
    return MappingProxyType(
        {(int(k) if k.isdigit() else k): (code, _message(msg)) for k, (code, msg) in rows.items()}
    )
