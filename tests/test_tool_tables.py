"""Tool tables, ``run_tool`` and the well-known ``dependency_missing`` code, by example.

The live corpus (``tests/test_failure_corpus.py``) drives the tables with real tools; here
each piece is pinned on its own: the table a command picks, stderr before exit status,
messages that are fixed and true, and what a pack that does or does not declare
``dependency_missing`` receives.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from failure_corpus.score import classifiers
from runtime_support import make_pack, plugin

from control_plane._kernel.classify import classify
from control_plane._kernel.errors import PackError
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.stderr import CURL_EXITS, GIT, TOOL_TABLES, WGET_EXITS, table_for
from control_plane._runtime.plugins import load_registry
from control_plane.tools import ToolFailed, run_tool


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["curl", "-sS", "x"], "curl"),
        (["/usr/bin/wget", "x"], "wget"),
        ("ssh -p 22 host true", "ssh"),
        ([b"/usr/local/bin/git", b"ls-remote"], "git"),
        (["ffprobe.exe", "a.mp4"], "ffprobe"),
        # wrappers: the tool is the one they run
        (["env", "-u", "HOME", "LC_ALL=C", "curl", "x"], "curl"),
        (["/usr/bin/timeout", "-k", "5", "--signal=KILL", "10s", "git", "fetch"], "git"),
        (["nice", "-n", "5", "wget", "x"], "wget"),
        (["sh", "-c", "LC_ALL=C exec curl -sS x"], "curl"),
        (["bash", "-ec", "ssh host true"], "ssh"),
        ("env LC_ALL=C timeout 10 sh -c 'ffprobe a.mp4'", "ffprobe"),
    ],
)
def test_the_table_is_picked_by_the_tool_name_in_argv(argv: Any, name: str) -> None:
    table = table_for(argv)
    assert table is not None and table.name == name
    assert table is TOOL_TABLES[name]


def test_no_table_for_other_tools() -> None:
    assert table_for(["python", "-c", "1"]) is None
    assert table_for([]) is None
    assert table_for(None) is None
    assert table_for(["sh", "script.sh"]) is None  # the tool is the script
    assert table_for(["timeout", "10"]) is None
    assert table_for(["env", "A=1", "python", "-c", "1"]) is None


def test_stderr_rules_come_before_the_exit_status() -> None:
    curl = TOOL_TABLES["curl"]
    # exit 22 alone says nothing; the status line makes it specific
    found = curl.classify(22, "curl: (22) The requested URL returned error: 404\n")
    assert found is not None and found.code == "not_found"
    # a client certificate alert arrives as exit 56 ("recv failure"): the alert wins
    alert = (
        "curl: (56) OpenSSL SSL_read: OpenSSL/3.0.19: error:0A00045C:SSL routines::"
        "tlsv13 alert certificate required, errno 0\n"
    )
    found = curl.classify(56, alert)
    assert found is not None and found.code == "auth_failed"
    assert curl.classify(22, "") is None


def test_exit_messages_are_true_of_the_status() -> None:
    assert CURL_EXITS[28].code == "timeout"
    assert "refused" not in CURL_EXITS[28].message  # a connect timeout is not a refusal
    assert CURL_EXITS[7].code == "network_error"
    assert CURL_EXITS[60].code == "auth_failed"  # never retryable
    assert WGET_EXITS[5].code == "auth_failed"


def test_git_tls_failures_are_no_longer_retryable() -> None:
    found = GIT.classify(
        "fatal: unable to access 'https://127.0.0.1:1/r.git/': SSL certificate problem: "
        "self-signed certificate\n"
    )
    assert found is not None and found.code == "auth_failed"
    found = GIT.classify(
        "fatal: unable to access 'https://127.0.0.1:1/': The requested URL returned error: 501\n"
    )
    assert found is not None and found.code == "internal_error"


def test_a_tls_connection_cut_by_the_network_stays_retryable() -> None:
    found = GIT.classify(
        "fatal: unable to access 'https://h/r.git/': OpenSSL SSL_connect: SSL_ERROR_SYSCALL "
        "in connection to h:443\n"
    )
    assert found is not None and found.code == "network_error"


def test_ssh_banner_exchange_timeout_is_a_timeout() -> None:
    found = TOOL_TABLES["ssh"].classify(
        255, "Connection timed out during banner exchange\r\nConnection to 127.0.0.1 port 1\n"
    )
    assert found is not None and found.code == "timeout"


@pytest.mark.system
def test_run_tool_raises_the_classified_error_or_tool_failed() -> None:
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"]
    with pytest.raises(ToolFailed) as unmatched:
        run_tool(failing, timeout=30)
    assert unmatched.value.returncode == 3
    assert run_tool(failing, timeout=30, check=False).returncode == 3
    table = TOOL_TABLES["curl"]
    with pytest.raises(PackError) as matched:
        run_tool(
            failing, timeout=30, table=table.__class__(table.name, table.stderr, {3: CURL_EXITS[3]})
        )
    assert matched.value.code == "internal_error"
    assert "boom" not in matched.value.message


def test_called_process_error_uses_its_captured_stderr() -> None:
    classifiers = load_registry(builtins=False, entry_points_=False).classifiers
    exc = subprocess.CalledProcessError(
        128,
        ["git", "ls-remote", "https://x.invalid/r.git"],
        stderr=b"fatal: unable to access 'https://x.invalid/r.git/': Could not resolve host\n",
    )
    found = classify(exc, classifiers)
    assert found is not None and found.code == "network_error"
    assert "x.invalid" not in found.message
    # without a table for the tool, its lines are read with the engine's vocabulary
    # (issue 44): the first line that says something, not a summary after it
    other = subprocess.CalledProcessError(
        1, ["mytool"], stderr=b"mytool: Connection refused\nmytool: see the log for details\n"
    )
    found = classify(other, classifiers)
    assert found is not None and found.code == "network_error"
    denied = subprocess.CalledProcessError(1, ["mytool"], stderr=b"ERROR 1045: Access denied\n")
    found = classify(denied, classifiers)
    assert found is not None and found.code == "auth_failed"
    # lines that say nothing the vocabulary knows: nothing is guessed
    vague = subprocess.CalledProcessError(1, ["mytool"], stderr=b"mytool: it went wrong\n")
    assert classify(vague, classifiers) is None


def _missing_tool(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    subprocess.run(["capability-packs-no-such-tool-4711"], check=True)
    return {}


@pytest.mark.system
@pytest.mark.parametrize(
    ("codes", "want", "violations"),
    [
        (["not_found", "dependency_missing"], "dependency_missing", 0),
        (["not_found"], "internal_error", 0),  # not declared: internal_error, no violation
    ],
)
def test_a_missing_executable_is_dependency_missing_when_declared(
    codes: list[str], want: str, violations: int
) -> None:
    pack = make_pack("tool.pack", codes=codes, handler=_missing_tool)
    loaded = load_registry(builtins=False, entry_points_=False, extra=[("p", plugin(pack))])
    invoker = Invoker(loaded.registry, classifiers=loaded.classifiers, max_workers=2)
    try:
        outcome = invoker.invoke_sync("tool.pack", {})
        assert outcome.code == want  # never not_found: the caller named no such file
        assert invoker.contract_violations.get("tool.pack", 0) == violations
    finally:
        invoker.close()


def _hostile(module: str, name: str) -> BaseException:
    """An exception posing as a library's, whose every accessor raises."""

    def boom(self: Any, *args: Any) -> Any:
        raise RuntimeError("hostile")

    attrs = {
        "__module__": module,
        "code": boom,
        "details": boom,
        "trailing_metadata": boom,
        "__str__": boom,
        "smtp_code": property(boom),
        "cmd": property(boom),
        "stderr": property(boom),
        "recipients": property(boom),
    }
    return type(name, (Exception,), attrs)()


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("grpc", "RpcError"),
        ("grpc.aio._call", "AioRpcError"),
        ("smtplib", "SMTPResponseException"),
        ("smtplib", "SMTPRecipientsRefused"),
        ("subprocess", "CalledProcessError"),
        ("httpx._exceptions", "ConnectError"),
    ],
)
def test_built_in_classifiers_survive_hostile_exceptions(module: str, name: str) -> None:
    classifiers = load_registry(builtins=False, entry_points_=False).classifiers
    found = classify(_hostile(module, name), classifiers)
    # never a crash; a name-only match (httpx) may still answer from the type alone
    assert found is None or found.code in {"network_error", "internal_error"}


# -- tables chosen by content (issue 36) ----------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "stderr", "code"),
    [
        # ssh's own lines inside scp's and rsync's stderr (captured from OpenSSH 9)
        (
            ["scp", "-P", "2222", "root@127.0.0.1:/etc/hostname", "out"],
            "ssh: connect to host 127.0.0.1 port 2222: Connection refused\r\n"
            "scp: Connection closed\n",
            "network_error",
        ),
        (
            ["rsync", "-e", "ssh -p 2222", "root@127.0.0.1:/x", "out"],
            "root@127.0.0.1: Permission denied (publickey).\r\n"
            "rsync: connection unexpectedly closed (0 bytes received so far) [Receiver]\n",
            "auth_failed",
        ),
        (
            ["scp", "a", "b"],
            "Connection timed out during banner exchange\nscp: Connection closed\n",
            "timeout",
        ),
        # a wrapper script printing another tool's lines
        (
            ["./deploy.sh"],
            "npm error code E429\nnpm error 429 Too Many Requests - GET x\n",
            "rate_limited",
        ),
        (
            ["make", "push"],
            "Error response from daemon: No such container: web\nmake: *** [push] Error 1\n",
            "not_found",
        ),
        (
            ["bash", "run.sh"],
            "Error from server (Forbidden): pods is forbidden: User cannot list resource\n",
            "auth_failed",
        ),
    ],
)
def test_a_table_is_also_chosen_by_the_lines_a_tool_prints(
    argv: list[str], stderr: str, code: str
) -> None:
    exc = subprocess.CalledProcessError(1, argv, output=b"", stderr=stderr.encode())
    found = classify(exc, classifiers())
    assert found is not None and found.code == code


def test_the_new_tool_tables_are_picked_by_name() -> None:
    for name in ("docker", "kubectl", "psql", "npm", "pip"):
        table = table_for([name, "x"])
        assert table is not None and table.name == name
