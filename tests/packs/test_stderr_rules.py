"""control_plane._kernel.stderr: the table-driven classifier fed with real git and ssh stderr.

The samples in tests/data/stderr were captured from real runs (see capture.py there);
each file name starts with the code the classifier must produce.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from control_plane._kernel.classify import classify
from control_plane._kernel.errors import PackError
from control_plane._kernel.stderr import (
    GIT,
    GIT_RULES,
    SSH,
    SSH_RULES,
    StderrClassifier,
    ToolFailed,
    resolve_binary,
    rule,
)
from control_plane._kernel.vocabulary import BASELINE
from control_plane.tools import run_tool

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "stderr"
SAMPLE_FILES = sorted(SAMPLES.glob("*.txt"))
PLANTED = "tok-PLANTED-SECRET-4242"
FIXED_MESSAGES = {r.message for r in GIT_RULES}


def expected_code(path: Path) -> str:
    return path.name.split("--", 1)[0]


def test_samples_cover_every_code_and_both_tools() -> None:
    assert len(SAMPLE_FILES) >= 25
    codes = {expected_code(p) for p in SAMPLE_FILES}
    assert codes == {"auth_failed", "not_found", "network_error", "timeout", "rate_limited"}
    assert any("--ssh-" in p.name for p in SAMPLE_FILES)
    assert any("publickey" in p.name for p in SAMPLE_FILES)


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.stem)
def test_real_git_and_ssh_stderr_is_classified(path: Path) -> None:
    text = path.read_text()
    error = GIT.error(text)
    assert error is not None, f"no rule matched {path.name}"
    assert error.code == expected_code(path)
    # The message is a rule's fixed text: nothing from the stderr travels.
    assert error.message in FIXED_MESSAGES
    assert PLANTED not in error.message
    assert "127.0.0.1" not in error.message
    if error.code == "rate_limited":
        assert error.retry_after is not None and error.retry_after >= 0
    # bytes in, same answer
    assert GIT.error(text.encode()) is not None
    assert GIT.match(text.encode()) == GIT.match(text)


@pytest.mark.parametrize(
    "path", [p for p in SAMPLE_FILES if "--ssh-" in p.name], ids=lambda p: p.stem
)
def test_plain_ssh_stderr_with_the_ssh_table(path: Path) -> None:
    error = SSH.error(path.read_text())
    assert error is not None
    assert error.code == expected_code(path)


def test_planted_token_is_in_a_sample_but_never_in_the_message() -> None:
    traced = SAMPLES / "auth_failed--git-http-traced-bearer-token.txt"
    text = traced.read_text()
    assert PLANTED in text  # the raw stderr really carries the secret
    error = GIT.error(text)
    assert error is not None and error.code == "auth_failed"
    assert PLANTED not in str(error) and PLANTED not in repr(error)


def test_order_decides_specific_before_generic() -> None:
    line = "fatal: unable to access 'https://h/r.git/': The requested URL returned error: 403"
    assert GIT.error(line).code == "auth_failed"  # type: ignore[union-attr]
    line404 = line.replace("403", "404")
    assert GIT.error(line404).code == "not_found"  # type: ignore[union-attr]
    generic = "fatal: unable to access 'https://h/r.git/': something new"
    assert GIT.error(generic).code == "network_error"  # type: ignore[union-attr]
    publickey = "git@h: Permission denied (publickey).\nfatal: Could not read from remote"
    assert GIT.match(publickey).name == "ssh_permission_denied"  # type: ignore[union-attr]


def test_local_permission_denied_is_not_auth() -> None:
    text = "error: cannot open .git/FETCH_HEAD: Permission denied"
    assert GIT.error(text) is None


def test_unknown_stderr_is_not_classified() -> None:
    assert GIT.error("fatal: something nobody has seen before") is None
    assert GIT.classify("") is None


def test_classification_form_for_hooks() -> None:
    cls = GIT.classify("ssh: Could not resolve hostname nowhere: Name or service not known")
    assert cls is not None
    assert cls.code == "network_error"
    assert cls.rule == "stderr:git:ssh_resolve"
    assert "nowhere" not in cls.message


def test_every_rule_code_is_baseline_and_names_unique() -> None:
    for item in (*GIT_RULES, *SSH_RULES):
        assert item.code in BASELINE, item.name
        assert re.fullmatch(r"[a-z][a-z0-9_]*", item.name)
    assert len({r.name for r in GIT_RULES}) == len(GIT_RULES)


def test_extend_puts_pack_rules_first() -> None:
    mine = rule("mine", "not_found", r"Repository not found", "mine")
    extended = GIT.extend([mine], name="mine")
    assert extended.match("remote: Repository not found.").name == "mine"  # type: ignore[union-attr]
    after = GIT.extend([mine], first=False)
    assert after.match("remote: Repository not found.").name == "git_repo_not_found"  # type: ignore[union-attr]
    assert len(extended) == len(GIT) + 1
    with pytest.raises(ValueError, match="duplicate"):
        StderrClassifier([mine, mine])


def test_crlf_and_long_stderr() -> None:
    noise = "x" * 200_000
    text = noise + "\r\ngit@h: Permission denied (publickey).\r\n"
    assert GIT.error(text).code == "auth_failed"  # type: ignore[union-attr]


def test_tool_failed_is_unclassified_and_scrubbed() -> None:
    exc = ToolFailed("git", 128, "fatal: weird https://user:hunter2hunter2@host/x failure")
    assert classify(exc) is None  # -> internal_error, stderr kept server-side
    assert "hunter2hunter2" not in str(exc)
    assert exc.returncode == 128


@pytest.mark.system
def test_run_tool_success_and_exit_status() -> None:
    done = run_tool(
        [sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"],
        timeout=10,
        check=False,
    )
    assert done.returncode == 3 and not done.ok
    assert done.stderr == "boom"


def test_run_tool_timeout_kills_the_whole_process_group() -> None:
    started = time.monotonic()
    with pytest.raises(PackError) as info:
        # The grandchild holds the pipes open: only a group kill lets communicate() return.
        run_tool(["sh", "-c", "sleep 30 & sleep 30"], timeout=0.3, tool="sh")
    assert info.value.code == "timeout"
    assert time.monotonic() - started < 5


@pytest.mark.system  # finds git on PATH (docs/setup.md, Test tiers)
def test_run_tool_and_resolve_binary_report_missing_dependency(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(PackError) as info:
        run_tool([str(tmp_path / "no-such-tool")], timeout=5)
    assert info.value.code == "dependency_missing"
    monkeypatch.setenv("MY_TOOL", str(tmp_path / "missing"))
    with pytest.raises(PackError) as info2:
        resolve_binary("git", env_var="MY_TOOL")
    assert info2.value.code == "dependency_missing"
    monkeypatch.setenv("MY_TOOL", shutil.which("git") or "git")
    assert resolve_binary("git", env_var="MY_TOOL").endswith("git")
    with pytest.raises(PackError) as info3:
        resolve_binary("git", env_var="MY_TOOL", override="nope-not-a-tool", missing_code="x_y")
    assert info3.value.code == "x_y"
