"""The start-up self-test: a process whose scrubber lets a canary through refuses to serve.

Each case starts a real ``packctl`` in a subprocess whose rule table has one rule broken on
purpose (its pattern replaced by one that never matches, as a regex engine that matched
differently would), and sees the command refuse before serving: exit status 1, a message
naming the interpreter and the broken family, no port bound, no answer.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from server_support import subprocess_env

from control_plane.core import redact
from control_plane.core.secret_rules import CANARIES, RULES

#: Breaks one rule of the table, then runs ``packctl`` with the arguments given.
BROKEN = """
import dataclasses, re, sys
from control_plane.core import redact
broken = sys.argv[1]
redact.RULES = tuple(
    dataclasses.replace(rule, pattern=re.compile("(?!)")) if rule.name == broken else rule
    for rule in redact.RULES
)
from control_plane.adapters.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _run(broken: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BROKEN, broken, *argv],
        check=False,
        env=subprocess_env(),
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
        ("key_value", ["call", "test.echo", "--local", "--plugin", "testpacks", "--input", "{}"]),
        ("url_userinfo_encoded", ["mcp", "--local", "--plugin", "testpacks"]),
        ("aws_secret_key", ["list", "--local", "--plugin", "testpacks"]),
    ],
    ids=lambda v: v if isinstance(v, str) else v[0],
)
def test_a_broken_rule_stops_the_process_before_it_serves(broken: str, argv: list[str]) -> None:
    done = _run(broken, *argv)
    assert done.returncode == 1, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    assert "refusing to start" in done.stderr
    assert broken in done.stderr
    assert sys.version.split()[0] in done.stderr and sys.executable in done.stderr
    assert "listening" not in (done.stdout + done.stderr).lower()
    assert "Traceback" not in done.stderr


def test_the_same_process_with_its_rules_intact_starts() -> None:
    """The harness itself does not refuse: only the broken rule does."""
    done = _run("no_such_rule", "list", "--local", "--plugin", "testpacks")
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
    monkeypatch.setattr(redact, "_VERIFIED", [])
    with pytest.raises(SystemExit, match="key_value"):
        redact.require_scrubber()
