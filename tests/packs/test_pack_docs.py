"""The built-in packs' documentation pages match what the packs declare."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from control_plane._kernel.registry import LoadedPack, Registry
from scripts import gen_docs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def registry() -> Registry:
    loaded = gen_docs.registry()
    assert not loaded.failures
    return loaded


def declared(loaded: LoadedPack) -> list[str]:
    """The codes in the pack's own output schema enum (before the runtime adds any)."""
    schema = loaded.pack.output_schema
    return list(schema["properties"]["error"]["properties"]["code"]["enum"])


@pytest.mark.parametrize("name", gen_docs.PACKS)
def test_page_lists_every_code_and_is_up_to_date(registry: Registry, name: str) -> None:
    loaded = registry.get(name)
    page = gen_docs.page_path(name)
    text = page.read_text(encoding="utf-8")
    # The generated table is exactly what the declaration renders today.
    (block,) = (b for b in gen_docs.blocks() if b.page == page)
    assert gen_docs.embedded(block) == gen_docs.vocabulary_table(loaded), (
        f"{page} is stale: run python scripts/gen_docs.py"
    )
    table_codes = re.findall(r"^\| `([a-z_]+)` \| (?:yes|no) \|", text, flags=re.M)
    assert table_codes == list(loaded.vocabulary)  # nothing undeclared, declaration order
    # The hand-written "when" table explains every code too, and nothing else.
    when = text.split("When this pack returns each code", 1)[1].split("\n## ", 1)[0]
    when_codes = re.findall(r"^\| `([a-z_]+)` \|", when, flags=re.M)
    assert when_codes == list(loaded.vocabulary), page


@pytest.mark.parametrize("name", gen_docs.PACKS)
def test_page_documents_every_input_and_output_field(registry: Registry, name: str) -> None:
    loaded = registry.get(name)
    text = gen_docs.page_path(name).read_text(encoding="utf-8")
    for field in loaded.pack.input_schema["properties"]:
        assert re.search(rf"^\| `{field}` \|", text, flags=re.M), (name, "input", field)
    for field in loaded.pack.output_schema["properties"]:
        if field != "error":
            assert f"`{field}`" in text, (name, "output", field)
    assert "```console" in text  # real examples


@pytest.mark.parametrize("name", gen_docs.PACKS)
def test_pack_docstring_names_its_codes_and_page(registry: Registry, name: str) -> None:
    loaded = registry.get(name)
    for code in declared(loaded):
        assert f"`{code}`" in loaded.pack.docs, (name, code)
    assert f"docs/packs/{name}.md" in loaded.pack.docs


def test_readme_links_every_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Built-in packs", 1)[1]
    for name in gen_docs.PACKS:
        assert f"(docs/packs/{name}.md)" in section, name
