"""Tools for pack authors: run a tool and classify its failure, scrub text, parse HTTP hints.

::

    from control_plane.tools import run_tool

    done = run_tool(["curl", "-sS", "--fail", url], timeout=ctx.remaining())
    # curl exit 6 -> network_error, 28 -> timeout, 22 + "returned error: 404" -> not_found
"""

from control_plane._features.grants.connect import (
    Connector,
    check_destination,
    check_url,
    open_connection,
    system_resolver,
    tcp_connector,
)
from control_plane._features.grants.tool_process import run_tool
from control_plane._kernel.classify import (
    DEFAULT_RETRY_AFTER,
    Classification,
    TypeRule,
    classify,
    match_type_rules,
    parse_retry_after,
)
from control_plane._kernel.egress import (
    Address,
    EgressGrantError,
    EgressPolicy,
    EgressRefused,
    Resolver,
    curl_resolve,
)
from control_plane._kernel.redact import scrub, scrub_data
from control_plane._kernel.schema import CompiledSchema, check_schema
from control_plane._kernel.stderr import (
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
