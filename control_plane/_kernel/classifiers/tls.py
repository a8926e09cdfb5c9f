"""TLS failures (``ssl``, and the same OpenSSL reasons quoted by wrappers).

What a TLS failure means depends on *whose* certificate failed and *where*:

* the server's certificate failed our verification (expired, self-signed, unknown CA,
  wrong host name) -> ``auth_failed``: the peer could not prove who it is, and retrying
  will not change its certificate (never a retryable code);
* the server rejected *our* client certificate (alerts ``CERTIFICATE_REQUIRED``,
  ``UNKNOWN_CA``, ``BAD_CERTIFICATE``, ...) -> ``auth_failed``;
* a local TLS configuration error (a key that does not match its certificate, a CA file
  that is not PEM) is not a network failure at all -> ``internal_error``;
* so is a certificate, key or CA file of that configuration that is missing or unreadable:
  ``SSLContext.load_cert_chain`` / ``load_verify_locations`` (called by
  ``ssl.create_default_context(cafile=...)``, httpx's ``cert=``/``verify=``, ...) raise
  ``FileNotFoundError`` / ``PermissionError`` with no file name, which the type table
  would make ``not_found`` / ``auth_failed`` -- "the resource the caller asked for does
  not exist", "the downstream rejected the credentials": both send an agent down the wrong
  path, since the pack's own setup is broken and no input the caller can change will fix
  it -> ``internal_error`` (as curl's exit 77, "problem with the CA cert"). Recognised by
  where it was raised: the innermost frame of the traceback holds the ``ssl.SSLContext``
  being loaded, or was calling one of its loading methods (``load_cert_chain``,
  ``load_verify_locations``, ``load_dh_params``; read from the frame's bytecode, so a
  context held on an object, ``self.ctx.load_cert_chain(path)``, is recognised too). A
  file the pack reads itself (``open(cert_path)``, then ``cadata=``) is not: ``open()``
  names the file, and nothing in the exception tells the pack's own configuration from a
  path the caller gave, so it keeps the type table's ``not_found``;
* a protocol or version mismatch (TLS spoken to a plain-text port, no shared version or
  cipher) is permanent -> ``internal_error``;
* the connection closed mid-handshake (``SSLEOFError``) -> ``network_error``.

Wrappers that cut the exception chain (httpx's ``ConnectError``) still quote the OpenSSL
reason (``[SSL: CERTIFICATE_VERIFY_FAILED]``); the same table is applied to that text. Not
to a gRPC error's text: its status decides, and the grpc plugin applies this table only to
grpc core's own words for a failed handshake of the channel (a server's details may quote
a TLS failure of *its* upstream).
"""

from __future__ import annotations

import errno
import re
import ssl
from collections.abc import Mapping

from control_plane._kernel.classifiers import sockets, subprocess
from control_plane._kernel.classifiers._data import DATA, code_table
from control_plane._kernel.classifiers._frames import frames, locals_of, names_called
from control_plane._kernel.classify import (
    Classification,
    class_names,
    exception_text,
    safe_attr,
)
from control_plane._kernel.hookspecs import hookimpl

__all__ = ["REASON_CODES", "classify_exception", "tls_classification"]

PLUGIN = "tls"

_CLOSED = "the connection closed during the TLS exchange"
_CONFIG_FILE = (
    "a certificate, key or CA file of the local TLS configuration is missing or unreadable"
)

#: OpenSSL reason (``SSLError.reason``, or quoted as ``[SSL: REASON]``) -> (code, message).
REASON_CODES: Mapping[str, tuple[str, str]] = code_table("tls", "reason_codes")

#: Texts quoting a reason: ``[SSL: REASON]``, ``[X509: REASON]``, BoringSSL's ``:REASON``.
_QUOTED = re.compile(
    r"\[(?:SSL|X509|PEM)(?::\s*)?([A-Z0-9_]+)\]|(?:SSL routines|error:[0-9A-Fa-f]+):[^:\s]*:?"
    r"([A-Z0-9_]{6,})"
)
#: Texts naming a verification failure without an OpenSSL reason (gRPC core, curl, Go):
#: ``verify_texts`` of ``[tls]`` in ``tables.toml``.
_VERIFY_TEXT = re.compile("|".join(DATA["tls"]["verify_texts"]), re.IGNORECASE)


def _lookup(reason: object) -> tuple[str, str] | None:
    if not isinstance(reason, str):
        return None
    return REASON_CODES.get(reason.upper())


def tls_classification(text: str) -> tuple[str, str] | None:
    """``(code, message)`` for a text quoting an OpenSSL reason or a verification failure."""
    for found in _QUOTED.finditer(text):
        hit = _lookup(found.group(1) or found.group(2))
        if hit is not None:
            return hit
    if _VERIFY_TEXT.search(text):
        return REASON_CODES["CERTIFICATE_VERIFY_FAILED"]
    return None


#: What loading a missing or unreadable file into an ``SSLContext`` raises (no file name).
_FILE_ERRNOS = frozenset({errno.ENOENT, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EISDIR})


#: ``SSLContext``'s methods (in C) that read certificate, key, CA or DH parameter files.
_LOADERS = frozenset({"load_cert_chain", "load_verify_locations", "load_dh_params"})


def _loading_tls_files(exc: BaseException) -> bool:
    """Whether ``exc`` is a file error raised while an ``SSLContext`` loaded its files: no
    file name (``_ssl`` sets only ``errno``), raised where the innermost frame holds the
    context or calls one of its loading methods (:data:`_LOADERS` among the names its code
    uses: a context held on an object, ``self.ctx.load_cert_chain(path)``), and not a Unix
    socket connect or a program's exec (which fail with the same ``ENOENT``)."""
    if not isinstance(exc, OSError) or isinstance(exc, ssl.SSLError):
        return False
    if safe_attr(exc, "errno") not in _FILE_ERRNOS or safe_attr(exc, "filename") is not None:
        return False
    innermost = frames(exc)[:1]
    holds = any(isinstance(v, ssl.SSLContext) for f in innermost for v in locals_of(f).values())
    if not holds and not names_called(exc) & _LOADERS:
        return False
    return sockets.frame_origin(exc) is None and subprocess.frame_origin(exc) is None


def _from_grpc(exc: BaseException) -> bool:
    """Whether ``exc`` is a gRPC error: its status details may quote a TLS failure of the
    server's own upstream, which is not ours to classify by text."""
    return any(m == "grpc" or m.startswith("grpc.") for m, _ in class_names(type(exc)))


def _result(hit: tuple[str, str], rule: str) -> Classification:
    return Classification(code=hit[0], message=hit[1], rule=f"{PLUGIN}:{rule}")


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """``ssl.SSLError`` by ``reason``; a TLS file that could not be loaded; any exception
    quoting an OpenSSL reason by text."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        return _result(REASON_CODES["CERTIFICATE_VERIFY_FAILED"], "CERTIFICATE_VERIFY_FAILED")
    if isinstance(exc, ssl.SSLError):
        reason = safe_attr(exc, "reason")
        hit = _lookup(reason)
        if hit is not None:
            return _result(hit, str(reason))
        if isinstance(exc, ssl.SSLEOFError | ssl.SSLZeroReturnError):
            return _result(("network_error", _CLOSED), type(exc).__name__)
        found = tls_classification(exception_text(exc))
        if found is not None:
            return _result(found, "text")
        # An OpenSSL error nobody has documented here: honest, never a guess; weak, so an
        # SSLError it wraps (aiohttp's ClientConnectorSSLError wraps the real one) decides.
        return Classification(
            code="internal_error",
            message="TLS failed for a reason not classified",
            rule=f"{PLUGIN}:unknown",
            weak=True,
        )
    if isinstance(exc, OSError) and _loading_tls_files(exc):
        return _result(("internal_error", _CONFIG_FILE), "config_file")
    text = exception_text(exc)
    if "SSL" in text or "certificate" in text.lower() or "X509" in text:
        if _from_grpc(exc):
            return None  # its status decides (the grpc plugin), not TLS words in its details
        found = tls_classification(text)
        if found is not None:
            return _result(found, "text")
    return None
