"""Incidents format tracebacks themselves (no column carets, no per-file ``stat``): the text
must be the standard library's, caret lines aside, for every shape of exception."""

from __future__ import annotations

import re
import traceback

import pytest

from control_plane._kernel.incidents import Incidents, format_exception


def _stdlib_without_carets(exc: BaseException) -> str:
    text = "".join(traceback.format_exception(exc))
    return "".join(
        line for line in text.splitlines(True) if not re.fullmatch(r"\s*[~^]+\s*\n?", line)
    )


def _recurse(n: int) -> None:
    if n == 0:
        raise ValueError("deep")
    _recurse(n - 1)


def _raised(kind: str) -> BaseException:
    try:
        if kind == "plain":
            raise RuntimeError("plain password=hunter2")
        if kind == "cause":
            try:
                {}["k"]
            except KeyError as inner:
                raise RuntimeError("outer") from inner
        if kind == "context":
            try:
                1 / 0  # noqa: B018
            except ZeroDivisionError:
                raise OSError(2, "nope")  # noqa: B904 - the implicit context is the point
        if kind == "suppressed":
            try:
                1 / 0  # noqa: B018
            except ZeroDivisionError:
                raise KeyError("x") from None
        if kind == "recursion":
            _recurse(40)
        if kind == "short_recursion":
            _recurse(2)
        if kind == "notes":
            exc = RuntimeError("with notes")
            exc.add_note("traceback in isolated worker (pid 1)")
            raise exc
        if kind == "group":
            raise ExceptionGroup("group", [ValueError(1), TypeError(2)])
        if kind == "cycle":
            first, second = RuntimeError("first"), RuntimeError("second")
            first.__context__, second.__context__ = second, first
            raise first
    except BaseException as exc:
        return exc
    raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind",
    [
        "plain",
        "cause",
        "context",
        "suppressed",
        "recursion",
        "short_recursion",
        "notes",
        "group",
        "cycle",
    ],
)
def test_the_text_is_the_standard_librarys_without_carets(kind: str) -> None:
    exc = _raised(kind)
    assert format_exception(exc) == _stdlib_without_carets(exc)


def test_an_exception_without_a_traceback() -> None:
    exc = RuntimeError("never raised")
    assert format_exception(exc) == "".join(traceback.format_exception(exc))


def test_incidents_keep_the_formatted_and_scrubbed_chain() -> None:
    incidents = Incidents()
    ref = incidents.record(_raised("cause"), pack="p", request_id="r", kind="k", summary="s")
    found = incidents.get(ref)
    assert found is not None and found.scrubbed
    assert "The above exception was the direct cause" in found.traceback
    assert "KeyError: 'k'" in found.traceback and "RuntimeError: outer" in found.traceback
    ref = incidents.record(_raised("plain"), pack="p", request_id="r", kind="k", summary="s")
    found = incidents.get(ref)
    assert found is not None and "hunter2" not in found.traceback
