"""Every classification table is documented in docs/classification.md, generated from it."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from control_plane._features.libraries import grpc as grpc_classifier
from control_plane._kernel.classify import NAMED_TYPE_CODES, TYPE_CODES, TypeRule
from control_plane._kernel.fact_rules import STATUS_CODES
from control_plane._kernel.stderr import TOOL_TABLES
from control_plane._kernel.vocabulary import BASELINE, WELL_KNOWN_PACK_CODES
from control_plane._runtime.plugins import BUILTIN_CLASSIFIERS, DEFAULT_PLUGINS, load_registry
from scripts import gen_docs

KNOWN_CODES = set(BASELINE) | set(WELL_KNOWN_PACK_CODES)
ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "classification.md"
SCRIPT = ROOT / "scripts" / "gen_docs.py"


def test_the_page_is_generated_from_the_tables_and_up_to_date() -> None:
    (block,) = (b for b in gen_docs.blocks() if b.page == PAGE)
    assert gen_docs.embedded(block) == gen_docs.classification(), "stale: run scripts/gen_docs.py"


@pytest.mark.system
def test_the_generator_runs_as_a_script_and_finds_nothing_stale() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_page_names_every_row_of_every_table() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for module_name in BUILTIN_CLASSIFIERS:
        assert f"### Plugin `{module_name}`" in text
    for name, table in TOOL_TABLES.items():
        assert f"### Tool `{name}`" in text
        for item in table.stderr.rules:
            assert f"`{item.name}`" in text
    for status in STATUS_CODES:
        assert f"| {status} |" in text
    for exc_type, _ in TYPE_CODES:
        assert exc_type.__qualname__ in text
    for (module, name), _ in NAMED_TYPE_CODES:
        assert f"`{module}.{name}`" in text
    for code in WELL_KNOWN_PACK_CODES:
        assert f"`{code}`" in text


def test_every_grpc_status_has_a_documented_row() -> None:
    statuses = {s.name for s in grpc.StatusCode} - {"OK"}
    assert set(grpc_classifier.STATUS_CODES) == statuses


def test_every_table_gives_known_codes_and_fixed_messages() -> None:
    for name, table in TOOL_TABLES.items():
        names = [r.name for r in table.stderr.rules]
        assert len(names) == len(set(names)), name
        for item in table.stderr.rules:
            assert item.code in KNOWN_CODES, (name, item.name)
            assert item.message.strip()
        for exit_rule in table.exits.values():
            assert exit_rule.code in KNOWN_CODES
    for module_name in BUILTIN_CLASSIFIERS:
        module = importlib.import_module(module_name)
        for attr in getattr(module, "__all__", ()):
            value = getattr(module, attr)
            if isinstance(value, tuple) and value and isinstance(value[0], TypeRule):
                for row in value:
                    assert row.code in KNOWN_CODES, row
                    assert row.message.strip(), row
            elif attr.isupper() and isinstance(value, dict | type(STATUS_CODES)):
                for code, message in value.values():
                    assert code in KNOWN_CODES and message.strip(), (module_name, attr)


def test_builtin_classifiers_are_plugins_of_the_builtin_tuple() -> None:
    assert set(BUILTIN_CLASSIFIERS) <= set(DEFAULT_PLUGINS)
    pm = load_registry(builtins=False, entry_points_=False).plugin_manager
    names = {impl.plugin_name for impl in pm.hook.classify_exception.get_hookimpls()}
    assert names == set(BUILTIN_CLASSIFIERS)
    off = load_registry(builtins=False, entry_points_=False, builtin_classifiers=False)
    assert off.classifiers == ()


@pytest.mark.parametrize("module_name", BUILTIN_CLASSIFIERS)
def test_each_classifier_module_is_a_plugin_with_the_hook(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert callable(module.classify_exception)
    # a plain exception passes through every built-in classifier untouched
    assert module.classify_exception(exc=ValueError("nothing to see")) is None
