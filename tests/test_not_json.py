"""What a pack returns that JSON cannot carry is named by its path and value (issue 38,
items 6 and 7): ``result.rows[0][0] is inf: not JSON``, never a silent ``null``."""

from __future__ import annotations

import math
from typing import Any

import pytest
from runtime_support import invoker_for, make_pack

from control_plane._kernel.returned import copy_returned

NUMBER_ROWS = {
    "type": "object",
    "properties": {
        "rows": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
        "error": {"type": "object", "properties": {"code": {"enum": ["not_found"]}}},
    },
}


@pytest.mark.parametrize(
    ("value", "shown"),
    [(math.inf, "inf"), (-math.inf, "-inf"), (math.nan, "nan")],
)
def test_non_finite_float_is_named_by_path(value: float, shown: str) -> None:
    copied = copy_returned({"rows": [[value, 1.0]], "n": None})
    assert copied.problem == f"result.rows[0][0] is {shown}: not JSON"


def test_null_and_text_null_are_not_flagged() -> None:
    copied = copy_returned({"rows": [[None, "null", 1.5]], "note": "null"})
    assert copied.problem is None
    assert copied.output == {"rows": [[None, "null", 1.5]], "note": "null"}


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        ({"blob": b"\x00"}, "result.blob is bytes: not JSON"),
        ({"a": [1, {"s": {1, 2}}]}, "result.a[1].s is set: not JSON"),
        ({"m": {3: "x"}}, "result.m has a key 3 of type int: not JSON"),
        ({"big": [2**70]}, "result.big[0] is an integer beyond 64 bits: not JSON"),
        ({"odd key": object()}, 'result["odd key"] is object: not JSON'),
    ],
)
def test_unencodable_value_is_named_by_path(output: dict[str, Any], problem: str) -> None:
    assert copy_returned(output).problem == problem


def test_a_check_value_is_named_under_validation() -> None:
    from control_plane._kernel.pack import Check, Result

    copied = copy_returned(Result({"ok": True}, checks=[Check("c", "fail", "m", actual=math.inf)]))
    assert copied.problem == "validation.checks[0].actual is inf: not JSON"


def test_the_incident_names_the_path_not_a_null() -> None:
    """Before: ``inf`` came back as ``null``, a success (or with a ``number`` schema an
    ``internal_error`` whose incident said only "did not match its output schema")."""

    def handler(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"rows": [[float(doc["x"])]]}

    pack = make_pack("t.rows", out=NUMBER_ROWS, handler=handler)
    with invoker_for(pack) as invoker:
        outcome = invoker.invoke_sync("t.rows", {"x": "inf"})
        assert outcome.error is not None, outcome.result
        assert outcome.error.code == "internal_error"
        incident = invoker.incidents.get(outcome.error.reference_id or "")
        assert incident is not None
        assert "result.rows[0][0] is inf: not JSON" in incident.summary
        ok = invoker.invoke_sync("t.rows", {"x": "2.5"})
        assert ok.result == {"rows": [[2.5]]}


def test_bytes_incident_names_the_path_in_its_traceback() -> None:
    def handler(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"blob": doc["s"].encode()}

    pack = make_pack("t.blob", handler=handler)
    with invoker_for(pack) as invoker:
        outcome = invoker.invoke_sync("t.blob", {"s": "x"})
        assert outcome.error is not None
        incident = invoker.incidents.get(outcome.error.reference_id or "")
        assert incident is not None
        assert "result.blob is bytes: not JSON" in incident.summary
        assert "pack output: result.blob is bytes: not JSON" in incident.traceback


def test_the_kit_flags_a_non_finite_float() -> None:
    """Before: the kit's own JSON round trip turned ``inf`` into ``null`` and passed."""
    from runtime_support import plugin

    from control_plane.testing import ConformanceError, PackKit, PackTarget

    def handler(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"rows": [[math.nan]]}

    pack = make_pack("t.nan", handler=handler)
    with (
        PackKit(PackTarget("t.nan", plugin=plugin(pack))) as kit,
        pytest.raises(ConformanceError, match=r"result\.rows\[0\]\[0\] is nan: not JSON"),
    ):
        kit.invoke({})
