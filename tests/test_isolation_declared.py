"""A pack's declaration crosses from a describing worker as JSON data (in process, no worker).

``_pack_data`` is what a describing worker sends; ``declared_pack`` is the control plane's
stand-in built from it: the same manifest once registered, a handler that refuses to run
in the control plane and carries the locator its workers load it by.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from control_plane import CodeDoc, Context, Pack, Reach
from control_plane._features.isolation.isolation import (
    IsolationError,
    Locator,
    _pack_data,
    declared_pack,
    locate,
)
from control_plane._kernel.registry import Registry


def _handler(doc: Any, ctx: Context) -> Any:
    return {"n": 1}


ORIGINAL = Pack(
    "declared.demo",
    "2.1.0",
    "A pack known here only by its declaration.",
    {"type": "object", "properties": {"path": {"type": "string"}}},
    {"type": "object", "properties": {"n": {"type": "integer"}}},
    _handler,
    codes={
        "not_found": None,
        "gone_away": CodeDoc("The thing left.", retryable=True, recovery_hint="Ask again."),
        "timeout": "It took too long.",
    },
    docs="# Demo",
    scrub_output=True,
    reach=Reach(reads=("/srv/data",), egress=("public",), programs=("git",)),
)


def _crossed() -> Pack:
    data = orjson.loads(orjson.dumps(_pack_data(ORIGINAL)))  # only JSON crosses
    stand_in: Pack = declared_pack(data, "demo_plugin")
    return stand_in


def test_the_registered_manifest_is_the_same_as_the_packs_own() -> None:
    own, crossed = Registry(), Registry()
    own.register(ORIGINAL, "demo_plugin")
    stand_in = _crossed()
    crossed.register(stand_in, "demo_plugin")
    a, b = own.get("declared.demo"), crossed.get("declared.demo")
    assert a is not None and b is not None
    assert b.input_schema == a.input_schema
    assert b.output_schema == a.output_schema
    assert b.vocabulary == a.vocabulary
    assert (b.declared, b.validates, b.absorbed_by) == (a.declared, a.validates, a.absorbed_by)
    assert stand_in.code_docs() == ORIGINAL.code_docs()
    assert stand_in.reach == ORIGINAL.reach
    assert (stand_in.version, stand_in.summary, stand_in.docs) == (
        "2.1.0",
        ORIGINAL.summary,
        "# Demo",
    )
    assert stand_in.scrub_output is True
    assert stand_in.isolated is True  # whatever it declared: it runs nowhere else


def test_the_stand_in_never_runs_here_and_its_workers_find_it_by_module() -> None:
    stand_in = _crossed()
    with pytest.raises(IsolationError, match="isolated workers only"):
        stand_in.handler({}, Context("declared.demo", "r1", None))
    assert locate("declared.demo", stand_in.handler, "demo_plugin") == Locator(
        "declared.demo", "demo_plugin"
    )


@pytest.mark.parametrize(
    "broken",
    [
        {"name": 3},
        {"version": "1"},
        {"input_schema": ["not", "a", "schema"]},
        {"reach": ["fs.read", "/"]},
        {"reach": {"fs.read": "/etc"}},
        {"codes": [1, 2]},
    ],
)
def test_a_malformed_declaration_raises(broken: dict[str, Any]) -> None:
    data = {**_pack_data(ORIGINAL), **broken}
    if "version" in broken:
        del data["version"]
    with pytest.raises((KeyError, TypeError, ValueError)):
        declared_pack(data, "demo_plugin")
