"""Every ``console`` block of README.md and docs/*.md, run against a live server (issue 38,
item 9; in the spirit of datasette's ``tests/test_docs.py``).

A block is a shell session: ``$ command`` lines (``\\`` continues one) and what they print
(stdout and stderr, as a terminal shows them). The whole block runs in one ``bash`` in a
scratch directory, against one ``packctl serve`` of the built-in packs on a free port:
``packctl`` commands without ``--target``/``--local`` get the live ``--target``, the
documented ``127.0.0.1:50051`` is the live address, ``/tmp/`` is the scratch directory, and
``$ packctl serve`` prints the live server's banner instead of starting another.

Output is compared after :func:`normalize` (request and reference ids, ports, the event
loop, whitespace), and a line ``...`` in the doc stands for any lines, ``...`` within a
line for any text. A block that cannot run here is marked in the doc, right above it, with
``<!-- console: skip REASON -->``: a reviewed skip with its reason, never a silent one
(:func:`test_every_skip_says_why`). The walk is generic over README.md and docs/*.md, so
content moving between them keeps being run.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from child_processes import tied
from server_support import PACKCTL, ROOT, reap

pytestmark = pytest.mark.system  # the docs' console blocks run ffmpeg, buf, node and git

DOCUMENTED_TARGET = "127.0.0.1:50051"
SKIP = re.compile(r"<!--\s*console:\s*skip\b(.*?)-->")
BLOCK = re.compile(r"^```console\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    text: str
    skip: str | None  # the reason, when marked

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    def session(self) -> tuple[str, str]:
        """The commands (one script) and the output the doc shows for them."""
        commands: list[str] = []
        output: list[str] = []
        lines = iter(self.text.splitlines())
        for line in lines:
            if line.startswith("$ "):
                command = line[2:]
                while command.endswith("\\"):  # kept: bash reads the continuation
                    command += "\n" + next(lines, "")
                commands.append(command)
            else:
                output.append(line)
        return "\n".join(commands), "\n".join(output)


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks() -> list[Block]:
    found: list[Block] = []
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = SKIP.search(before)
            found.append(
                Block(
                    path=path,
                    line=text[: match.start()].count("\n") + 1,
                    text=match.group(1),
                    skip=marker.group(1).strip() if marker else None,
                )
            )
    return found


_NORMAL = [
    (re.compile(r"\bref_[0-9a-f]{16}\b"), "<REF>"),
    (re.compile(r"\b[0-9a-f]{32}\b"), "<ID>"),
    (re.compile(r"\b127\.0\.0\.1:\d+"), "127.0.0.1:<PORT>"),
    (re.compile(r"event loop (uvloop|asyncio)"), "event loop <LOOP>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"), "<TIME>"),
    # base64 (buf's bytes fields): it encodes paths and ids, which differ run to run
    (re.compile(r"[A-Za-z0-9+/]{24,}={0,2}"), "<B64>"),
]


def normalize(text: str) -> str:
    """What may differ between runs made equal; whitespace runs made one space."""
    for pattern, replacement in _NORMAL:
        text = pattern.sub(replacement, text)
    lines = (" ".join(line.split()) for line in text.strip().splitlines())
    return "\n".join(line for line in lines if line)


#: A line of elided output with a remark: ``...   (the probed facts, shortened here)``.
_REMARK = re.compile(r"\.\.\.\s*\(.*\)")


def matches(expected: str, actual: str) -> bool:
    """``actual`` fits ``expected`` (both normalized): ``...`` lines and ``...`` inside a
    line are wildcards."""
    parts: list[str] = []
    for line in normalize(expected).splitlines():
        if line == "..." or _REMARK.fullmatch(line):
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(map(re.escape, line.split("..."))) + r"\n")
    return re.fullmatch("".join(parts), normalize(actual) + "\n", re.S) is not None


# -- the live server and the shell -----------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CAPABILITY_PACKS_PLUGINS", None)  # the built-in packs, as a user has them
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """``packctl serve`` of the built-in packs: (target, banner line)."""
    log = tmp_path_factory.mktemp("serve") / "stderr"
    with log.open("w") as err:
        proc = subprocess.Popen(
            tied([*PACKCTL, "serve", "--address", "127.0.0.1:0", "--no-incident-db"]),
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=_env(),
            cwd=ROOT,
        )
    try:
        banner = ""
        for _ in range(600):
            banner = next(
                (ln for ln in log.read_text().splitlines() if "packctl: serving" in ln), ""
            )
            if banner or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert banner, log.read_text()
        port = re.search(r"127\.0\.0\.1:(\d+)", banner)
        assert port is not None, banner
        yield f"127.0.0.1:{port.group(1)}", banner
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        finally:
            reap(proc)


_PACKCTL_WRAPPER = """#!/bin/sh
# packctl as the docs show it, against the live server of tests/test_docs_console.py
case "$1" in
  serve) echo "$DOCS_BANNER" >&2; exit 0 ;;
esac
case " $* " in
  *" --target "*|*" --local "*) exec "$DOCS_PYTHON" -m control_plane._features.cli.cli "$@" ;;
esac
case "$1" in
  list|describe|call|gate|mcp) exec "$DOCS_PYTHON" -m control_plane._features.cli.cli "$@" \
      --target "$DOCS_TARGET" ;;
esac
exec "$DOCS_PYTHON" -m control_plane._features.cli.cli "$@"
"""


@pytest.fixture(scope="module")
def scratches(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    """One scratch directory per doc file: its blocks run in order and build on each other
    (README's clip made by ffmpeg is the one later blocks validate)."""
    return {}


def _scratch(scratches: dict[Path, Path], block: Block, base: Path) -> Path:
    if block.path not in scratches:
        scratch = base / block.path.stem
        bin_dir = scratch / "bin"
        bin_dir.mkdir(parents=True)
        wrapper = bin_dir / "packctl"
        wrapper.write_text(_PACKCTL_WRAPPER)
        wrapper.chmod(0o755)
        buf = ROOT / "node_modules" / ".bin" / "buf"
        if buf.is_file():
            (bin_dir / "buf").symlink_to(buf)
        scratches[block.path] = scratch
    return scratches[block.path]


def _run(block: Block, target: str, banner: str, scratch: Path) -> str:
    bin_dir = scratch / "bin"
    commands, _ = block.session()
    script = commands.replace(DOCUMENTED_TARGET, target).replace("/tmp/", f"{scratch}/")
    env = _env() | {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "DOCS_PYTHON": sys.executable,
        "DOCS_TARGET": target,
        "DOCS_BANNER": banner,
        "XDG_STATE_HOME": str(scratch / "state"),
    }
    env.pop("CAPABILITY_PACKS_INCIDENT_DB", None)
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=scratch,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stdout.replace(f"{scratch}/", "/tmp/").replace(target, DOCUMENTED_TARGET)


# -- the tests -------------------------------------------------------------------------

BLOCKS = blocks()


def test_the_walk_finds_the_blocks() -> None:
    """README.md and docs/*.md hold console blocks, and most of them run."""
    assert len(BLOCKS) >= 10
    assert sum(b.skip is None for b in BLOCKS) >= 5


def test_every_skip_says_why() -> None:
    for block in BLOCKS:
        if block.skip is not None:
            assert len(block.skip) >= 15, f"{block.name}: a skip marker needs its reason"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.skip is None], ids=lambda b: b.name)
def test_console_block(
    block: Block,
    live: tuple[str, str],
    scratches: dict[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    target, banner = live
    if not scratches:
        scratches[Path("/")] = tmp_path_factory.mktemp("docs")
    tmp_path = _scratch(scratches, block, scratches[Path("/")])
    local_buf = (ROOT / "node_modules" / ".bin" / "buf").is_file()
    if "buf " in block.text and not local_buf and shutil.which("buf") is None:
        pytest.fail("buf is missing: scripts/setup --dev installs it (npm)")
    actual = _run(block, target, banner, tmp_path)
    _, expected = block.session()
    if not matches(expected, actual):
        diff = difflib.unified_diff(
            normalize(expected).splitlines(), normalize(actual).splitlines(), "doc", "ran", n=1
        )
        pytest.fail(f"{block.name}: the doc and the run differ (normalized):\n" + "\n".join(diff))


def test_matches_honours_wildcards_and_normalizes() -> None:
    assert matches("a ... c\n...\nz", "a b c\nx\ny\nz")
    assert matches("a\n...   (shortened here)\nz", "a\nx\ny\nz")
    assert matches("request 0fed27d1e34c4db8903eefeec9374fd5", "request " + "a" * 32)
    assert not matches("a\nb", "a\nc")
    assert not matches("exactly this", "exactly this and more")


def test_mcp_doc_spells_the_installed_sdks_fields() -> None:
    """docs/mcp.md showed only the wire's camelCase; the Python SDK 2.x a user installs
    spells the result's fields in snake_case. The doc names both."""
    from mcp.types import CallToolResult

    text = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    for field, info in CallToolResult.model_fields.items():
        if field in ("is_error", "structured_content"):
            assert f"result.{field}" in text, field
            assert info.alias is None or info.alias in text, info.alias
    assert "isError" in text and "structuredContent" in text
