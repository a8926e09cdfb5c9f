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

from control_plane._features.libraries._data import type_rules
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

#: ``[name.types]`` of ``tables.toml``, asked in this order: httpx (it wraps httpcore) then
#: httpcore, requests then urllib3, most specific class first. GitPython's rows are its
#: ``Repo()`` of a path that does not exist or is no repository; its ``GitCommandError`` is
#: a tool run (``control_plane._kernel.classifiers.subprocess.TOOL_RUNS``).
_TABLES = tuple(
    (name, type_rules(name)) for name in ("httpx", "requests", "aiohttp", "xmlrpc", "gitpython")
)
HTTPX_TYPES, REQUESTS_TYPES, AIOHTTP_TYPES, XMLRPC_TYPES, GITPYTHON_TYPES = (t for _, t in _TABLES)


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """The first row naming a class of ``exc``'s MRO, library by library."""
    return next((f for p, t in _TABLES if (f := match_type_rules(exc, t, p)) is not None), None)
