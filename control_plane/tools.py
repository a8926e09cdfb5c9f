"""Tools for pack authors: run a tool and classify its failure, scrub text, parse HTTP hints.

::

    from control_plane.tools import run_tool

    done = run_tool(["curl", "-sS", "--fail", url], timeout=ctx.remaining())
    # curl exit 6 -> network_error, 28 -> timeout, 22 + "returned error: 404" -> not_found
"""

from collections.abc import Mapping, Sequence

from control_plane.core.classify import (
    DEFAULT_RETRY_AFTER,
    Classification,
    TypeRule,
    classify,
    match_type_rules,
    parse_retry_after,
)
from control_plane.core.egress import (
    Address,
    Connector,
    EgressGrantError,
    EgressPolicy,
    EgressRefused,
    Resolver,
    check_destination,
    check_url,
    curl_resolve,
    open_connection,
    system_resolver,
    tcp_connector,
)
from control_plane.core.redact import scrub, scrub_data
from control_plane.core.schema import CompiledSchema, check_schema
from control_plane.core.stderr import (
    CURL,
    CURL_EXITS,
    CURL_RULES,
    FFMPEG,
    FFMPEG_RULES,
    GIT,
    GIT_RULES,
    SSH,
    SSH_RULES,
    TLS_RULES,
    TOOL_TABLES,
    WGET,
    WGET_EXITS,
    WGET_RULES,
    ExitRule,
    StderrClassifier,
    StderrRule,
    ToolFailed,
    ToolRun,
    ToolTable,
    resolve_binary,
    rule,
    table_for,
)
from control_plane.runtime.tool_process import run_tool as _run_tool

__all__ = [
    "CURL",
    "CURL_EXITS",
    "CURL_RULES",
    "DEFAULT_RETRY_AFTER",
    "FFMPEG",
    "FFMPEG_RULES",
    "GIT",
    "GIT_RULES",
    "SSH",
    "SSH_RULES",
    "TLS_RULES",
    "TOOL_TABLES",
    "WGET",
    "WGET_EXITS",
    "WGET_RULES",
    "Address",
    "Classification",
    "CompiledSchema",
    "Connector",
    "EgressGrantError",
    "EgressPolicy",
    "EgressRefused",
    "ExitRule",
    "Resolver",
    "StderrClassifier",
    "StderrRule",
    "ToolFailed",
    "ToolRun",
    "ToolTable",
    "TypeRule",
    "check_destination",
    "check_schema",
    "check_url",
    "classify",
    "curl_resolve",
    "match_type_rules",
    "open_connection",
    "parse_retry_after",
    "resolve_binary",
    "rule",
    "run_tool",
    "scrub",
    "scrub_data",
    "system_resolver",
    "table_for",
    "tcp_connector",
]


def run_tool(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    tool: str | None = None,
    check: bool = True,
    table: ToolTable | None = None,
    input: bytes | None = None,
    missing_code: str = "dependency_missing",
) -> ToolRun:
    """Run ``argv`` within ``timeout`` seconds; a failed run raises its classified error.

    :param argv: the command; ``argv[0]``'s base name (or ``tool``) picks the table.
    :param timeout: seconds; past it the process group is killed and ``timeout`` raised.
    :param env: the child's whole environment (run tools with ``LC_ALL=C`` so their
        messages are the English ones the tables know; run wget without ``-q``/``-nv``,
        which hide the status line and TLS errors).
    :param cwd: the child's working directory.
    :param tool: the table to pick when ``argv[0]`` is not the tool's name.
    :param check: raise on a non-zero exit status (default); ``False`` returns the
        :class:`ToolRun` whatever the status, for a pack that reads stderr itself.
    :param table: a :class:`ToolTable` to use instead of the built-in one for the tool.
    :param input: bytes written to the child's stdin.
    :param missing_code: the code raised when the executable is missing or not
        executable (``dependency_missing``, a well-known pack code; a pack that does
        not declare it gets ``internal_error``).
    :return: the finished run (stdout bytes, decoded stderr, exit status).
    :raises PackError: the matched rule's code, ``timeout`` or ``missing_code``.
    :raises ToolFailed: the tool failed and no rule matched (``internal_error``).
    """
    return _run_tool(
        argv,
        timeout=timeout,
        env=env,
        cwd=cwd,
        tool=tool,
        missing_code=missing_code,
        check=check,
        table=table,
        input=input,
    )
