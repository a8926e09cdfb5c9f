"""Libraries whose exceptions say what failed by their class alone: httpx and httpcore (and
their numbered forks, ``httpx2``, underneath the OpenAI and Anthropic SDKs), requests and
urllib3 (underneath boto3, docker, kubernetes...), aiohttp, ``xmlrpc.client``, GitPython. Their rows
are data (``tables.toml``); the libraries are not imported.

Connection-level errors are *weak*: the exception they wrap, when there is one, knows more
(a refused connection, a DNS or TLS failure, a missing Unix socket); the chain walk follows
``__cause__``, ``args[0]`` (httpcore re-raises ``from None``), ``reason`` (urllib3's
``MaxRetryError``) and ``os_error`` (aiohttp). Timeouts need no row where the words of the
class name say it (``control_plane._kernel.evidence.name_proposal``); errors that carry a
response or a status (httpx ``HTTPStatusError``, aiohttp ``ClientResponseError``, xmlrpc
``ProtocolError.errcode``) are left to the extracted facts.
"""

from __future__ import annotations

from control_plane._kernel.classifiers._data import type_rules
from control_plane._kernel.classify import Classification, match_type_rules
from control_plane._kernel.hookspecs import hookimpl

__all__ = [
    "AIOHTTP_TYPES",
    "GITPYTHON_TYPES",
    "HTTPX_TYPES",
    "REQUESTS_TYPES",
    "XMLRPC_TYPES",
    "classify_exception",
]

#: httpx first (it wraps httpcore), then httpcore, most specific class first.
HTTPX_TYPES = type_rules("httpx")
#: requests first, then urllib3; most specific class first.
REQUESTS_TYPES = type_rules("requests")
AIOHTTP_TYPES = type_rules("aiohttp")
XMLRPC_TYPES = type_rules("xmlrpc")
#: GitPython's ``Repo()`` of a path that does not exist or is no repository (git's own
#: "not a git repository" is ``not_found`` too); its ``GitCommandError`` is a tool run
#: (``control_plane._kernel.classifiers.subprocess.TOOL_RUNS``).
GITPYTHON_TYPES = type_rules("gitpython")
_TABLES = (
    ("httpx", HTTPX_TYPES),
    ("requests", REQUESTS_TYPES),
    ("aiohttp", AIOHTTP_TYPES),
    ("xmlrpc", XMLRPC_TYPES),
    ("gitpython", GITPYTHON_TYPES),
)


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """The first row naming a class of ``exc``'s MRO, library by library."""
    for plugin, rules in _TABLES:
        found = match_type_rules(exc, rules, plugin)
        if found is not None:
            return found
    return None
