"""The contract stays documented (in the spirit of datasette's ``test_docs.py``).

* every baseline code (``schemas/vocabulary.json``) and every code of every built-in pack
  is documented: description, retryable flag, recovery hint, a gRPC status;
* every hook in ``control_plane/_kernel/hookspecs.py`` is a typed spec with a docstring that
  documents each parameter and the return value;
* every baseline code appears with its gRPC status in the code -> status table of both
  ``README.md`` and ``docs/grpc.md``, and the exit codes of ``packctl`` are the documented
  ones.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any, get_type_hints

import grpc
import pytest

from control_plane._features.cli import cli
from control_plane._features.grpc import status as wire
from control_plane._kernel import hookspecs
from control_plane._kernel.registry import LoadedPack
from control_plane._kernel.rejection import REASONS
from control_plane._kernel.vocabulary import BASELINE, EVERY_PACK_CODES, CodeInfo
from control_plane._runtime.plugins import DEFAULT_PLUGINS, load_registry
from scripts import gen_docs

ROOT = Path(__file__).resolve().parent.parent
VOCABULARY_FILE = ROOT / "schemas" / "vocabulary.json"
STATUS_NAMES = {s.name for s in grpc.StatusCode}


def _raw_vocabulary() -> list[dict[str, Any]]:
    codes: list[dict[str, Any]] = json.loads(VOCABULARY_FILE.read_text())["codes"]
    return codes


def _builtin_packs() -> list[LoadedPack]:
    result = load_registry(entry_points_=False)
    assert result.registry.failures == [], result.registry.failures
    packs = list(result.registry)
    assert packs, "no built-in pack loaded"
    assert {p.plugin for p in packs} <= set(DEFAULT_PLUGINS)
    return packs


def _assert_documented(where: str, info: CodeInfo) -> None:
    assert info.description.strip(), f"{where}: no description"
    assert isinstance(info.retryable, bool), f"{where}: retryable is not a bool"
    assert info.recovery_hint.strip(), f"{where}: no recovery hint"
    assert info.grpc_status in STATUS_NAMES, f"{where}: unknown gRPC status {info.grpc_status}"
    assert info.grpc_status != "UNAUTHENTICATED", (
        f"{where}: UNAUTHENTICATED is reserved for the caller's own credentials"
    )


# --------------------------------------------------------------------------- vocabulary


@pytest.mark.parametrize("entry", _raw_vocabulary(), ids=lambda e: str(e["code"]))
def test_each_baseline_code_is_documented(entry: dict[str, Any]) -> None:
    code = entry["code"]
    for key in ("title", "description", "recovery_hint"):
        assert isinstance(entry[key], str), f"{code}: {key}"
        assert entry[key].strip(), f"{code}: empty {key}"
    assert isinstance(entry["retryable"], bool), code
    for name, field in entry["payload"].items():
        assert field.get("description", "").strip(), f"{code}: payload {name} undocumented"
    # The runtime reads the same file: no second source of truth.
    info = BASELINE[code]
    assert info.to_dict() | {"payload": entry["payload"]} == {
        "code": code,
        "title": entry["title"],
        "description": entry["description"],
        "retryable": entry["retryable"],
        "recovery_hint": entry["recovery_hint"],
        "grpc_status": entry["grpc_status"],
        "baseline": True,
        "fallback": entry["fallback"],
        "absorbs": [],
        "payload": entry["payload"],
    }
    _assert_documented(f"baseline {code}", info)


def test_the_vocabulary_file_is_the_whole_baseline() -> None:
    assert [e["code"] for e in _raw_vocabulary()] == list(BASELINE)
    assert list(BASELINE) == [
        "auth_failed",
        "rate_limited",
        "not_found",
        "timeout",
        "schema_mismatch",
        "network_error",
        "internal_error",
        "artifact_failed",
    ]


def test_every_code_of_every_builtin_pack_is_documented() -> None:
    for loaded in _builtin_packs():
        assert loaded.pack.summary.strip(), loaded.name
        assert loaded.pack.docs.strip(), f"{loaded.name}: no docs"
        assert "internal_error" in loaded.vocabulary, loaded.name
        for code, info in loaded.vocabulary.items():
            _assert_documented(f"{loaded.name} {code}", info)
            if code in BASELINE:
                assert info is BASELINE[code], f"{loaded.name} {code}: baseline docs overridden"
            elif info is EVERY_PACK_CODES.get(code):
                pass  # every pack's (not_permitted), undeclared: documented once, by the vocabulary
            else:
                assert not info.baseline
                # A pack code is described in the pack's own page, where callers read it.
                assert f"`{code}`" in loaded.pack.docs, f"{loaded.name}: docs omit `{code}`"


def test_builtin_pack_docs_only_name_codes_they_declare() -> None:
    """A code quoted in a pack's code table must be in its vocabulary (no stale rows)."""
    for loaded in _builtin_packs():
        rows = _code_table_rows(loaded.pack.docs)
        stale = sorted(set(rows) - set(loaded.vocabulary))
        assert not stale, f"{loaded.name}: docs list undeclared codes {stale}"


def _code_table_rows(markdown: str) -> list[str]:
    """The codes in the first column of every Markdown table whose header starts ``| code |``."""
    codes: list[str] = []
    in_table = False
    for line in markdown.splitlines():
        if line.startswith("| code |"):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
        elif in_table:
            match = re.match(r"^\| `([a-z0-9_]+)` \|", line)
            if match:
                codes.append(match.group(1))
    return codes


# --------------------------------------------------------------------------- hooks


def _hookspecs() -> list[Any]:
    marker = f"{hookspecs.PROJECT}_spec"
    specs = [
        fn
        for _, fn in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(fn, marker) and fn.__module__ == hookspecs.__name__
    ]
    assert specs, "no hookspecs found"
    return specs


def test_the_documented_hooks_exist() -> None:
    names = {fn.__name__ for fn in _hookspecs()}
    assert {"register_packs", "classify_exception", "call_finished", "incident_recorded"} <= names


@pytest.mark.parametrize("spec", _hookspecs(), ids=lambda fn: fn.__name__)
def test_each_hook_is_in_the_architecture_table(spec: Any) -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    table = text.split("## Plugins: one mechanism", 1)[1].split("\n## ", 1)[0]
    assert f"| `{spec.__name__}(" in table, f"{spec.__name__}: not in docs/architecture.md"


@pytest.mark.parametrize("spec", _hookspecs(), ids=lambda fn: fn.__name__)
def test_each_hook_is_typed_and_documented(spec: Any) -> None:
    sig = inspect.signature(spec)
    hints = get_type_hints(spec, globalns=vars(hookspecs), localns=_type_checking_names())
    assert "return" in hints, f"{spec.__name__}: return type missing"
    doc = inspect.getdoc(spec) or ""
    assert doc.splitlines() and doc.splitlines()[0].strip(), f"{spec.__name__}: no summary"
    for name in sig.parameters:
        assert name in hints, f"{spec.__name__}: parameter {name} is not annotated"
        assert f":param {name}:" in doc, f"{spec.__name__}: parameter {name} is undocumented"
    assert ":return:" in doc, f"{spec.__name__}: return value undocumented"


def _type_checking_names() -> dict[str, Any]:
    """Names hookspecs imports only under ``TYPE_CHECKING`` (annotations are strings)."""
    from control_plane._features.observability.events import ErrorEvent
    from control_plane._kernel.incidents import Incident
    from control_plane._kernel.outcome import Outcome
    from control_plane._kernel.registry import LoadedPack

    return {
        "ErrorEvent": ErrorEvent,
        "Incident": Incident,
        "LoadedPack": LoadedPack,
        "Outcome": Outcome,
    }


# --------------------------------------------------------------------------- tables


def _block(page: Path, render: object) -> gen_docs.Block:
    (block,) = (b for b in gen_docs.blocks() if b.page == page and b.render == render)
    return block


def test_every_generated_block_is_up_to_date() -> None:
    assert gen_docs.main(["--check"]) == 0, "regenerate with: python scripts/gen_docs.py"
    block = _block(ROOT / "docs" / "grpc.md", gen_docs.status_table)
    text = block.page.read_text(encoding="utf-8")
    assert gen_docs.update(text, block) == text
    with pytest.raises(ValueError, match="markers"):
        gen_docs.update("no markers here", block)


def test_status_table_is_read_from_the_vocabulary() -> None:
    rows = {code.strip("`"): (status, why) for code, status, _, why, _ in gen_docs.status_rows()}
    for code, info in BASELINE.items():
        assert rows[code] == (info.grpc_status, f"`{code.upper()}`")
    assert rows["(unknown pack)"][0] == "NOT_FOUND"
    assert rows["(invalid input)"][0] == "INVALID_ARGUMENT"
    assert wire.STATUS_BY_CODE["auth_failed"] == grpc.StatusCode.PERMISSION_DENIED


@pytest.mark.parametrize("doc", ["README.md", "docs/grpc.md"])
def test_every_baseline_code_and_its_status_is_in_the_table(doc: str) -> None:
    table = gen_docs.embedded(_block(ROOT / doc, gen_docs.status_table))
    assert table == gen_docs.status_table(), f"{doc}: regenerate with: python scripts/gen_docs.py"
    for code, info in BASELINE.items():
        row = re.search(rf"^\| `{code}` \| `([A-Z_]+)` \| (yes|no) \|", table, re.MULTILINE)
        assert row, f"{doc}: no row for {code}"
        assert row.group(1) == info.grpc_status, f"{doc}: {code}"
        assert (row.group(2) == "yes") is info.retryable, f"{doc}: {code}"
        assert grpc.StatusCode[row.group(1)] == wire.status_for(code, info.retryable)
    # UNAUTHENTICATED belongs to the caller's own credentials: only that rejection uses it.
    rows = [line for line in table.splitlines() if "UNAUTHENTICATED" in line]
    assert len(rows) == 1 and "rejection `unauthenticated`" in rows[0]
    for reason, rinfo in REASONS.items():
        row = re.search(
            rf"^\| \([^)]*\) \| `([A-Z_]+)` \| (yes|no) \| `{reason.upper()}` \|",
            table,
            re.MULTILINE,
        )
        assert row, f"{doc}: no row for rejection {reason}"
        assert row.group(1) == rinfo.grpc_status and (row.group(2) == "yes") is rinfo.retryable


def test_every_rejection_reason_is_documented() -> None:
    """Each reason of schemas/rejections.json has a retryable flag, a hint and a docs row."""
    table = gen_docs.embedded(_block(ROOT / "docs" / "grpc.md", gen_docs.rejection_table))
    assert table == gen_docs.rejection_table(), "regenerate with: python scripts/gen_docs.py"
    for reason, info in REASONS.items():
        assert info.recovery_hint and info.description, reason
        assert f"| `{reason}` |" in table, f"docs/grpc.md does not document rejection {reason}"


@pytest.mark.parametrize("doc", ["README.md", "docs/cli.md"])
def test_exit_codes_are_documented(doc: str) -> None:
    text = (ROOT / doc).read_text()
    expected = {
        cli.EXIT_OK: "success",
        cli.EXIT_PACK_ERROR: "the pack returned an error code",
        cli.EXIT_USAGE: "usage or connection problem",
    }
    for number, meaning in expected.items():
        row = re.search(rf"^\| `{number}` \| (.*)\|$", text, re.MULTILINE)
        assert row, f"{doc}: exit code {number} missing"
        assert meaning in row.group(1), f"{doc}: exit code {number}: {row.group(1)}"
    assert (cli.EXIT_OK, cli.EXIT_PACK_ERROR, cli.EXIT_USAGE) == (0, 1, 2)


def test_the_issue_3_subcommands_are_documented() -> None:
    text = (ROOT / "docs" / "cli.md").read_text()
    for command in ("serve", "list", "describe", "call"):
        assert f"### `packctl {command}" in text, f"docs/cli.md: packctl {command}"
    for option in ("--target", "--local", "--output", "--strict", "--fail-on", "--deadline"):
        assert f"`{option}" in text, f"docs/cli.md: {option}"


def test_readme_has_the_newcomer_sections() -> None:
    text = (ROOT / "README.md").read_text()
    for heading in (
        "## Two commands",
        "## Quickstart: serve a built-in pack and call it",
        "## The same call with a stock client: `buf curl`",
        "## Error codes → gRPC status",
        "## `packctl` exit codes",
    ):
        assert heading in text, heading
    assert "./scripts/dev serve" in text
    assert "bash .ci/run" in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert '"$PY" -m pytest -q' in ci and "cp_setup --dev" in ci
    assert "cp_setup\n" in (ROOT / "scripts" / "dev").read_text()


@pytest.mark.parametrize("path", sorted((ROOT / "schemas").glob("*.json")), ids=lambda p: p.name)
def test_each_schema_file_has_an_id_and_is_valid(path: Path) -> None:
    import jsonschema

    doc = json.loads(path.read_text())
    assert doc.get("$id", "").endswith("/" + path.name), f"{path.name}: $id"
    if path.name.endswith(".schema.json"):
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(doc)


def test_readme_says_where_buf_comes_from() -> None:
    """Issue 45 item 5: README ran `buf curl` without saying where buf comes from."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## The same call with a stock client: `buf curl`", 1)[1]
    section = section.split("\n## ", 1)[0]
    tools = json.loads((ROOT / "package.json").read_text())["devDependencies"]
    (package,) = [name for name in tools if name.endswith("/buf")]
    assert f"`{package}`" in section, "README: name the npm package buf comes from"
    assert "node_modules/.bin" in section, "README: say where scripts/setup --dev puts it"
