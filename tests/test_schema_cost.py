"""The attack pass over schemas from outside (issue 41, A): a pack's own schemas (an MCP
tool's, a third-party pack's) pass the gate, yet checking a large document against one
could hold the event loop and the GIL for minutes. The check of every pack's input and
output is bounded before it runs, as http.fetch's body already was."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from runtime_support import invoker_for

from control_plane._kernel.errors import InvalidInput
from control_plane._kernel.pack import Pack
from control_plane._kernel.schema import check_schema

#: Twelve definitions each checking the next twice (``allOf``): 2**12 positions per value,
#: under the gate's bound on positions (20,000), so admitted.
LEVELS = 12
DEFS: dict[str, Any] = {
    f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
    for i in range(LEVELS)
}
DEFS[f"d{LEVELS}"] = {"type": "integer"}
COSTLY = {
    "type": "object",
    "properties": {"x": {"type": "array", "items": {"$ref": "#/$defs/d0"}}},
    "$defs": DEFS,
}
#: 30,000 values: ~3 s of checking on a free core, ~240 s for a 4 MiB input.
VALUES = 30_000


def _pack(handler: Any, input_schema: dict[str, Any], output_schema: dict[str, Any]) -> Pack:
    return Pack(
        "attack.schema",
        "1.0.0",
        "Costly schemas.",
        input_schema,
        output_schema,
        handler,
        codes={"internal_error": None, "schema_mismatch": None},
    )


def test_the_costly_schema_passes_the_gate() -> None:
    assert check_schema(COSTLY) is None


def test_an_input_too_costly_to_check_is_refused_before_the_check() -> None:
    pack = _pack(lambda doc, ctx: {}, COSTLY, {"type": "object"})
    payload = json.dumps({"x": [0] * VALUES}).encode()
    with invoker_for(pack) as invoker:
        started = time.perf_counter()
        try:
            asyncio.run(invoker.invoke("attack.schema", payload))
        except InvalidInput as exc:
            refused = exc
        else:
            raise AssertionError("the input was checked and admitted")
        took = time.perf_counter() - started
        assert took < 1.0, took
        assert "steps" in str(refused.violations), refused.violations
        # A small document against the same schema is checked as before.
        small = asyncio.run(invoker.invoke("attack.schema", b'{"x": [1, 2, 3]}'))
        assert small.error is None, small.error


def test_an_output_too_costly_to_check_is_a_mismatch_before_the_check() -> None:
    pack = _pack(lambda doc, ctx: {"x": [0] * VALUES}, {"type": "object"}, COSTLY)
    with invoker_for(pack) as invoker:
        started = time.perf_counter()
        outcome = asyncio.run(invoker.invoke("attack.schema", b"{}"))
        took = time.perf_counter() - started
    assert took < 1.0, took
    assert outcome.error is not None
    assert outcome.error.code == "schema_mismatch", outcome.error
