"""Helpers for the built-in packs' tests: an Invoker over chosen plugins, outcome asserts."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import orjson

from control_plane._features.grants.tool_process import run_program
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.reach import Grant, Grants, PackReach, Reach, Reaches
from control_plane._runtime.plugins import load_registry

Call = Callable[..., Outcome]

#: The operator's grants the packs' tests run under (what ``RuntimeConfig.grants`` gives a
#: runtime): :func:`granted` and the ``tmp_granted`` fixture change them for a test.
GRANTS: list[Grants] = [Grants()]


class TestReaches(Reaches):
    """A runtime's grant table that follows :data:`GRANTS` (a test changes them while its
    invoker lives); each set of grants gets a table of its own, as a runtime would."""

    def __init__(self, declared: Callable[[str], Reach | None]) -> None:
        super().__init__(None, declared, runner=run_program)
        self._by = declared
        self._under: tuple[Grants, Reaches] | None = None

    def reach_for(self, pack: str) -> PackReach:
        grants = GRANTS[0]
        if self._under is None or self._under[0] is not grants:
            table = Reaches(grants, self._by, runner=run_program, scratch=self.scratch)
            self._under = (grants, table)
        return self._under[1].reach_for(pack)


def make_call(*modules: ModuleType) -> tuple[Invoker, Call]:
    """An Invoker over just ``modules`` (under :data:`GRANTS`, running programs as a
    runtime does) and a synchronous ``call(pack, doc, **kw)``."""
    loaded = load_registry(builtins=False, entry_points_=False, extra=list(modules))
    assert not loaded.registry.failures, loaded.registry.failures
    invoker = Invoker(
        loaded.registry,
        classifiers=loaded.classifiers,
        max_workers=4,
        reaches=TestReaches(loaded.registry.declared_reach),
    )

    def call(pack: str, doc: dict[str, Any], **kwargs: Any) -> Outcome:
        return invoker.invoke_sync(pack, doc, **kwargs)

    return invoker, call


@contextmanager
def granted(by_pack: Mapping[str, Grant | None]) -> Iterator[None]:
    """The operator's grants ``by_pack`` (what ``RuntimeConfig.grants`` and ``--grant``
    give a runtime) over the tests' :data:`GRANTS`, ``None`` removing a pack's; the grants
    before are back on exit."""
    saved = GRANTS[0]
    merged = {**saved.by_pack, **by_pack}
    GRANTS[0] = Grants({k: v for k, v in merged.items() if v is not None})
    try:
        yield
    finally:
        GRANTS[0] = saved


def serialized(outcome: Outcome) -> bytes:
    """The outcome as a caller receives it (JSON bytes)."""
    return orjson.dumps(outcome.to_dict())


def assert_no_secrets(outcome: Outcome, *secrets: str) -> None:
    """None of ``secrets`` appears anywhere in the serialized outcome."""
    data = serialized(outcome)
    for secret in secrets:
        assert secret.encode() not in data, f"secret {secret!r} leaked: {data[:500]!r}"


def assert_error(outcome: Outcome, code: str) -> dict[str, Any]:
    """The outcome failed with ``code``; its error envelope as JSON data."""
    assert outcome.error is not None, f"expected {code}, got result {outcome.to_dict()}"
    assert outcome.code == code, outcome.to_dict()
    error: dict[str, Any] = outcome.to_dict()["error"]
    assert error["message"]
    assert error["recovery_hint"]
    return error


GIT_USER = "alice"
GIT_PASSWORD = "pw-PLANTED-git-7f3a9c"
