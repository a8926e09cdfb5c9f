"""git.ls_remote and git.clone: hand-written JSON Schemas (2020-12) and pack codes."""

from __future__ import annotations

from typing import Any

from control_plane import CodeDoc, error_schema
from packs.credentials import credential_schema

__all__ = [
    "CLONE_CODES",
    "CLONE_INPUT",
    "CLONE_OUTPUT",
    "CLONE_VOCABULARY",
    "LS_REMOTE_CODES",
    "LS_REMOTE_INPUT",
    "LS_REMOTE_OUTPUT",
    "LS_REMOTE_VOCABULARY",
]

DRAFT = "https://json-schema.org/draft/2020-12/schema"

_DEPENDENCY_MISSING = CodeDoc(
    description=(
        "The git executable is not installed on the host running the pack (or "
        "CAPABILITY_PACKS_GIT points nowhere); the handler did not proceed."
    ),
    retryable=False,
    recovery_hint="Ask the operator to install git (Debian package git) on the pack host.",
)

#: The one declaration of each pack's codes, in order (``None``: a baseline code,
#: documented by the vocabulary); the output schemas' enums are derived from them.
LS_REMOTE_CODES: dict[str, CodeDoc | None] = {
    "auth_failed": None,
    "not_found": None,
    "rate_limited": None,
    "timeout": None,
    "network_error": None,
    "dependency_missing": _DEPENDENCY_MISSING,
}
CLONE_CODES: dict[str, CodeDoc | None] = {
    **LS_REMOTE_CODES,
    "destination_unusable": CodeDoc(
        description=(
            "dest exists and is not an empty directory, or git could not create or write "
            "the working tree there; nothing was cloned."
        ),
        retryable=False,
        recovery_hint="Pass an empty or not-yet-existing directory as dest, or omit dest.",
    ),
}
LS_REMOTE_VOCABULARY = list(LS_REMOTE_CODES)
CLONE_VOCABULARY = list(CLONE_CODES)

_CREDENTIAL = credential_schema(
    "For http(s) remotes: sent as an HTTP header through git's environment, "
    "never in argv, never echoed back. Ignored for ssh, git:// and local remotes."
)

_URL: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": 4096,
    "pattern": "^[^\\-\\x00-\\x1f][^\\x00-\\x1f]*$",
    "not": {"pattern": "^[A-Za-z0-9+.-]+::"},
    "description": "Remote: https://, http://, ssh://, git://, file://, user@host:path or a "
    "local path (not a transport helper such as ext::). user:password@ in an http(s) URL "
    "is moved into a credential.",
}

_TIMEOUT: dict[str, Any] = {
    "type": "number",
    "exclusiveMinimum": 0,
    "maximum": 3600,
    "description": "Seconds for git (default 120); the call's deadline caps it.",
}


def _error(codes: dict[str, CodeDoc | None]) -> dict[str, Any]:
    return error_schema(codes, retry_after={"type": "number", "minimum": 0})


LS_REMOTE_INPUT: dict[str, Any] = {
    "$schema": DRAFT,
    "title": "git.ls_remote input",
    "type": "object",
    "additionalProperties": False,
    "required": ["url"],
    "properties": {
        "url": _URL,
        "patterns": {
            "type": "array",
            "maxItems": 64,
            # One ref name: at most 1024 characters (git's argv: a longer one is refused by exec).
            "items": {
                "type": "string",
                "minLength": 1,
                "maxLength": 1024,
                "pattern": "^[^\\-\\x00-\\x1f]",
            },
            "description": "Ref patterns (e.g. main, refs/tags/v1.0); none matching is not_found.",
        },
        "heads": {"type": "boolean", "description": "Only branches (refs/heads)."},
        "tags": {"type": "boolean", "description": "Only tags (refs/tags)."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 100000,
            "description": "Most refs returned (default 1000); truncated says if cut.",
        },
        "credential": _CREDENTIAL,
        "timeout": _TIMEOUT,
    },
}

_SHA = {"type": "string", "pattern": "^[0-9a-f]{40}([0-9a-f]{24})?$"}

LS_REMOTE_OUTPUT: dict[str, Any] = {
    "$schema": DRAFT,
    "title": "git.ls_remote output",
    "type": "object",
    "additionalProperties": False,
    "required": ["url", "refs", "count", "truncated"],
    "properties": {
        "url": {"type": "string", "description": "The remote, credentials removed."},
        "head": {
            "description": "What HEAD points at, when the remote says.",
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"sha": _SHA, "target": {"type": ["string", "null"]}},
                },
            ],
        },
        "refs": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "sha"],
                "properties": {"name": {"type": "string"}, "sha": _SHA},
            },
        },
        "count": {
            "type": "integer",
            "minimum": 0,
            "description": "Refs read: all of them, or limit + 1 when truncated (git is "
            "stopped there, so memory stays bounded whatever the remote holds).",
        },
        "truncated": {"type": "boolean"},
        "error": _error(LS_REMOTE_CODES),
    },
}

CLONE_INPUT: dict[str, Any] = {
    "$schema": DRAFT,
    "title": "git.clone input",
    "type": "object",
    "additionalProperties": False,
    "required": ["url"],
    "properties": {
        "url": _URL,
        "ref": {
            "type": "string",
            "minLength": 1,
            "maxLength": 255,
            "pattern": "^[^\\-\\x00-\\x1f][^\\x00-\\x1f]*$",
            "description": "Branch or tag to check out (default: the remote's HEAD).",
        },
        "dest": {
            "type": "string",
            "minLength": 1,
            "pattern": "^[^\\x00-\\x1f]+$",
            "description": "Empty or not-yet-existing directory (default: a new temporary "
            "directory, which the caller then owns).",
        },
        "depth": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1000,
            "description": "History depth (default 1: a shallow clone).",
        },
        "credential": _CREDENTIAL,
        "timeout": _TIMEOUT,
    },
}

CLONE_OUTPUT: dict[str, Any] = {
    "$schema": DRAFT,
    "title": "git.clone output",
    "type": "object",
    "additionalProperties": False,
    "required": ["url", "path", "commit", "depth"],
    "properties": {
        "url": {"type": "string", "description": "The remote, credentials removed."},
        "path": {"type": "string", "description": "Absolute path of the working tree."},
        "commit": _SHA,
        "branch": {
            "type": ["string", "null"],
            "description": "Checked-out branch; null when a tag left HEAD detached.",
        },
        "ref": {"type": ["string", "null"], "description": "The ref asked for, if any."},
        "depth": {"type": "integer", "minimum": 1},
        "error": _error(CLONE_CODES),
    },
}
