"""The credential input shared by packs that call HTTP downstreams, and the header it stands for."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

__all__ = ["basic_header", "credential_header", "credential_schema"]

_LINE = "^[^\\r\\n]*$"


def credential_schema(description: str) -> dict[str, Any]:
    """The ``credential`` input property: exactly one of ``bearer``, ``basic``, ``header``."""
    return {
        "description": description,
        "type": "object",
        "minProperties": 1,
        "maxProperties": 1,
        "additionalProperties": False,
        "properties": {
            "bearer": {
                "type": "string",
                "minLength": 1,
                "pattern": _LINE,
                "description": "Bearer token.",
            },
            "basic": {
                "type": "object",
                "additionalProperties": False,
                "required": ["username", "password"],
                "properties": {
                    "username": {"type": "string", "pattern": "^[^:\\r\\n]*$"},
                    "password": {"type": "string", "pattern": _LINE},
                },
            },
            "header": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "value"],
                "properties": {
                    "name": {"type": "string", "pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"},
                    "value": {"type": "string", "minLength": 1, "pattern": _LINE},
                },
            },
        },
    }


def basic_header(username: str, password: str) -> tuple[str, str]:
    """``("Authorization", "Basic <base64>")`` for a user and password."""
    token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
    return "Authorization", f"Basic {token}"


def credential_header(credential: Mapping[str, Any]) -> tuple[str, str]:
    """The ``(name, value)`` HTTP header a credential validated by the schema stands for."""
    if "bearer" in credential:
        return "Authorization", f"Bearer {credential['bearer']}"
    if "basic" in credential:
        basic = credential["basic"]
        return basic_header(str(basic["username"]), str(basic["password"]))
    header = credential["header"]
    return str(header["name"]), str(header["value"])
