"""Tools for pack authors: run a tool and classify its failure, scrub text, parse HTTP hints.

* :func:`run_tool` runs a subprocess under the call's deadline (process group killed on
  timeout) and, with a :class:`StderrClassifier`, turns a failed run into the declared
  code; :data:`GIT` and :data:`SSH` are the shipped stderr tables, :func:`rule` builds one;
* :func:`scrub` / :func:`scrub_data` replace secrets in text a pack builds itself (the
  control plane scrubs everything that leaves it anyway);
* :func:`parse_retry_after` reads an HTTP ``Retry-After`` value;
* :class:`CompiledSchema` / :func:`check_schema` validate documents with the same engine
  the control plane uses.
"""

from control_plane.core.classify import (
    DEFAULT_RETRY_AFTER,
    Classification,
    classify,
    parse_retry_after,
)
from control_plane.core.redact import scrub, scrub_data
from control_plane.core.schema import CompiledSchema, check_schema
from control_plane.core.stderr import (
    GIT,
    GIT_RULES,
    SSH,
    SSH_RULES,
    StderrClassifier,
    StderrRule,
    ToolFailed,
    ToolRun,
    resolve_binary,
    rule,
    run_tool,
)

__all__ = [
    "DEFAULT_RETRY_AFTER",
    "GIT",
    "GIT_RULES",
    "SSH",
    "SSH_RULES",
    "Classification",
    "CompiledSchema",
    "StderrClassifier",
    "StderrRule",
    "ToolFailed",
    "ToolRun",
    "check_schema",
    "classify",
    "parse_retry_after",
    "resolve_binary",
    "rule",
    "run_tool",
    "scrub",
    "scrub_data",
]
