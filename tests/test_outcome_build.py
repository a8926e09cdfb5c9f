"""``Outcome.build``: the validated fast path for small results builds the same record as
``model_construct``; large results (and ``LargeResult``) keep the unvalidated path."""

from __future__ import annotations

from typing import Any

import pytest

from control_plane._kernel.outcome import ErrorEnvelope, Outcome
from control_plane._kernel.returned import LargeResult


def _constructed(result: Any, error: ErrorEnvelope | None = None) -> Outcome:
    return Outcome.model_construct(
        pack="p.q", version="1.0.0", request_id="r1", result=result, validation=None, error=error
    )


@pytest.mark.parametrize(
    "result", [None, {}, {"a": 1, "b": [1, {"c": None}], "d": "x"}, {f"k{i}": i for i in range(64)}]
)
def test_small_results_build_the_same_record(result: Any) -> None:
    built = Outcome.build("p.q", "1.0.0", "r1", result=result)
    same = _constructed(result)
    assert built == same
    assert built.model_fields_set == same.model_fields_set
    assert built.to_dict() == same.to_dict()
    assert type(built.result) is type(result)


def test_an_error_outcome_builds_the_same_record() -> None:
    error = ErrorEnvelope.internal("ref-1")
    built = Outcome.build("p.q", "1.0.0", "r1", error=error)
    assert built == _constructed(None, error) and built.error is error


def test_large_results_are_kept_as_they_are() -> None:
    large = LargeResult({f"k{i}": i for i in range(5)})
    wide = {f"k{i}": i for i in range(65)}
    assert Outcome.build("p.q", "1.0.0", "r1", result=large).result is large
    assert Outcome.build("p.q", "1.0.0", "r1", result=wide).result is wide


def test_a_result_with_a_str_subclass_key_still_builds() -> None:
    class Key(str):
        pass

    odd = {Key("k"): 1}
    built = Outcome.build("p.q", "1.0.0", "r1", result=odd)
    assert built.result == {"k": 1}
