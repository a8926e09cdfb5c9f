"""``packctl gate`` against careless and hostile input: real ``packctl`` processes.

The packs of ``tests/gatepacks.py`` report whatever findings the gate file asks for, so the
gate's reports and exit codes are checked against hostile texts (newlines that would start
a forged GitHub workflow command, terminal escapes, NUL, ``]]>``), unencodable file names,
a stdout reader that goes away, a server that stalls, and broken gate files.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from server_support import PACKCTL, subprocess_env

HOSTILE = (
    "bad\\n::error file=src/app.py,title=forged::all good\\r\\n::add-mask::x"
    "\\u001b[2J\\u0000 ]]> <x/> \\u0007 \\u009b31m"
)


def packctl_gate(
    *args: str, cwd: Path, timeout: float = 60, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PACKCTL, "gate", *args],
        cwd=cwd,
        env=subprocess_env(CAPABILITY_PACKS_PLUGINS="gatepacks"),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def _echo_gate(path: Path, message: str = HOSTILE, *, severity: str = "fail") -> Path:
    path.write_text(
        f"""\
[[steps]]
name = "echo"
pack = "gate.echo"

[steps.input]
checks = [
  {{ id = "hostile", severity = "{severity}", message = "{message}" }},
  {{ id = "plain", severity = "warn", message = "a plain warning" }},
]
""",
        encoding="utf-8",
    )
    return path


def test_finding_text_cannot_forge_lines_or_drive_the_terminal(tmp_path: Path) -> None:
    """A finding's message is one line of printable text in every text rendering: its
    newline cannot start a forged ``::error``/``::add-mask::`` workflow command in the
    GitHub log, and escape sequences, NUL and BEL reach no terminal."""
    _echo_gate(tmp_path / "packctl-gate.toml")
    for fmt in ("text", "github", "json"):
        done = packctl_gate("--local", "--plugin", "gatepacks", "--format", fmt, cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        # The text summary: stdout for text and github, stderr beside a json report.
        text = done.stderr if fmt == "json" else done.stdout
        for char in "\x1b\x00\x07\r\x9b":
            assert char not in text, (fmt, char)
        lines = text.splitlines()
        commands = [line for line in lines if line.startswith("::")]
        if fmt == "github":
            # Exactly the gate's own two annotations, the forged one only inside one.
            assert [c.split("::")[1] for c in commands] == [
                "error title=gate.echo/hostile",
                "warning title=gate.echo/plain",
            ], commands
        else:
            assert commands == []
        assert any("::error file=src/app.py,title=forged::all good" in line for line in lines)
    json.loads(done.stdout)  # the json report itself is untouched (orjson escapes)

    junit = tmp_path / "junit.xml"
    done = packctl_gate(
        "--local",
        "--plugin",
        "gatepacks",
        "--format",
        "junit",
        "--report",
        str(junit),
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    root = ET.parse(junit).getroot()  # well-formed: ]]>, < and > escaped, NUL replaced
    [failure] = root.iter("failure")
    assert "]]> <x/>" in (failure.text or "")
