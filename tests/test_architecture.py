"""The layers of docs/architecture.md, checked by reading every import.

core < runtime < wire < adapters: a module may import its own layer and the layers below,
never one above. Built-in packs import only the public modules, like a third party.
Imports under ``if TYPE_CHECKING:`` are annotations, not dependencies, and are skipped.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "control_plane"

#: Layer -> the layers (and shared private modules) it may import.
ALLOWED: dict[str, set[str]] = {
    "core": {"core", "base"},
    "runtime": {"core", "runtime", "base"},
    "wire": {"core", "runtime", "wire", "v1", "base"},
    "adapters": {"core", "runtime", "wire", "adapters", "v1", "base", "public"},
    "public": {"core", "runtime", "wire", "base", "public"},
    "v1": {"v1"},
    "base": {"base"},
}
PUBLIC = {"control_plane", "control_plane.errors", "control_plane.tools", "control_plane.embed"}
AUTHOR_API = {"control_plane", "control_plane.errors", "control_plane.tools"}


def layer_of(module: str) -> str | None:
    """The layer of a ``control_plane`` module name (``None``: not ours)."""
    parts = module.split(".")
    if parts[0] != "control_plane":
        return None
    if module in PUBLIC:
        return "public"
    second = parts[1]
    if second in ("core", "runtime", "wire", "adapters", "v1"):
        return second
    if second in ("_resources", "_version"):
        return "base"
    raise AssertionError(f"{module}: not in any layer of docs/architecture.md")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every runtime import in ``path`` (TYPE_CHECKING skipped)."""
    tree = ast.parse(path.read_text(), str(path))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "control_plane":  # `from control_plane import x`: x may be a module
                for alias in node.names:
                    candidate = f"control_plane.{alias.name}"
                    sub = PACKAGE / alias.name
                    is_module = sub.is_dir() or sub.with_suffix(".py").is_file()
                    found.append((node.lineno, candidate if is_module else "control_plane"))
            else:
                found.append((node.lineno, node.module))
    return found


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "v1" not in p.relative_to(PACKAGE).parts)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_a_layer_above_its_own(path: Path) -> None:
    own = layer_of(module_name(path))
    assert own is not None
    for line, target in imports(path):
        layer = layer_of(target)
        if layer is None:
            continue
        assert layer in ALLOWED[own], (
            f"{path.relative_to(ROOT)}:{line}: the {own} layer imports {target} ({layer}); "
            f"{own} may import only {sorted(ALLOWED[own])} (docs/architecture.md)"
        )


#: The runtime modules the author API may use: each imports only core (checked below), so a
#: pack still depends on core alone, plus the one place that starts its programs and the
#: one that confines them (standard library only: an exec wrapper runs it).
AUTHOR_RUNTIME = {"control_plane.runtime.tool_process", "control_plane.runtime.confine_program"}


def test_the_author_api_depends_on_core_only() -> None:
    for name in AUTHOR_API | AUTHOR_RUNTIME:
        rel = "control_plane/__init__.py" if name == "control_plane" else name.replace(".", "/")
        path = ROOT / (rel if rel.endswith(".py") else rel + ".py")
        for line, target in imports(path):
            layer = layer_of(target)
            allowed = layer in (None, "core", "base", "public") or target in AUTHOR_RUNTIME
            assert allowed, f"{path}:{line}: {target}"


PACK_SOURCES = sorted((ROOT / "packs").rglob("*.py"))


@pytest.mark.parametrize("path", PACK_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_built_in_packs_import_only_the_public_author_modules(path: Path) -> None:
    for line, target in imports(path):
        if target.split(".")[0] != "control_plane":
            continue
        assert target in AUTHOR_API, (
            f"{path.relative_to(ROOT)}:{line}: imports {target}; a pack imports only "
            f"{sorted(AUTHOR_API)}, like a third-party pack"
        )


def test_the_architecture_note_names_every_layer_and_public_module() -> None:
    note = (ROOT / "docs" / "architecture.md").read_text()
    for layer in ("core", "runtime", "wire", "adapters"):
        assert f"`control_plane/{layer}/`" in note, layer
        for path in sorted((PACKAGE / layer).glob("*.py")):
            if path.name != "__init__.py":
                assert f"`{path.stem}`" in note, f"docs/architecture.md: {layer}/{path.name}"
    for module in PUBLIC:
        assert f"`{module}`" in note, module


#: The only places that may build outcome records without their scrubbing constructors:
#: decoders of what another process already sent (a status, a reply), on the caller's side.
DECODERS = {
    ("control_plane/wire/status.py", "check_from_proto"),
    ("control_plane/wire/status.py", "validation_from_proto"),
    ("control_plane/wire/status.py", "envelope_from_proto"),
    ("control_plane/wire/client.py", "_outcome"),
    ("control_plane/wire/call_errors.py", "outcome"),
    ("control_plane/wire/call_errors.py", "error_from_rpc"),
}
MODELS = {"Outcome", "ErrorEnvelope", "CheckRecord", "Violation", "ValidationRecord", "Rejection"}
BYPASSES = {"model_construct", "construct_trusted", "model_validate"}


def _bypasses(path: Path) -> list[tuple[int, str, str]]:
    """``(line, function, call)`` of every record built around its scrubbing constructor."""
    tree = ast.parse(path.read_text(), str(path))
    found: list[tuple[int, str, str]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = function
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = child.name
            if isinstance(child, ast.Call):
                func = child.func
                if (
                    isinstance(func, ast.Attribute)
                    and isinstance(func.value, ast.Name)
                    and func.value.id in MODELS
                    and func.attr in BYPASSES
                ):
                    found.append((child.lineno, function, f"{func.value.id}.{func.attr}"))
                if isinstance(func, ast.Name) and func.id == "Rejection":
                    found.append((child.lineno, function, "Rejection(...)"))
            visit(child, name)

    visit(tree, "<module>")
    return found


def test_outcomes_and_rejections_are_built_by_their_scrubbing_constructors() -> None:
    """Only ``build()``/``internal()``/``Rejection.of()`` make what leaves the process;
    the model classes themselves and the caller-side decoders are the only exceptions."""
    own = {PACKAGE / "core" / "outcome.py", PACKAGE / "core" / "rejection.py"}
    for path in SOURCES:
        if path in own:
            continue
        rel = str(path.relative_to(ROOT))
        for line, function, call in _bypasses(path):
            assert (rel, function) in DECODERS, (
                f"{rel}:{line}: {call} in {function}() bypasses the scrubbing constructor; "
                "use build() / ErrorEnvelope.internal() / Rejection.of()"
            )


# -- layers in what the code does, not only in its imports -----------------------------------

BELOW_ADAPTERS = [p for p in SOURCES if layer_of(module_name(p)) in ("core", "runtime", "wire")]


def _main_guarded(tree: ast.Module) -> set[int]:
    """Ids of the nodes under ``if __name__ == "__main__":`` (a module's own entry point)."""
    skipped: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skipped


@pytest.mark.parametrize("path", BELOW_ADAPTERS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_argument_parsing_or_printing_below_adapters(path: Path) -> None:
    """Options are parsed and text printed in ``adapters/``; the layers below take typed
    configs and write to the streams or loggers they are handed."""
    rel = path.relative_to(ROOT)
    for line, target in imports(path):
        assert target.split(".")[0] != "argparse", (
            f"{rel}:{line}: imports argparse; parse options in adapters/ and pass a typed config"
        )
    tree = ast.parse(path.read_text(), str(path))
    entry = _main_guarded(tree)
    for node in ast.walk(tree):
        if id(node) in entry:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id != "print", (
                f"{rel}:{node.lineno}: print(); print in adapters/, or log, or write to a "
                "stream the adapter hands in"
            )


#: Modules whose import lets a module start processes: none of them in core.
PROCESS_MODULES = {"subprocess", "pty", "multiprocessing", "asyncio.subprocess"}
#: Names that start a process (or replace this one), by the module that holds them; an
#: event loop's ``subprocess_exec``/``subprocess_shell`` on any object.
PROCESS_NAMES = {
    "os": {"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp"}
    | {f"exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
    | {f"spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
}
LOOP_PROCESS_METHODS = {"subprocess_exec", "subprocess_shell"}


def _banned_module(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in PROCESS_MODULES)


def _process_starts(path: Path) -> list[tuple[int, str]]:
    """``(line, what)`` of every way ``path`` could start a process: an import of a process
    module (aliased, ``from``, ``__import__``/``import_module`` too), or any use of a name
    that starts one (``os.fork``, ``from os import execv``, ``asyncio.create_subprocess_exec``,
    ``loop.subprocess_exec``), called or not. Under ``TYPE_CHECKING`` as well."""
    tree = ast.parse(path.read_text(), str(path))
    found: list[tuple[int, str]] = []
    aliases: dict[str, str] = {}  # local name -> "os" / "asyncio"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _banned_module(alias.name):
                    found.append((node.lineno, f"import {alias.name}"))
                if alias.name in PROCESS_NAMES:
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                starts = alias.name in PROCESS_NAMES.get(node.module, ())
                if starts or _banned_module(f"{node.module}.{alias.name}"):
                    found.append((node.lineno, f"from {node.module} import {alias.name}"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner = node.value
            if isinstance(owner, ast.Name) and node.attr in PROCESS_NAMES.get(
                aliases.get(owner.id, ""), ()
            ):
                found.append((node.lineno, f"{aliases[owner.id]}.{node.attr}"))
            elif node.attr in LOOP_PROCESS_METHODS:
                found.append((node.lineno, f".{node.attr}"))
        elif isinstance(node, ast.Call) and node.args:
            func, first = node.func, node.args[0]
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if (
                name in ("__import__", "import_module")
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and (_banned_module(first.value) or first.value in PROCESS_NAMES)
            ):
                found.append((node.lineno, f"{name}({first.value!r})"))
    return sorted(found)


def test_core_starts_no_process() -> None:
    """core is the contract and the pipeline: no network and no processes. Programs
    run in runtime/ (``runtime/tool_process.py``), injected into ``PackReach``."""
    for path in (p for p in SOURCES if layer_of(module_name(p)) == "core"):
        rel = path.relative_to(ROOT)
        for line, what in _process_starts(path):
            raise AssertionError(f"{rel}:{line}: {what}; processes start in runtime/")


def test_the_process_check_sees_what_it_looks_for(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import asyncio, os, subprocess\n"
        "import os as o\n"
        "import multiprocessing.pool\n"
        "from pty import spawn\n"
        "from os import execvp, getcwd\n"
        "from asyncio import create_subprocess_shell, sleep\n"
        "from subprocess import Popen as P\n"
        "import importlib\n"
        "async def b(loop):\n"
        "    await asyncio.create_subprocess_exec('x')\n"
        "    await loop.subprocess_exec(lambda: None, 'x')\n"
        "def c():\n    o.fork()\n    run = os.posix_spawn\n    os.getpid()\n"
        "def d():\n    importlib.import_module('subprocess')\n    __import__('pty')\n"
    )
    assert [what for _, what in _process_starts(sample)] == [
        "import subprocess",
        "import multiprocessing.pool",
        "from pty import spawn",
        "from os import execvp",
        "from asyncio import create_subprocess_shell",
        "from subprocess import Popen",
        "asyncio.create_subprocess_exec",
        ".subprocess_exec",
        "os.fork",
        "os.posix_spawn",
        "import_module('subprocess')",
        "__import__('pty')",
    ]


#: What the docs may tell users to import: the public modules, and the extras' entry points.
DOCUMENTED_IMPORTS = PUBLIC | {
    "control_plane.adapters.kit",
    "control_plane.adapters.temporal.client",
    "control_plane.adapters.temporal.messages",
}


def test_the_docs_import_only_public_modules() -> None:
    """Every ``from control_plane... import`` a page shows names a public module, and every
    name it imports is in that module's ``__all__``."""
    import importlib
    import re

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    pattern = re.compile(r"from (control_plane[\w.]*) import \(?([\w, \n]+?)\)?(?:\n\n|\n```|$)")
    seen = 0
    for page in pages:
        for module, names in pattern.findall(page.read_text()):
            seen += 1
            where = f"{page.relative_to(ROOT)}: from {module} import ..."
            assert module in DOCUMENTED_IMPORTS, f"{where}: an internal module"
            if module.startswith("control_plane.adapters.temporal"):
                continue  # needs the temporal extra; checked by tests/test_temporal.py
            exported = set(importlib.import_module(module).__all__)
            for name in (n.strip() for n in names.replace("\n", ",").split(",")):
                if name and not name.startswith("#"):
                    assert name in exported, f"{where}: {name} is not in its __all__"
    assert seen >= 5
