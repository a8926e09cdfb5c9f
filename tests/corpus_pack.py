"""A pack that provokes one failure of the live corpus and lets it escape the handler.

Served by ``packctl serve`` in ``tests/test_failure_corpus.py`` (``PYTHONPATH=tests``,
``CAPABILITY_PACKS_PLUGINS=corpus_pack``): the input names a corpus case and where the
test's loopback servers are; the handler provokes the case and re-raises what it got,
so classification happens where a real pack's would, in the served process.
"""

from __future__ import annotations

from typing import Any

from failure_corpus.cases import by_id, provoke, provoke_on_loop
from failure_corpus.servers import Endpoints

from control_plane import CodeDoc, Context, Pack, hookimpl

CODES = [
    "auth_failed",
    "rate_limited",
    "not_found",
    "timeout",
    "network_error",
    "internal_error",
    "dependency_missing",
]


def _provoke(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    (case,) = by_id([doc["case"]])
    raise provoke(case, Endpoints.from_dict(doc["endpoints"]))


async def _provoke_on_loop(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """An async handler: an async case fails on the server's own event loop."""
    (case,) = by_id([doc["case"]])
    raise await provoke_on_loop(case, Endpoints.from_dict(doc["endpoints"]))


def _pack(name: str, handler: Any, description: str) -> Pack:
    return Pack(
        name,
        "1.0.0",
        description,
        {
            "type": "object",
            "required": ["case", "endpoints"],
            "properties": {"case": {"type": "string"}, "endpoints": {"type": "object"}},
        },
        {
            "type": "object",
            "properties": {
                "error": {
                    "type": "object",
                    "properties": {"code": {"enum": CODES}, "message": {"type": "string"}},
                }
            },
        },
        handler,
        codes={
            "dependency_missing": CodeDoc(
                "A program the pack runs is not installed on the host.",
                retryable=False,
                recovery_hint="Install the tool on the pack host.",
            )
        },
        # No declaration: its cases reach loopback servers, unix sockets, files and
        # programs. The tests that serve it trust it (--trust), as an operator would.
    )


@hookimpl
def register_packs(register: Any) -> None:
    register(_pack("corpus.provoke", _provoke, "Provoke one failure of the live failure corpus."))
    register(
        _pack(
            "corpus.provoke_on_loop",
            _provoke_on_loop,
            "The same, an async case on the serving process's event loop.",
        )
    )
