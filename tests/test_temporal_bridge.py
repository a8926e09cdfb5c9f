"""The Temporal bridge in process (no server): a declared error is Temporal's benign
category and says its code once; payloads keep the key order packs return (issue 45,
item 3). The end-to-end checks are in tests/test_temporal.py (system tier)."""

from __future__ import annotations

import pytest

pytest.importorskip("temporalio")

from temporalio.exceptions import ApplicationErrorCategory

from control_plane._features.temporal import bridge
from control_plane._features.temporal.bridge import outcome_to_application_error
from control_plane._kernel.outcome import ErrorEnvelope, Outcome


def _failed(code: str, retryable: bool) -> Outcome:
    env = ErrorEnvelope.build(code, f"failing with {code}", retryable=retryable, origin="pack:p")
    return Outcome.build("p", "1.0.0", "r1", error=env)


@pytest.mark.parametrize(("code", "retryable"), [("csv_malformed", False), ("timeout", True)])
def test_a_declared_error_is_benign_and_says_its_code_once(code: str, retryable: bool) -> None:
    err = outcome_to_application_error(_failed(code, retryable))
    assert err.category is ApplicationErrorCategory.BENIGN
    assert err.type == code
    assert str(err) == f"{code}: failing with {code}"  # Temporal puts the type first


def test_an_internal_error_is_not_benign() -> None:
    err = outcome_to_application_error(_failed("internal_error", False))
    assert err.category is ApplicationErrorCategory.UNSPECIFIED


def test_payloads_keep_the_key_order_of_the_result() -> None:
    converter = bridge.DATA_CONVERTER.payload_converter
    payload = converter.to_payloads([{"zeta": 1, "alpha": {"b": 2, "a": 1}}])
    assert payload[0].data == b'{"zeta":1,"alpha":{"b":2,"a":1}}'
    back = converter.from_payloads(payload)[0]
    assert list(back) == ["zeta", "alpha"]
