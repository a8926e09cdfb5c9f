"""The start-up self-test: a process whose scrubber lets a canary through refuses to serve.

Each case starts a real ``packctl`` with one rule broken on purpose (its pattern replaced by
one that never matches, as a regex engine that matched differently would), by a
``sitecustomize`` on its PYTHONPATH so that the processes it starts inherit the break; and
sees the command refuse before serving: exit status 1, a message naming the interpreter and
the broken family, no port bound, no answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from server_support import PACKCTL, subprocess_env

from control_plane._kernel import redact
from control_plane._kernel.secret_rules import CANARIES, RULES

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

#: Imported by every Python process started with its directory first on PYTHONPATH
#: (``site`` imports ``sitecustomize``): breaks the rule SCRUB_BREAK_RULE names, in the
#: command and in every process it starts (``serve --workers`` workers).
SITECUSTOMIZE = """
import dataclasses, os, re
from control_plane._kernel import redact
broken = os.environ["SCRUB_BREAK_RULE"]
redact.RULES = tuple(
    dataclasses.replace(rule, pattern=re.compile("(?!)")) if rule.name == broken else rule
    for rule in redact.RULES
)
"""


def _run(tmp_path: Path, broken: str, *argv: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = subprocess_env(SCRUB_BREAK_RULE=broken)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    return subprocess.run(
        [*PACKCTL, *argv],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_every_rule_has_a_canary_and_every_canary_passes_here() -> None:
    assert [c.rule for c in CANARIES] == [r.name for r in RULES]
    assert redact.leaking_rules() == []
    redact.require_scrubber()


@pytest.mark.parametrize(
    ("broken", "argv"),
    [
        ("npm_token", ["serve", "--address", "127.0.0.1:0"]),
        ("jwt", ["serve", "--address", "127.0.0.1:0", "--workers", "2"]),
        ("key_value", ["call", "test.echo", "--local", "--plugin", "testpacks", "--input", "{}"]),
        ("url_userinfo_encoded", ["mcp", "--local", "--plugin", "testpacks"]),
        ("aws_secret_key", ["list", "--local", "--plugin", "testpacks"]),
    ],
    ids=lambda v: v if isinstance(v, str) else v[0],
)
def test_a_broken_rule_stops_the_process_before_it_serves(
    tmp_path: Path, broken: str, argv: list[str]
) -> None:
    done = _run(tmp_path, broken, *argv)
    # serve --workers: each worker refuses (exit 1) and the supervisor stops (usage, 2).
    assert done.returncode == (2 if "--workers" in argv else 1), (
        done.returncode,
        done.stdout[-500:],
        done.stderr[-2000:],
    )
    assert "refusing to start" in done.stderr
    assert broken in done.stderr
    assert sys.version.split()[0] in done.stderr and sys.executable in done.stderr
    assert "listening" not in (done.stdout + done.stderr).lower()
    assert "Traceback" not in done.stderr


def test_the_same_process_with_its_rules_intact_starts(tmp_path: Path) -> None:
    """The harness itself does not refuse: only the broken rule does."""
    done = _run(tmp_path, "no_such_rule", "list", "--local", "--plugin", "testpacks")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refusing" not in done.stderr


def test_a_rule_that_eats_the_text_around_its_secret_fails_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over-redaction is a failure too (``Password=abc1;Server=db`` losing ``;Server=``)."""
    import dataclasses
    import re

    rules = tuple(
        dataclasses.replace(r, pattern=re.compile(r"(?i)password=.*"), repl="[REDACTED]")
        if r.name == "key_value"
        else r
        for r in RULES
    )
    monkeypatch.setattr(redact, "RULES", rules)
    monkeypatch.setattr(redact, "_CLEAN", {})
    assert "key_value" in redact.leaking_rules()
    redact._self_test.cache_clear()  # the self-test runs again, with these rules
    try:
        with pytest.raises(SystemExit, match="key_value"):
            redact.require_scrubber()
    finally:
        redact._self_test.cache_clear()
