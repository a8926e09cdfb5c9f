"""gRPC downstreams: ``grpc.RpcError`` / ``grpc.aio.AioRpcError`` by status code.

``code()`` is a *method* on gRPC errors, so the generic HTTP-status rule cannot see it.
Every ``grpc.StatusCode`` has a row in :data:`STATUS_CODES`; ``RESOURCE_EXHAUSTED``
carrying a ``google.rpc.RetryInfo`` in ``grpc-status-details-bin`` becomes
``rate_limited`` with that ``retry_after``. Two refinements read the status details:
a "message larger than max" is a size limit, not throttling (other ``RESOURCE_EXHAUSTED``
texts, "rate exceeds the limit" included, are throttling); an ``UNAVAILABLE`` (``INTERNAL``,
``UNKNOWN``) in which grpc core reports that *this channel's* TLS handshake failed ("Tls
handshake failed (TSI_...)": :data:`CHANNEL_HANDSHAKE`) is the TLS table's answer, and one
raised because a call-credentials plugin failed ("Getting metadata from plugin failed") is
``auth_failed``. Details that merely quote a TLS failure -- a server reporting that *its*
upstream's certificate failed, or a handler whose ``SSLError`` escaped -- keep the status's
code (``UNAVAILABLE`` ``network_error``, ``UNKNOWN`` ``internal_error``): the failure is
the server's, transient or a bug, and our credentials are fine.

A known limit: a gRPC proxy that forwards *its own* channel's failure word for word
(``context.abort(e.code(), e.details())``) gets the TLS answer (``auth_failed``), though
the certificate that failed is its upstream's. Nothing received tells the two apart: with
grpcio 1.85 the status, the details, ``debug_error_string()`` and the initial and trailing
metadata of the forwarded failure are identical to those of a handshake our channel failed
(``tests/test_classify.py`` checks it live; older grpc core said "Error received from peer"
in the debug string, this one no longer does). The target of the failing address in the
text could be compared with the channel's, but the channel is not reachable from the error
and a DNS target cannot be compared without resolving it.

The ``grpc`` package is not imported here: errors are recognised by class name and
module; ``google.rpc`` (a runtime dependency) is imported only to decode status details.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from control_plane._features.libraries._data import DATA, code_table, type_rules
from control_plane._kernel.classifiers.tls import tls_classification
from control_plane._kernel.classify import (
    Classification,
    class_names,
    match_type_rules,
    safe_attr,
)
from control_plane._kernel.evidence import decide, weigh
from control_plane._kernel.fact_rules import Verdict
from control_plane._kernel.facts import Facts
from control_plane._kernel.hookspecs import hookimpl

__all__ = [
    "CHANNEL_HANDSHAKE",
    "EXCEPTION_MODULES",
    "FACTS_ATTR",
    "STATUS_CODES",
    "TYPES",
    "classify_exception",
    "mark_status",
    "retry_info_seconds",
    "status_facts",
]

#: Attribute holding ``(status name, details, retry_after)`` recorded by
#: :func:`status_facts` before a gRPC error leaves an isolated worker (its ``code()``
#: needs the live call state, which does not cross the process boundary).
FACTS_ATTR = "capability_packs_grpc"

PLUGIN = "grpc"
#: Asked only about exceptions of these modules' classes (runtime.plugins.EXCEPTION_MODULES).
EXCEPTION_MODULES = ("grpc",)

#: Every gRPC status -> (baseline code, fixed message). ``OK`` never arrives as an error.
STATUS_CODES: Mapping[str, tuple[str, str]] = code_table("grpc", "status_codes")

TYPES = type_rules("grpc")

#: A message over the size limit, never throttling texts that say "exceeds ... limit" of a
#: request rate or quota (``too_large`` of ``[grpc]`` in ``tables.toml``).
_TOO_LARGE = re.compile("|".join(DATA["grpc"]["too_large"]), re.IGNORECASE)
#: grpc core's details when a call-credentials plugin (``metadata_call_credentials``)
#: raised or reported an error: no credentials could be attached to the call.
_CALL_CREDENTIALS = re.compile(r"^Getting metadata from plugin failed")
#: grpc core's words when the channel's own TLS handshake failed ("failed to connect to all
#: addresses; last error: UNKNOWN: ipv4:...: Tls handshake failed (TSI_PROTOCOL_FAILURE):
#: SSL_ERROR_SSL: ...CERTIFICATE_VERIFY_FAILED"; "Ssl handshake failed" in older releases).
CHANNEL_HANDSHAKE = re.compile(r"\b(?:Tls|Ssl) handshake failed\b|\bTSI_[A-Z_]+\b")
_STATUS_DETAILS_KEY = "grpc-status-details-bin"
_RETRY_INFO_TYPE = "type.googleapis.com/google.rpc.RetryInfo"


def _is_rpc_error(exc: BaseException) -> bool:
    return any(
        name in {"RpcError", "AioRpcError"} and (module == "grpc" or module.startswith("grpc."))
        for module, name in class_names(type(exc))
    )


def _call(exc: BaseException, name: str) -> Any:
    method = safe_attr(exc, name)
    if not callable(method):
        return None
    try:
        return method()
    # Hostile input: a third-party RpcError's accessor may raise anything.
    except Exception:  # noqa: BLE001
        return None


def _pairs(metadata: Any) -> Iterable[tuple[Any, Any]]:
    if metadata is None:
        return ()
    pairs: list[tuple[Any, Any]] = []
    try:
        for item in metadata:
            if isinstance(item, tuple) and len(item) == 2:
                pairs.append((item[0], item[1]))
            else:
                key, value = safe_attr(item, "key"), safe_attr(item, "value")
                if key is not None:
                    pairs.append((key, value))
            if len(pairs) > 64:
                break
    # Hostile input: metadata objects may raise while iterating.
    except Exception:  # noqa: BLE001
        return pairs
    return pairs


def retry_info_seconds(trailing_metadata: Any) -> float | None:
    """``RetryInfo.retry_delay`` in seconds from ``grpc-status-details-bin``, if present."""
    for key, value in _pairs(trailing_metadata):
        if key != _STATUS_DETAILS_KEY or not isinstance(value, bytes):
            continue
        from google.protobuf.message import DecodeError
        from google.rpc import error_details_pb2, status_pb2

        status = status_pb2.Status()
        try:
            status.ParseFromString(value)
        except DecodeError:
            return None
        for detail in status.details:
            if detail.type_url != _RETRY_INFO_TYPE:
                continue
            info = error_details_pb2.RetryInfo()
            try:
                info.ParseFromString(detail.value)
            except DecodeError:
                return None
            seconds = info.retry_delay.seconds + info.retry_delay.nanos / 1e9
            return max(0.0, float(seconds))
    return None


def status_facts(exc: BaseException) -> tuple[str, str, float | None] | None:
    """``(status name, details, RetryInfo seconds)`` of a live gRPC error, else ``None``."""
    if not _is_rpc_error(exc):
        return None
    recorded = safe_attr(exc, FACTS_ATTR)
    if isinstance(recorded, tuple) and len(recorded) == 3:
        name, details, retry = recorded
        if isinstance(name, str) and isinstance(details, str):
            return name, details, retry if isinstance(retry, int | float) else None
    name = safe_attr(_call(exc, "code"), "name")
    if not isinstance(name, str):
        return None
    details = _call(exc, "details")
    retry = retry_info_seconds(_call(exc, "trailing_metadata"))
    return name, details if isinstance(details, str) else "", retry


def mark_status(exc: BaseException) -> None:
    """Record :func:`status_facts` of a live gRPC error as data on ``exc`` (see
    :data:`FACTS_ATTR`), before it leaves an isolated worker."""
    facts = status_facts(exc)
    if facts is not None:
        # Some exception types refuse new attributes (slots); the facts are then lost.
        with contextlib.suppress(AttributeError, TypeError):
            setattr(exc, FACTS_ATTR, facts)


def _details_verdict(text: str, retry_info: float | None) -> Verdict | None:
    """The engine's reading of a status's details alone (its vocabulary and quota windows:
    "quota exceeded ... per minute" is a rate limit, "space exceeded" a quota)."""
    facts = Facts(text=text[:2048])
    return decide(weigh(facts), facts, retry_info) if text else None


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """A gRPC error by its status code (see :data:`STATUS_CODES`)."""
    facts = status_facts(exc)
    if facts is None:
        return match_type_rules(exc, TYPES, PLUGIN)
    name, text, retry_info = facts
    if name not in STATUS_CODES:
        return None
    code, message = STATUS_CODES[name]
    rule = f"{PLUGIN}:{name}"
    retry_after: float | None = None
    if name == "RESOURCE_EXHAUSTED":
        if _TOO_LARGE.search(text):
            code, message = "internal_error", "a gRPC message exceeded the size limit"
            rule += ":too_large"
        elif (said := _details_verdict(text, retry_info)) and said.code == "quota_exhausted":
            code, message = said.code, said.message  # "database space exceeded": a quota
            rule += ":quota"
        elif retry_info is not None:  # without RetryInfo: the default retry_after
            retry_after = retry_info
            rule += ":retry_info"
    elif name == "UNAVAILABLE" and _CALL_CREDENTIALS.match(text):
        code, message = "auth_failed", "the gRPC call credentials could not be obtained"
        rule += ":call_credentials"
    elif name in {"UNAVAILABLE", "INTERNAL", "UNKNOWN"} and CHANNEL_HANDSHAKE.search(text):
        tls = tls_classification(text)
        if tls is not None:
            code, message = tls
            rule += ":tls"
    return Classification(code=code, message=message, retry_after=retry_after, rule=rule)
