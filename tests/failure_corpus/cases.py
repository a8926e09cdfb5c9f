"""The corpus: each case makes one real library or tool fail once, on loopback.

A case names its class (the library or tool), the codes that are right for the failure,
and a one-line reason. ``internal_error`` is listed only where it *is* the right answer
(HTTP 501, a local TLS misconfiguration, a gRPC ``INTERNAL``); elsewhere the scorer counts
it apart: honest, but not the specific code an agent can act on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from failure_corpus.servers import LOOPBACK, PLANTED, RETRY_AFTER, UNRESOLVABLE_HOST, Endpoints

AUTH = frozenset({"auth_failed"})
NF = frozenset({"not_found"})
TO = frozenset({"timeout"})
RL = frozenset({"rate_limited"})
NET = frozenset({"network_error"})
INT = frozenset({"internal_error"})
DEP = frozenset({"dependency_missing"})
NET_OR_INT = NET | INT
#: A server certificate that fails verification: never a retryable code.
CERT = frozenset({"auth_failed"})

T = 0.4  # the timeout of cases that provoke one (seconds)


@dataclass(frozen=True)
class Case:
    """One failure to provoke: ``run(endpoints)`` must raise it."""

    id: str
    klass: str
    expect: frozenset[str]
    reason: str
    run: Callable[[Endpoints], Any]
    #: The ``retry_after`` the classification must carry (rate-limited cases).
    retry_after: float | None = None
    #: In the sample that is wrapped, grouped and raised inside a served pack.
    sample: bool = False


CASES: list[Case] = []


def case(
    id: str,
    klass: str,
    expect: frozenset[str],
    reason: str,
    run: Callable[[Endpoints], Any],
    *,
    retry_after: float | None = None,
    sample: bool = False,
) -> None:
    CASES.append(Case(f"{klass}:{id}", klass, expect, reason, run, retry_after, sample))


def provoke(
    c: Case, ep: Endpoints, loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None
) -> BaseException:
    """The exception ``c`` raises (``AssertionError`` if it did not fail); an async case
    runs on a new loop of ``loop_factory`` (default: the standard library's)."""
    try:
        result = c.run(ep)
        if asyncio.iscoroutine(result):
            with asyncio.Runner(loop_factory=loop_factory) as runner:
                runner.run(result)
    except BaseException as exc:
        return exc
    return AssertionError(f"case {c.id} did not fail")


async def provoke_on_loop(c: Case, ep: Endpoints) -> BaseException:
    """As :func:`provoke`, but an async case runs on the running loop (a sync one in a
    thread, so it does not block the loop)."""
    try:
        result = await asyncio.to_thread(c.run, ep)
        if asyncio.iscoroutine(result):
            await result
    except BaseException as exc:
        return exc
    return AssertionError(f"case {c.id} did not fail")


# -- shared expectations ------------------------------------------------------------

#: HTTP status -> (codes, reason).
STATUSES: dict[int, tuple[frozenset[str], str]] = {
    401: (AUTH, "credentials missing or rejected"),
    403: (AUTH, "credentials lack permission"),
    404: (NF, "the resource does not exist"),
    408: (TO, "the server timed out waiting for the request"),
    410: (NF, "the resource is gone"),
    429: (RL, "throttled, with Retry-After"),
    500: (NET, "a server-side failure, retryable"),
    501: (INT, "method not implemented: permanent, not a retryable network error"),
    502: (NET, "a bad gateway, retryable"),
    503: (RL, "unavailable with Retry-After: throttling"),
    504: (TO, "a gateway timed out"),
    505: (INT, "HTTP version not supported: permanent"),
}
SAMPLE_STATUSES = {401, 404, 429, 503, 501}


def _retry(status: int) -> float | None:
    return float(RETRY_AFTER) if status in {429, 503} else None


def _tls_client(
    ep: Endpoints, *, cert: str | None = None, key: str | None = None
) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=ep.files["ca"])
    if cert is not None:
        ctx.load_cert_chain(cert, key)
    return ctx


def _client_cert(ep: Endpoints) -> tuple[str, str]:
    return ep.files["client_cert"], ep.files["client_key"]


def _rogue_cert(ep: Endpoints) -> tuple[str, str]:
    return ep.files["rogue_client_cert"], ep.files["rogue_client_key"]


def _https(ep: Endpoints, name: str, host: str = LOOPBACK) -> str:
    return f"https://{host}:{ep.tls[name]}/"


# TLS scenarios shared by the HTTP libraries: name -> (port key, client, codes, reason).
TLS_SCENARIOS: dict[str, tuple[str, str, frozenset[str], str]] = {
    "tls_untrusted": ("untrusted", "plain", CERT, "server cert from an untrusted CA"),
    "tls_expired": ("expired", "plain", CERT, "server cert expired"),
    "tls_wronghost": ("wronghost", "plain", CERT, "server cert for another host"),
    "tls_client_cert_required": (
        "mtls",
        "plain",
        AUTH,
        "server requires a client cert (CERTIFICATE_REQUIRED alert)",
    ),
    "tls_client_cert_unknown_ca": (
        "mtls",
        "rogue",
        AUTH,
        "server rejects the client cert's CA (UNKNOWN_CA alert)",
    ),
}


# -- httpx --------------------------------------------------------------------------


def _httpx_cases() -> None:
    import httpx

    def get(url: str, **kw: Any) -> Callable[[Endpoints], Any]:
        def run(ep: Endpoints) -> None:
            with httpx.Client(timeout=kw.pop("timeout", 5.0), **kw) as client:
                client.get(url.format(ep=ep)).raise_for_status()

        return run

    for status, (codes, why) in STATUSES.items():

        def run(ep: Endpoints, status: int = status) -> None:
            with httpx.Client(timeout=5.0) as client:
                client.get(ep.url(f"/status/{status}")).raise_for_status()

        case(
            f"http_{status}",
            "httpx",
            codes,
            why,
            run,
            retry_after=_retry(status),
            sample=status in SAMPLE_STATUSES,
        )

    def transport(
        name: str,
        codes: frozenset[str],
        why: str,
        fn: Callable[[Endpoints], Any],
        sample: bool = False,
    ) -> None:
        case(name, "httpx", codes, why, fn, sample=sample)

    transport(
        "refused",
        NET,
        "nothing listens on the port",
        lambda ep: httpx.get(ep.url("/", ep.refused), timeout=5),
        sample=True,
    )
    transport(
        "dns",
        NET,
        "host name does not resolve",
        lambda ep: httpx.get(f"http://{UNRESOLVABLE_HOST}/", timeout=5),
    )

    def bug_in_recovery(ep: Endpoints) -> None:
        mirrors: dict[str, str] = {}
        try:
            httpx.get(ep.url("/", ep.refused), timeout=5)
        except httpx.ConnectError:
            httpx.get(mirrors["fallback"], timeout=5)  # KeyError: a bug in the recovery

    transport(
        "bug_in_recovery",
        INT,
        "a KeyError raised in the except block handling a refused connection: a bug in "
        "the recovery code, not a retryable network failure",
        bug_in_recovery,
    )
    transport(
        "connect_timeout",
        TO,
        "connect() hangs on a full backlog",
        lambda ep: httpx.get(ep.url("/", ep.backlog), timeout=T),
        sample=True,
    )
    transport(
        "read_timeout",
        TO,
        "server accepts, never answers",
        lambda ep: httpx.get(ep.url("/", ep.raw["silent"]), timeout=T),
    )
    transport(
        "reset",
        NET,
        "server resets the connection",
        lambda ep: httpx.get(ep.url("/", ep.raw["reset"]), timeout=5),
    )
    transport(
        "disconnect",
        NET,
        "server closes without a reply",
        lambda ep: httpx.get(ep.url("/", ep.raw["close_now"]), timeout=5),
    )
    transport(
        "truncated",
        NET,
        "body shorter than Content-Length",
        lambda ep: httpx.get(ep.url("/", ep.raw["truncated"]), timeout=5),
        sample=True,
    )
    transport(
        "chunked_truncated",
        NET,
        "chunked body cut mid-chunk",
        lambda ep: httpx.get(ep.url("/", ep.raw["chunked"]), timeout=5),
    )
    transport(
        "garbage",
        NET_OR_INT,
        "reply is not HTTP",
        lambda ep: httpx.get(ep.url("/", ep.raw["garbage"]), timeout=5),
    )

    transport(
        "client_cert_missing",
        INT,
        "Client(cert=) names a missing file: the pack's TLS configuration, not not_found",
        lambda ep: httpx.Client(cert=os.path.join(ep.files["tmp"], "no-such-client.pem")),
    )
    transport(
        "ca_bundle_missing",
        INT,
        "Client(verify=ssl context of a missing CA file): the pack's TLS configuration",
        lambda ep: httpx.Client(
            verify=ssl.create_default_context(
                cafile=os.path.join(ep.files["tmp"], "no-such-ca.pem")
            )
        ),
    )

    def pool_timeout(ep: Endpoints) -> None:
        limits = httpx.Limits(max_connections=1)
        with (
            httpx.Client(timeout=httpx.Timeout(5.0, pool=T), limits=limits) as client,
            client.stream("GET", ep.url("/status/200")),
        ):
            client.get(ep.url("/status/200"))

    transport("pool_timeout", TO, "no pooled connection frees up in time", pool_timeout)
    for name, (port, who, codes, why) in TLS_SCENARIOS.items():

        def run(ep: Endpoints, port: str = port, who: str = who) -> None:
            cert = None if who == "plain" else _rogue_cert(ep)
            ctx = _tls_client(ep)
            if cert:
                ctx.load_cert_chain(*cert)
            with httpx.Client(verify=ctx, timeout=5.0) as client:
                client.get(_https(ep, port))

        transport(name, codes, why, run, sample=name == "tls_client_cert_required")
    transport(
        "tls_wrong_version",
        INT,
        "https:// to a plain-HTTP port",
        lambda ep: httpx.get(ep.url("/", ep.http, "https"), verify=_tls_client(ep), timeout=5),
    )

    def key_mismatch(ep: Endpoints) -> None:
        ctx = ssl.create_default_context(cafile=ep.files["ca"])
        ctx.load_cert_chain(ep.files["client_cert"], ep.files["mismatched_key"])
        httpx.get(_https(ep, "mtls"), verify=ctx, timeout=5)

    transport(
        "tls_key_mismatch", INT, "client key does not match its cert (local config)", key_mismatch
    )

    def uds(ep: Endpoints) -> None:
        with httpx.Client(transport=httpx.HTTPTransport(uds=ep.files["uds_missing"])) as client:
            client.get("http://daemon/v1/status")

    transport(
        "uds_missing", NET, "Unix socket path absent: the daemon is not running", uds, sample=True
    )

    def uds_stale(ep: Endpoints) -> None:
        with httpx.Client(transport=httpx.HTTPTransport(uds=ep.files["uds_stale"])) as client:
            client.get("http://daemon/v1/status")

    transport("uds_refused", NET, "stale Unix socket file, nobody listening", uds_stale)

    # async client
    async def aget(url: str, timeout: float = 5.0) -> None:
        async with httpx.AsyncClient(timeout=timeout) as client:
            (await client.get(url)).raise_for_status()

    for status in (404, 429, 503):
        codes, why = STATUSES[status]
        case(
            f"async_http_{status}",
            "httpx",
            codes,
            why,
            lambda ep, s=status: aget(ep.url(f"/status/{s}")),
            retry_after=_retry(status),
        )
    case(
        "async_refused",
        "httpx",
        NET,
        "nothing listens on the port",
        lambda ep: aget(ep.url("/", ep.refused)),
    )
    case(
        "async_read_timeout",
        "httpx",
        TO,
        "server never answers",
        lambda ep: aget(ep.url("/", ep.raw["silent"]), T),
    )
    case(
        "async_truncated",
        "httpx",
        NET,
        "body shorter than Content-Length",
        lambda ep: aget(ep.url("/", ep.raw["truncated"])),
    )
    case(
        "async_connect_timeout",
        "httpx",
        TO,
        "connect() hangs on a full backlog",
        lambda ep: aget(ep.url("/", ep.backlog), T),
    )


# -- requests / urllib3 -------------------------------------------------------------


def _requests_cases() -> None:
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry

    for status, (codes, why) in STATUSES.items():

        def run(ep: Endpoints, status: int = status) -> None:
            requests.get(ep.url(f"/status/{status}"), timeout=5).raise_for_status()

        case(
            f"http_{status}",
            "requests",
            codes,
            why,
            run,
            retry_after=_retry(status),
            sample=status in SAMPLE_STATUSES,
        )

    for status in (429, 503):

        def exhausted(ep: Endpoints, status: int = status) -> None:
            retry = Retry(
                total=1,
                status_forcelist=[status],
                backoff_factor=0,
                respect_retry_after_header=False,
                allowed_methods=None,
            )
            with requests.Session() as session:
                session.mount("http://", HTTPAdapter(max_retries=retry))
                session.get(ep.url(f"/status/{status}"), timeout=5)

        expect = RL if status == 429 else NET | RL
        case(
            f"retries_exhausted_{status}",
            "requests",
            expect,
            f"urllib3 Retry gave up on {status}: the status is only in the reason",
            exhausted,
            sample=status == 429,
        )

    def get(
        port_url: Callable[[Endpoints], str], timeout: float = 5.0, **kw: Any
    ) -> Callable[[Endpoints], Any]:
        return lambda ep: requests.get(port_url(ep), timeout=timeout, **kw)

    def pool_exhausted(ep: Endpoints) -> None:
        import threading

        import urllib3

        pool = urllib3.HTTPConnectionPool(LOOPBACK, ep.raw["silent"], maxsize=1, block=True)

        def hold() -> None:
            with contextlib.suppress(Exception):
                pool.request("GET", "/", retries=False, timeout=2.0)

        busy = threading.Thread(target=hold, daemon=True)
        busy.start()  # holds the pool's only connection on a server that never answers
        deadline = time.monotonic() + 2.0
        while pool.num_connections == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        pool.urlopen("GET", "/", pool_timeout=T, retries=False)

    case(
        "urllib3_pool_empty",
        "requests",
        TO,
        "no connection of a blocking pool became free within pool_timeout",
        pool_exhausted,
    )

    case(
        "refused",
        "requests",
        NET,
        "nothing listens on the port",
        get(lambda ep: ep.url("/", ep.refused)),
        sample=True,
    )
    case(
        "dns",
        "requests",
        NET,
        "host name does not resolve",
        get(lambda ep: f"http://{UNRESOLVABLE_HOST}/"),
    )
    case(
        "connect_timeout",
        "requests",
        TO,
        "connect() hangs on a full backlog",
        get(lambda ep: ep.url("/", ep.backlog), T),
    )
    case(
        "read_timeout",
        "requests",
        TO,
        "server never answers",
        get(lambda ep: ep.url("/", ep.raw["silent"]), T),
        sample=True,
    )
    case(
        "reset",
        "requests",
        NET,
        "server resets the connection",
        get(lambda ep: ep.url("/", ep.raw["reset"])),
    )
    case(
        "disconnect",
        "requests",
        NET,
        "server closes without a reply",
        get(lambda ep: ep.url("/", ep.raw["close_now"])),
    )
    case(
        "truncated",
        "requests",
        NET,
        "body shorter than Content-Length (ChunkedEncoding/IncompleteRead)",
        get(lambda ep: ep.url("/", ep.raw["truncated"])),
    )
    case(
        "chunked_truncated",
        "requests",
        NET,
        "chunked body cut (ChunkedEncodingError)",
        get(lambda ep: ep.url("/", ep.raw["chunked"])),
        sample=True,
    )
    case(
        "garbage",
        "requests",
        NET_OR_INT,
        "reply is not HTTP",
        get(lambda ep: ep.url("/", ep.raw["garbage"])),
    )
    for name, (port, who, codes, why) in TLS_SCENARIOS.items():

        def run(ep: Endpoints, port: str = port, who: str = who) -> None:
            cert = None if who == "plain" else _rogue_cert(ep)
            requests.get(_https(ep, port), verify=ep.files["ca"], cert=cert, timeout=5)

        case(name, "requests", codes, why, run, sample=name == "tls_untrusted")
    case(
        "tls_wrong_version",
        "requests",
        INT,
        "https:// to a plain-HTTP port",
        lambda ep: requests.get(ep.url("/", ep.http, "https"), verify=ep.files["ca"], timeout=5),
    )
    case(
        "tls_ca_not_pem",
        "requests",
        INT,
        "the CA bundle is not PEM (local config)",
        lambda ep: requests.get(_https(ep, "good"), verify=ep.files["not_pem"], timeout=5),
    )
    case(
        "tls_key_mismatch",
        "requests",
        INT,
        "client key does not match its cert (local config)",
        lambda ep: requests.get(
            _https(ep, "mtls"),
            verify=ep.files["ca"],
            cert=(ep.files["client_cert"], ep.files["mismatched_key"]),
            timeout=5,
        ),
    )


# -- aiohttp ------------------------------------------------------------------------


def _aiohttp_cases() -> None:
    import aiohttp

    async def get(
        url: str, *, timeout: float = 5.0, ssl_ctx: Any = None, connector: Any = None
    ) -> None:
        tmo = aiohttp.ClientTimeout(total=timeout)
        async with (
            aiohttp.ClientSession(
                raise_for_status=True, timeout=tmo, connector=connector
            ) as session,
            session.get(url, ssl=ssl_ctx if ssl_ctx is not None else True) as resp,
        ):
            await resp.read()

    for status, (codes, why) in STATUSES.items():
        case(
            f"http_{status}",
            "aiohttp",
            codes,
            why,
            lambda ep, s=status: get(ep.url(f"/status/{s}")),
            retry_after=_retry(status),
            sample=status in SAMPLE_STATUSES,
        )
    case(
        "refused",
        "aiohttp",
        NET,
        "nothing listens on the port",
        lambda ep: get(ep.url("/", ep.refused)),
        sample=True,
    )
    case(
        "dns",
        "aiohttp",
        NET,
        "host name does not resolve",
        lambda ep: get(f"http://{UNRESOLVABLE_HOST}/"),
    )
    case(
        "connect_timeout",
        "aiohttp",
        TO,
        "connect() hangs on a full backlog",
        lambda ep: get(ep.url("/", ep.backlog), timeout=T),
    )
    case(
        "read_timeout",
        "aiohttp",
        TO,
        "server never answers",
        lambda ep: get(ep.url("/", ep.raw["silent"]), timeout=T),
    )
    case(
        "reset",
        "aiohttp",
        NET,
        "server resets the connection",
        lambda ep: get(ep.url("/", ep.raw["reset"])),
    )
    case(
        "disconnect",
        "aiohttp",
        NET,
        "server closes without a reply (ServerDisconnectedError)",
        lambda ep: get(ep.url("/", ep.raw["close_now"])),
        sample=True,
    )
    case(
        "truncated",
        "aiohttp",
        NET,
        "body shorter than Content-Length (ClientPayloadError)",
        lambda ep: get(ep.url("/", ep.raw["truncated"])),
        sample=True,
    )
    case(
        "chunked_truncated",
        "aiohttp",
        NET,
        "chunked body cut (ClientPayloadError)",
        lambda ep: get(ep.url("/", ep.raw["chunked"])),
    )
    case(
        "garbage",
        "aiohttp",
        NET_OR_INT,
        "reply is not HTTP",
        lambda ep: get(ep.url("/", ep.raw["garbage"])),
    )
    for name, (port, who, codes, why) in TLS_SCENARIOS.items():

        def run(ep: Endpoints, port: str = port, who: str = who) -> Any:
            ctx = _tls_client(ep)
            if who != "plain":
                ctx.load_cert_chain(*_rogue_cert(ep))
            return get(_https(ep, port), ssl_ctx=ctx)

        case(name, "aiohttp", codes, why, run, sample=name == "tls_expired")
    case(
        "tls_wrong_version",
        "aiohttp",
        INT,
        "https:// to a plain-HTTP port",
        lambda ep: get(ep.url("/", ep.http, "https"), ssl_ctx=_tls_client(ep)),
    )

    def uds(ep: Endpoints) -> Any:
        async def go() -> None:
            await get(
                "http://daemon/v1/status",
                connector=aiohttp.UnixConnector(path=ep.files["uds_missing"]),
            )

        return go()

    case("uds_missing", "aiohttp", NET, "Unix socket path absent: the daemon is not running", uds)


# -- urllib / http.client / xmlrpc ----------------------------------------------------


def _stdlib_http_cases() -> None:
    import http.client
    import urllib.request
    import xmlrpc.client

    def urlopen(
        url: Callable[[Endpoints], str],
        timeout: float = 5.0,
        ctx: Callable[[Endpoints], ssl.SSLContext] | None = None,
    ) -> Callable[[Endpoints], Any]:
        def run(ep: Endpoints) -> None:
            with urllib.request.urlopen(
                url(ep), timeout=timeout, context=ctx(ep) if ctx else None
            ) as resp:
                resp.read()

        return run

    for status, (codes, why) in STATUSES.items():
        case(
            f"http_{status}",
            "urllib",
            codes,
            why,
            urlopen(lambda ep, s=status: ep.url(f"/status/{s}")),
            retry_after=_retry(status),
            sample=status in SAMPLE_STATUSES,
        )
    case(
        "refused",
        "urllib",
        NET,
        "nothing listens on the port",
        urlopen(lambda ep: ep.url("/", ep.refused)),
    )
    case(
        "dns",
        "urllib",
        NET,
        "host name does not resolve",
        urlopen(lambda ep: f"http://{UNRESOLVABLE_HOST}/"),
        sample=True,
    )
    case(
        "connect_timeout",
        "urllib",
        TO,
        "connect() hangs on a full backlog",
        urlopen(lambda ep: ep.url("/", ep.backlog), T),
    )
    case(
        "read_timeout",
        "urllib",
        TO,
        "server never answers",
        urlopen(lambda ep: ep.url("/", ep.raw["silent"]), T),
    )
    case(
        "reset",
        "urllib",
        NET,
        "server resets the connection",
        urlopen(lambda ep: ep.url("/", ep.raw["reset"])),
    )
    case(
        "disconnect",
        "urllib",
        NET,
        "server closes without a reply",
        urlopen(lambda ep: ep.url("/", ep.raw["close_now"])),
    )
    case(
        "truncated",
        "urllib",
        NET,
        "body shorter than Content-Length (IncompleteRead)",
        urlopen(lambda ep: ep.url("/", ep.raw["truncated"])),
        sample=True,
    )
    case(
        "chunked_truncated",
        "urllib",
        NET,
        "chunked body cut (IncompleteRead)",
        urlopen(lambda ep: ep.url("/", ep.raw["chunked"])),
    )
    for name, (port, who, codes, why) in TLS_SCENARIOS.items():

        def ctx(ep: Endpoints, who: str = who) -> ssl.SSLContext:
            c = _tls_client(ep)
            if who != "plain":
                c.load_cert_chain(*_rogue_cert(ep))
            return c

        case(name, "urllib", codes, why, urlopen(lambda ep, p=port: _https(ep, p), ctx=ctx))
    case(
        "tls_wrong_version",
        "urllib",
        INT,
        "https:// to a plain-HTTP port",
        urlopen(lambda ep: ep.url("/", ep.http, "https"), ctx=_tls_client),
    )

    # http.client directly
    def conn_get(
        port: Callable[[Endpoints], int], timeout: float = 5.0
    ) -> Callable[[Endpoints], Any]:
        def run(ep: Endpoints) -> None:
            conn = http.client.HTTPConnection(LOOPBACK, port(ep), timeout=timeout)
            try:
                conn.request("GET", "/")
                conn.getresponse().read()
            finally:
                conn.close()

        return run

    case(
        "refused",
        "http.client",
        NET,
        "nothing listens on the port",
        conn_get(lambda ep: ep.refused),
    )
    case(
        "read_timeout",
        "http.client",
        TO,
        "server never answers",
        conn_get(lambda ep: ep.raw["silent"], T),
    )
    case(
        "reset",
        "http.client",
        NET,
        "server resets the connection",
        conn_get(lambda ep: ep.raw["reset"]),
    )
    case(
        "remote_disconnected",
        "http.client",
        NET,
        "RemoteDisconnected: no status line",
        conn_get(lambda ep: ep.raw["close_now"]),
        sample=True,
    )
    case(
        "incomplete_read",
        "http.client",
        NET,
        "IncompleteRead: body cut short",
        conn_get(lambda ep: ep.raw["truncated"]),
        sample=True,
    )
    case(
        "chunked_incomplete",
        "http.client",
        NET,
        "IncompleteRead in a chunked body",
        conn_get(lambda ep: ep.raw["chunked"]),
    )
    case(
        "bad_status_line",
        "http.client",
        NET_OR_INT,
        "BadStatusLine: reply is not HTTP",
        conn_get(lambda ep: ep.raw["garbage"]),
    )

    def https_untrusted(ep: Endpoints) -> None:
        conn = http.client.HTTPSConnection(
            LOOPBACK, ep.tls["untrusted"], timeout=5, context=_tls_client(ep)
        )
        try:
            conn.request("GET", "/")
        finally:
            conn.close()

    case(
        "https_untrusted", "http.client", CERT, "server cert from an untrusted CA", https_untrusted
    )

    # xmlrpc: the status is ProtocolError.errcode
    for status in (401, 403, 404, 429, 500, 501, 503):
        codes, why = STATUSES[status]

        def call(ep: Endpoints, status: int = status) -> None:
            xmlrpc.client.ServerProxy(ep.url(f"/status/{status}")).ping()

        case(
            f"protocol_error_{status}",
            "xmlrpc",
            codes,
            f"ProtocolError.errcode {status}: {why}",
            call,
            retry_after=_retry(status),
            sample=status == 404,
        )
    case(
        "refused",
        "xmlrpc",
        NET,
        "nothing listens on the port",
        lambda ep: xmlrpc.client.ServerProxy(ep.url("/", ep.refused)).ping(),
    )


# -- sockets, asyncio, ssl --------------------------------------------------------------


def _socket_cases() -> None:
    def connect(
        addr: Callable[[Endpoints], Any], timeout: float = 5.0
    ) -> Callable[[Endpoints], Any]:
        def run(ep: Endpoints) -> None:
            with socket.create_connection(addr(ep), timeout=timeout):
                pass

        return run

    case(
        "refused",
        "sockets",
        NET,
        "nothing listens on the port",
        connect(lambda ep: (LOOPBACK, ep.refused)),
        sample=True,
    )
    case(
        "connect_timeout",
        "sockets",
        TO,
        "connect() hangs on a full backlog",
        connect(lambda ep: (LOOPBACK, ep.backlog), T),
    )
    case("dns", "sockets", NET, "getaddrinfo fails", connect(lambda ep: (UNRESOLVABLE_HOST, 80)))

    def unix(path_key: str) -> Callable[[Endpoints], Any]:
        def run(ep: Endpoints) -> None:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(ep.files[path_key])

        return run

    case(
        "af_unix_missing",
        "sockets",
        NET,
        "FileNotFoundError on AF_UNIX connect: daemon not running",
        unix("uds_missing"),
        sample=True,
    )
    case("af_unix_stale", "sockets", NET, "stale socket file: refused", unix("uds_stale"))

    def recv_reset(ep: Endpoints) -> None:
        with socket.create_connection((LOOPBACK, ep.raw["reset"]), timeout=5) as sock:
            sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
            while sock.recv(1024):
                pass

    case("recv_reset", "sockets", NET, "peer reset the connection", recv_reset)

    def recv_timeout(ep: Endpoints) -> None:
        with socket.create_connection((LOOPBACK, ep.raw["silent"]), timeout=T) as sock:
            sock.recv(1024)

    case("recv_timeout", "sockets", TO, "socket.timeout on recv", recv_timeout)

    # asyncio
    async def open_conn(host: str, port: int, timeout: float = 5.0, **kw: Any) -> tuple[Any, Any]:
        return await asyncio.wait_for(asyncio.open_connection(host, port, **kw), timeout)

    async def a_refused(ep: Endpoints) -> None:
        await open_conn(LOOPBACK, ep.refused)

    async def a_timeout(ep: Endpoints) -> None:
        await open_conn(LOOPBACK, ep.backlog, T)

    async def a_dns(ep: Endpoints) -> None:
        await open_conn(UNRESOLVABLE_HOST, 80)

    async def a_incomplete(ep: Endpoints) -> None:
        reader, writer = await open_conn(LOOPBACK, ep.raw["truncated"])
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        await reader.readuntil(b"\r\n\r\n")
        try:
            await reader.readexactly(1000)
        finally:
            writer.close()

    async def a_reset(ep: Endpoints) -> None:
        reader, writer = await open_conn(LOOPBACK, ep.raw["reset"])
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        try:
            while await reader.read(1024):
                pass
            await reader.readexactly(1)
        finally:
            writer.close()

    async def a_unix(ep: Endpoints) -> None:
        await asyncio.open_unix_connection(ep.files["uds_missing"])

    async def a_unix_sock_connect(ep: Endpoints) -> None:
        # the socket made inline: no frame of the pack holds it
        def unix_socket() -> socket.socket:
            made = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            made.setblocking(False)
            return made

        await asyncio.get_running_loop().sock_connect(unix_socket(), ep.files["uds_missing"])

    async def a_tls(ep: Endpoints) -> None:
        await open_conn(LOOPBACK, ep.tls["untrusted"], ssl=_tls_client(ep))

    async def a_mtls(ep: Endpoints) -> None:
        reader, writer = await open_conn(LOOPBACK, ep.tls["mtls"], ssl=_tls_client(ep))
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        try:
            await reader.readexactly(10)
        finally:
            writer.close()

    async def a_wait_for(ep: Endpoints) -> None:
        reader, writer = await open_conn(LOOPBACK, ep.raw["silent"])
        try:
            await asyncio.wait_for(reader.read(10), T)
        finally:
            writer.close()

    # Exception groups: several tasks failed at once.
    async def a_group_bug_in_cleanup(ep: Endpoints) -> None:
        stats: dict[str, int] = {}

        async def fetch() -> None:
            await open_conn(LOOPBACK, ep.refused)

        async def watch() -> None:
            try:
                await asyncio.sleep(30)
            finally:  # run when the group cancels this task: the bug surfaces here
                stats["watched"] += 1

        async with asyncio.TaskGroup() as tg:
            tg.create_task(fetch())
            tg.create_task(watch())

    async def gathered(*jobs: Any) -> None:
        results = await asyncio.gather(*jobs, return_exceptions=True)
        errors = [r for r in results if isinstance(r, Exception)]
        if errors:
            raise ExceptionGroup("some jobs failed", errors)

    async def a_gather_bug(ep: Endpoints) -> None:
        async def parse(body: Any) -> int:
            await asyncio.sleep(0)
            return len(body)  # TypeError on None: a bug

        await gathered(open_conn(LOOPBACK, ep.refused), parse(None))

    async def a_gather_501(ep: Endpoints) -> None:
        import httpx

        async with httpx.AsyncClient(timeout=5.0) as client:

            async def get(url: str) -> None:
                (await client.get(url)).raise_for_status()

            await gathered(get(ep.url("/", ep.refused)), get(ep.url("/status/501")))

    async def a_gather_network(ep: Endpoints) -> None:
        await gathered(open_conn(LOOPBACK, ep.refused), open_conn(UNRESOLVABLE_HOST, 80))

    case(
        "group_bug_in_cleanup",
        "asyncio",
        INT,
        "TaskGroup: a refused connection, and a KeyError in the cancelled task's cleanup: a "
        "bug is not hidden as a retryable network failure",
        a_group_bug_in_cleanup,
        sample=True,
    )
    case(
        "gather_bug",
        "asyncio",
        INT,
        "ExceptionGroup of gathered jobs: a refused connection and a TypeError (a bug)",
        a_gather_bug,
    )
    case(
        "gather_501_and_refused",
        "asyncio",
        INT,
        "ExceptionGroup: HTTP 501 (permanent) next to a refused connection: retrying the "
        "whole cannot succeed",
        a_gather_501,
    )

    async def a_gather_401(ep: Endpoints) -> None:
        import httpx

        async with httpx.AsyncClient(timeout=5.0) as client:

            async def get(url: str) -> None:
                (await client.get(url)).raise_for_status()

            await gathered(get(ep.url("/", ep.refused)), get(ep.url("/status/401")))

    case(
        "gather_401_and_refused",
        "asyncio",
        AUTH,
        "ExceptionGroup: HTTP 401 (permanent) next to a refused connection (listed first): "
        "the least retryable member decides, whatever the order",
        a_gather_401,
    )
    case(
        "gather_network",
        "asyncio",
        NET,
        "ExceptionGroup of a refused connection and a DNS failure: network_error still",
        a_gather_network,
    )
    case("refused", "asyncio", NET, "nothing listens on the port", a_refused)
    case("connect_timeout", "asyncio", TO, "wait_for around a hanging connect", a_timeout)
    case("dns", "asyncio", NET, "getaddrinfo fails", a_dns)
    case(
        "incomplete_read",
        "asyncio",
        NET,
        "IncompleteReadError: the stream ended early",
        a_incomplete,
        sample=True,
    )
    case("reset", "asyncio", NET, "peer reset the connection", a_reset)
    case("unix_missing", "asyncio", NET, "open_unix_connection to an absent path", a_unix)
    case(
        "unix_sock_connect_missing",
        "asyncio",
        NET,
        "loop.sock_connect of an AF_UNIX socket to an absent path",
        a_unix_sock_connect,
    )
    case("tls_untrusted", "asyncio", CERT, "server cert from an untrusted CA", a_tls)
    case("tls_client_cert_required", "asyncio", AUTH, "server requires a client cert", a_mtls)
    case("read_timeout", "asyncio", TO, "wait_for around a read that never returns", a_wait_for)

    # ssl directly
    def handshake(
        port_key: str, who: str = "plain", host: str = LOOPBACK, read: bool = False
    ) -> Callable[[Endpoints], Any]:
        def run(ep: Endpoints) -> None:
            ctx = _tls_client(ep)
            if who == "rogue":
                ctx.load_cert_chain(*_rogue_cert(ep))
            port = ep.http if port_key == "plain_http" else ep.tls[port_key]
            with (
                socket.create_connection((LOOPBACK, port), timeout=5) as raw,
                ctx.wrap_socket(raw, server_hostname=host) as tls,
            ):
                if read:
                    tls.sendall(b"GET / HTTP/1.0\r\n\r\n")
                    tls.recv(10)

        return run

    case(
        "untrusted",
        "ssl",
        CERT,
        "server cert from an untrusted CA",
        handshake("untrusted"),
        sample=True,
    )
    case("expired", "ssl", CERT, "server cert expired", handshake("expired"))
    case("wronghost", "ssl", CERT, "server cert for another host", handshake("wronghost"))
    case(
        "client_cert_required",
        "ssl",
        AUTH,
        "CERTIFICATE_REQUIRED alert from the server",
        handshake("mtls", read=True),
        sample=True,
    )
    case(
        "client_cert_unknown_ca",
        "ssl",
        AUTH,
        "UNKNOWN_CA alert: server distrusts our cert",
        handshake("mtls", "rogue", read=True),
    )
    case("wrong_version", "ssl", INT, "TLS spoken to a plain-HTTP port", handshake("plain_http"))

    def key_mismatch(ep: Endpoints) -> None:
        ctx = ssl.create_default_context()
        ctx.load_cert_chain(ep.files["client_cert"], ep.files["mismatched_key"])

    def ca_not_pem(ep: Endpoints) -> None:
        ssl.create_default_context(cafile=ep.files["not_pem"])

    case(
        "key_mismatch",
        "ssl",
        INT,
        "KEY_VALUES_MISMATCH: local configuration",
        key_mismatch,
        sample=True,
    )
    case("ca_not_pem", "ssl", INT, "CA file is not PEM: local configuration", ca_not_pem)

    # The pack's own TLS files missing: its configuration, not a resource the caller named.
    def cafile_missing(ep: Endpoints) -> None:
        ssl.create_default_context(cafile=os.path.join(ep.files["tmp"], "no-such-ca.pem"))

    def client_cert_missing(ep: Endpoints) -> None:
        ctx = ssl.create_default_context(cafile=ep.files["ca"])
        ctx.load_cert_chain(os.path.join(ep.files["tmp"], "no-such-client.pem"))

    def client_key_missing(ep: Endpoints) -> None:
        ctx = ssl.create_default_context(cafile=ep.files["ca"])
        ctx.load_cert_chain(
            ep.files["client_cert"], os.path.join(ep.files["tmp"], "no-such-client.key")
        )

    def client_cert_garbled(ep: Endpoints) -> None:
        ctx = ssl.create_default_context(cafile=ep.files["ca"])
        ctx.load_cert_chain(ep.files["not_pem"])

    class _Tls:
        """A client that holds its context (no frame of the failure holds it)."""

        def __init__(self, cafile: str) -> None:
            self.ctx = ssl.create_default_context(cafile=cafile)

        def use(self, cert: str) -> None:
            self.ctx.load_cert_chain(cert)

    def client_cert_missing_held(ep: Endpoints) -> None:
        _Tls(ep.files["ca"]).use(os.path.join(ep.files["tmp"], "no-such-client.pem"))

    case(
        "client_cert_missing_context_held",
        "ssl",
        INT,
        "self.ctx.load_cert_chain of a missing client certificate: the context is an "
        "attribute, still the pack's configuration",
        client_cert_missing_held,
    )
    case(
        "cafile_missing",
        "ssl",
        INT,
        "create_default_context(cafile=) of a missing file: the pack's configuration, not "
        "a missing resource (FileNotFoundError without a file name)",
        cafile_missing,
        sample=True,
    )
    case(
        "client_cert_missing",
        "ssl",
        INT,
        "load_cert_chain of a missing client certificate: local configuration",
        client_cert_missing,
    )
    case(
        "client_key_missing",
        "ssl",
        INT,
        "load_cert_chain with a missing key file: local configuration",
        client_key_missing,
    )
    case(
        "client_cert_garbled",
        "ssl",
        INT,
        "load_cert_chain of a file that is no certificate (PEM lib): local configuration",
        client_cert_garbled,
    )


# -- websockets -----------------------------------------------------------------------

#: The server's close code (path ``/close/CODE/REASON``) -> (codes, reason); see the
#: websockets classifier for why each is right.
WS_CLOSES: dict[str, tuple[int, str, frozenset[str], str]] = {
    "close_1001": (1001, "shutting down", NET, "going away: the server restarts, retry"),
    "close_1008": (1008, "binary frames only", INT, "policy violation naming no credentials"),
    "close_1008_auth": (1008, "invalid token", AUTH, "policy violation: the token was refused"),
    "close_1009": (1009, "too big", INT, "the server refuses the message size: permanent"),
    "close_1011": (1011, "upstream crashed", NET, "server error, as HTTP 500: retryable"),
    "close_1013": (1013, "overloaded", RL, "try again later, as 503 with Retry-After"),
    "close_3000": (3000, "who are you", AUTH, "IANA-registered 'Unauthorized'"),
    "close_3003": (3003, "not yours", AUTH, "IANA-registered 'Forbidden', as HTTP 403"),
    "close_3008": (3008, "too slow", TO, "IANA-registered 'Timeout', as HTTP 408"),
    "close_4000": (4000, "app specific", INT, "a private code: nothing specific is known"),
}


def _websockets_cases() -> None:
    from websockets.asyncio.client import connect as aio_connect
    from websockets.sync.client import connect as sync_connect

    # the client logs its own keepalive failure with a traceback: not wanted in the output
    quiet = logging.getLogger("failure_corpus.websockets.client")
    quiet.propagate = False
    quiet.setLevel(logging.CRITICAL + 1)

    def options(ep: Endpoints, kw: dict[str, Any], tls: bool) -> dict[str, Any]:
        return {"open_timeout": 30, **kw, **({"ssl": _tls_client(ep)} if tls else {})}

    def sync_open(
        url: Callable[[Endpoints], str], tls: bool = False, **kw: Any
    ) -> Callable[[Endpoints], Any]:
        def run(ep: Endpoints) -> None:
            with sync_connect(url(ep), **options(ep, kw, tls)) as ws:
                ws.recv(timeout=30)

        return run

    def aio_open(
        url: Callable[[Endpoints], str], tls: bool = False, **kw: Any
    ) -> Callable[[Endpoints], Any]:
        async def run(ep: Endpoints) -> None:
            async with aio_connect(url(ep), **options(ep, kw, tls)) as ws:
                await asyncio.wait_for(ws.recv(), 30)

        return run

    def ws(path: str) -> Callable[[Endpoints], str]:
        return lambda ep: f"ws://{LOOPBACK}:{ep.ws}{path}"

    def raw(kind: str) -> Callable[[Endpoints], str]:
        return lambda ep: f"ws://{LOOPBACK}:{ep.raw[kind]}/"

    samples = {"sync:http_429", "aio:close_1011", "aio:close_1008_auth", "aio:refused"}
    for flavour, opener in (("sync", sync_open), ("aio", aio_open)):

        def add(
            name: str,
            codes: frozenset[str],
            why: str,
            run: Callable[[Endpoints], Any],
            retry_after: float | None = None,
            flavour: str = flavour,
        ) -> None:
            key = f"{flavour}:{name}"
            case(key, "websockets", codes, why, run, retry_after=retry_after, sample=key in samples)

        add(
            "refused",
            NET,
            "nothing listens on the port",
            opener(lambda ep: f"ws://{LOOPBACK}:{ep.refused}/"),
        )
        add("dns", NET, "getaddrinfo fails", opener(lambda ep: f"ws://{UNRESOLVABLE_HOST}/"))
        add(
            "open_timeout",
            TO,
            "open_timeout passes while connect() hangs on a full backlog",
            opener(lambda ep: f"ws://{LOOPBACK}:{ep.backlog}/", open_timeout=T),
        )
        add(
            "handshake_timeout",
            TO,
            "open_timeout passes: the server never answers the opening handshake",
            opener(raw("silent"), open_timeout=T),
        )
        for status in (401, 403, 404, 429, 500, 503):
            codes, why = STATUSES[status]
            add(
                f"http_{status}",
                codes,
                f"handshake refused: {why}",
                opener(ws(f"/status/{status}")),
                _retry(status),
            )
        add(
            "not_websocket",
            INT,
            "a plain HTTP 200 page: the URL is no WebSocket endpoint, permanent",
            opener(ws("/plain")),
        )
        for name, (code, reason, codes, why) in WS_CLOSES.items():
            add(name, codes, why, opener(ws(f"/close/{code}/{reason.replace(' ', '%20')}")))
        add(
            "message_too_big",
            INT,
            "the server's message exceeds the client's max_size: a local limit",
            opener(ws("/big"), max_size=1024),
        )
        add(
            "keepalive_timeout",
            TO,
            "the server stops answering pings: keepalive ping timeout",
            opener(
                lambda ep: f"ws://{LOOPBACK}:{ep.ws_mute}/",
                ping_interval=0.1,
                ping_timeout=T,
                close_timeout=T,
                logger=quiet,
            ),
        )
        add(
            "dropped",
            NET,
            "the server resets the TCP connection: no close frame",
            opener(ws("/drop")),
        )
        add(
            "disconnect",
            NET,
            "the server closes before answering the handshake",
            opener(raw("close_now")),
        )
        add(
            "garbage", NET_OR_INT, "the answer to the handshake is not HTTP", opener(raw("garbage"))
        )
        add(
            "invalid_uri",
            INT,
            "an http:// URI is no WebSocket URI: the pack's own error",
            opener(lambda ep: ep.url("/")),
        )
        add(
            "tls_untrusted",
            CERT,
            "server cert from an untrusted CA",
            opener(lambda ep: f"wss://{LOOPBACK}:{ep.tls['untrusted']}/", tls=True),
        )


# -- HTTPS through a proxy that refuses the tunnel --------------------------------------

#: The proxy's answer to ``CONNECT`` -> the codes that are right.
PROXY_STATUSES: dict[int, tuple[frozenset[str], str]] = {
    407: (AUTH, "the proxy wants credentials: retrying cannot help"),
    403: (AUTH, "the proxy forbids the tunnel"),
    502: (NET, "the proxy could not reach the target"),
}


def _proxy_cases() -> None:
    import urllib.request

    import aiohttp
    import httpx
    import requests

    def target(status: int) -> str:
        return f"https://proxy{status}.invalid/"  # only the proxy sees the name

    for status, (codes, why) in PROXY_STATUSES.items():

        def via_httpx(ep: Endpoints, status: int = status) -> None:
            with httpx.Client(proxy=ep.url(), timeout=5.0, trust_env=False) as client:
                client.get(target(status))

        def via_requests(ep: Endpoints, status: int = status) -> None:
            with requests.Session() as session:
                session.trust_env = False
                proxies = {"https": ep.url(), "http": ep.url()}
                session.get(target(status), proxies=proxies, timeout=5)

        def via_urllib(ep: Endpoints, status: int = status) -> None:
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({"https": ep.url()}))
            with opener.open(target(status), timeout=5) as resp:
                resp.read()

        async def via_aiohttp(ep: Endpoints, status: int = status) -> None:
            async with (
                aiohttp.ClientSession() as session,
                session.get(target(status), proxy=ep.url()) as resp,
            ):
                await resp.read()

        for klass, run in (
            ("httpx", via_httpx),
            ("requests", via_requests),
            ("urllib", via_urllib),
            ("aiohttp", via_aiohttp),
        ):
            case(
                f"proxy_connect_{status}",
                klass,
                codes,
                f"CONNECT answered {status}: {why}",
                run,
                sample=status == 407 and klass in {"httpx", "requests"},
            )


# -- SMTP -------------------------------------------------------------------------------


def _smtp_cases() -> None:
    import smtplib

    def auth(ep: Endpoints) -> None:
        with smtplib.SMTP(LOOPBACK, ep.smtp["auth"], timeout=5) as smtp:
            smtp.login("user", PLANTED)

    def drop(ep: Endpoints) -> None:
        with smtplib.SMTP(LOOPBACK, ep.smtp["drop"], timeout=5) as smtp:
            smtp.ehlo()

    def busy(ep: Endpoints) -> None:
        smtplib.SMTP(LOOPBACK, ep.smtp["421"], timeout=5)

    def rcpt(ep: Endpoints) -> None:
        with smtplib.SMTP(LOOPBACK, ep.smtp["rcpt"], timeout=5) as smtp:
            smtp.sendmail("a@corpus.test", ["nobody@corpus.test"], "Subject: x\r\n\r\nhi")

    def greylisted(ep: Endpoints) -> None:
        with smtplib.SMTP(LOOPBACK, ep.smtp["greylist"], timeout=5) as smtp:
            smtp.sendmail("a@corpus.test", ["b@corpus.test"], "Subject: x\r\n\r\nhi")

    def queue_full(ep: Endpoints) -> None:
        with smtplib.SMTP(LOOPBACK, ep.smtp["full"], timeout=5) as smtp:
            smtp.sendmail("a@corpus.test", ["b@corpus.test"], "Subject: x\r\n\r\nhi")

    def refused(ep: Endpoints) -> None:
        smtplib.SMTP(LOOPBACK, ep.refused, timeout=5)

    def silent(ep: Endpoints) -> None:
        smtplib.SMTP(LOOPBACK, ep.raw["silent"], timeout=T)

    case("auth_535", "smtp", AUTH, "535 authentication credentials invalid", auth, sample=True)
    case(
        "server_disconnected", "smtp", NET, "SMTPServerDisconnected mid-session", drop, sample=True
    )
    case("greeting_421", "smtp", NET, "421 service not available at greeting", busy)
    case("rcpt_550", "smtp", NF, "550 no such mailbox", rcpt)
    case(
        "rcpt_451_greylisted",
        "smtp",
        NET | RL,
        "451 greylisting: transient, retry later (a deferral: come back later, as a throttle)",
        greylisted,
    )
    case("mail_452_storage", "smtp", NET, "452 insufficient storage: transient", queue_full)
    case("refused", "smtp", NET, "nothing listens on the port", refused)
    case("greeting_timeout", "smtp", TO, "server never sends its greeting", silent)


# -- FTP, IMAP, POP3: reply codes and response codes in the exception's text -------------


def _ftp_cases() -> None:
    import ftplib

    def session(name: str, then: Callable[[ftplib.FTP], Any]) -> Callable[[Endpoints], Any]:
        def run(ep: Endpoints) -> None:
            ftp = ftplib.FTP()
            try:
                ftp.connect(LOOPBACK, ep.ftp[name], timeout=5)
                ftp.login("user", PLANTED)
                then(ftp)
            finally:
                ftp.close()

        return run

    def nothing(ftp: ftplib.FTP) -> None:
        pass

    case("login_530", "ftplib", AUTH, "530 login incorrect", session("login_530", nothing))
    case(
        "cwd_550",
        "ftplib",
        NF,
        "550 on CWD: no such directory",
        session("cwd_550", lambda f: f.cwd("missing")),
        sample=True,
    )
    case(
        "size_550",
        "ftplib",
        NF,
        "550 on SIZE: no such file",
        session("size_550", lambda f: f.size("x")),
    )
    case(
        "greeting_421",
        "ftplib",
        NET,
        "421 too many connections at the greeting: transient",
        session("greeting_421", nothing),
    )
    case(
        "pasv_425",
        "ftplib",
        NET,
        "425 can't open the data connection: transient",
        session("pasv_425", lambda f: f.nlst()),
    )
    case(
        "size_451",
        "ftplib",
        NET,
        "451 local error: transient",
        session("size_451", lambda f: f.size("x")),
    )
    case(
        "mkd_553",
        "ftplib",
        INT,
        "553 file name not allowed: permanent, no baseline code",
        session("mkd_553", lambda f: f.mkd("x")),
    )
    case(
        "refused",
        "ftplib",
        NET,
        "nothing listens on the port",
        lambda ep: ftplib.FTP().connect(LOOPBACK, ep.refused, timeout=5),
    )


def _imap_cases() -> None:
    import imaplib

    def session(name: str, then: Callable[[imaplib.IMAP4], Any]) -> Callable[[Endpoints], Any]:
        def run(ep: Endpoints) -> None:
            imap = imaplib.IMAP4(LOOPBACK, ep.imap[name], timeout=5)
            try:
                imap.login("user", PLANTED)
                then(imap)
            finally:
                with contextlib.suppress(OSError):
                    imap.shutdown()

        return run

    def nothing(imap: imaplib.IMAP4) -> None:
        pass

    def select(imap: imaplib.IMAP4) -> None:
        # select() answers NO without raising; packs raise the server's own text
        typ, data = imap.select("Missing")
        if typ != "OK":
            raise imap.error(data[-1])

    case(
        "login_authenticationfailed",
        "imaplib",
        AUTH,
        "LOGIN answered NO [AUTHENTICATIONFAILED]",
        session("authenticationfailed", nothing),
        sample=True,
    )
    case(
        "login_expired", "imaplib", AUTH, "LOGIN answered NO [EXPIRED]", session("expired", nothing)
    )
    case(
        "login_unavailable",
        "imaplib",
        NET,
        "LOGIN answered NO [UNAVAILABLE]: the backend is down for now",
        session("unavailable", nothing),
    )
    case(
        "select_nonexistent",
        "imaplib",
        NF,
        "SELECT answered NO [NONEXISTENT], raised as IMAP4.error with the server's text",
        session("nonexistent", select),
    )
    case(
        "bye",
        "imaplib",
        NET,
        "the server said BYE and hung up (IMAP4.abort)",
        session("bye", lambda m: m.select("INBOX")),
        sample=True,
    )
    case(
        "drop",
        "imaplib",
        NET,
        "the server hung up mid-command (IMAP4.abort)",
        session("drop", nothing),
    )


def _pop_cases() -> None:
    import poplib

    def login(name: str) -> Callable[[Endpoints], Any]:
        def run(ep: Endpoints) -> None:
            pop = poplib.POP3(LOOPBACK, ep.pop[name], timeout=5)
            try:
                pop.user("user")
                pop.pass_(PLANTED)
            finally:
                pop.close()

        return run

    case("auth", "poplib", AUTH, "-ERR [AUTH]: credentials rejected", login("auth"), sample=True)
    case(
        "in_use", "poplib", NET, "-ERR [IN-USE]: another session holds the mailbox", login("in_use")
    )
    case(
        "sys_temp", "poplib", NET, "-ERR [SYS/TEMP]: a transient server failure", login("sys_temp")
    )
    case(
        "login_delay",
        "poplib",
        RL,
        "-ERR [LOGIN-DELAY]: logged in again too soon",
        login("login_delay"),
    )


# -- gRPC -------------------------------------------------------------------------------

GRPC_STATUSES: dict[str, tuple[frozenset[str], str]] = {
    "CANCELLED": (INT, "the server cancelled: nothing specific to do"),
    "UNKNOWN": (INT, "an unknown server error"),
    "INVALID_ARGUMENT": (INT, "the pack sent a bad request: not the caller's input"),
    "DEADLINE_EXCEEDED": (TO, "the server reports a deadline"),
    "NOT_FOUND": (NF, "the resource does not exist"),
    "ALREADY_EXISTS": (INT, "a conflict, no baseline code"),
    "PERMISSION_DENIED": (AUTH, "credentials lack permission"),
    "RESOURCE_EXHAUSTED": (RL, "quota or throttling"),
    "FAILED_PRECONDITION": (INT, "system state, no baseline code"),
    "ABORTED": (INT, "a concurrency conflict"),
    "OUT_OF_RANGE": (INT, "a bad range, no baseline code"),
    "UNIMPLEMENTED": (INT, "method not implemented: permanent"),
    "INTERNAL": (INT, "a server bug"),
    "UNAVAILABLE": (NET, "transiently unavailable"),
    "DATA_LOSS": (INT, "unrecoverable data loss"),
    "UNAUTHENTICATED": (AUTH, "credentials missing or rejected"),
}


def _grpc_cases() -> None:
    import grpc
    import grpc.aio

    def read(path: str) -> bytes:
        with open(path, "rb") as f:
            return f.read()

    def sync_call(
        target: Callable[[Endpoints], str],
        method: str,
        *,
        timeout: float = 5.0,
        creds: Callable[[Endpoints], Any] | None = None,
        options: tuple[Any, ...] = (),
    ) -> Callable[[Endpoints], Any]:
        def run(ep: Endpoints) -> None:
            if creds is None:
                channel = grpc.insecure_channel(target(ep), options=options)
            else:
                channel = grpc.secure_channel(target(ep), creds(ep), options=options)
            with channel:
                channel.unary_unary(f"/corpus.Fail/{method}")(b"", timeout=timeout)

        return run

    def aio_call(
        target: Callable[[Endpoints], str],
        method: str,
        *,
        timeout: float = 5.0,
        creds: Callable[[Endpoints], Any] | None = None,
        options: tuple[Any, ...] = (),
    ) -> Callable[[Endpoints], Any]:
        async def go(ep: Endpoints) -> None:
            if creds is None:
                channel = grpc.aio.insecure_channel(target(ep), options=options)
            else:
                channel = grpc.aio.secure_channel(target(ep), creds(ep), options=options)
            async with channel:
                await channel.unary_unary(f"/corpus.Fail/{method}")(b"", timeout=timeout)

        return go

    def plain(ep: Endpoints) -> str:
        return f"{LOOPBACK}:{ep.grpc}"

    def rogue_root(ep: Endpoints) -> Any:
        return grpc.ssl_channel_credentials(root_certificates=read(ep.files["rogue_ca"]))

    def good_root(ep: Endpoints) -> Any:
        return grpc.ssl_channel_credentials(root_certificates=read(ep.files["ca"]))

    class _TokenSource(grpc.AuthMetadataPlugin):
        """Call credentials whose token source fails (raises, or reports an error)."""

        def __init__(self, raise_: bool) -> None:
            self.raise_ = raise_

        def __call__(self, context: Any, callback: Any) -> None:
            if self.raise_:
                raise RuntimeError(f"token refresh failed ({PLANTED})")
            callback((), PermissionError(f"no token for {PLANTED}"))

    def failing_token(raise_: bool) -> Callable[[Endpoints], Any]:
        def creds(ep: Endpoints) -> Any:
            return grpc.composite_channel_credentials(
                good_root(ep), grpc.metadata_call_credentials(_TokenSource(raise_))
            )

        return creds

    for flavour, call in (("sync", sync_call), ("aio", aio_call)):
        klass = "grpc" if flavour == "sync" else "grpc.aio"
        for name, (codes, why) in GRPC_STATUSES.items():
            case(
                name.lower(),
                klass,
                codes,
                why,
                call(plain, name),
                sample=name in {"UNAVAILABLE", "PERMISSION_DENIED"},
            )
        case(
            "retry_info",
            klass,
            RL,
            "RESOURCE_EXHAUSTED with RetryInfo: retry_after from it",
            call(plain, "RETRY"),
            retry_after=float(RETRY_AFTER),
            sample=True,
        )
        case(
            "client_deadline",
            klass,
            TO,
            "client-side deadline passes",
            call(plain, "SLOW", timeout=T),
            sample=flavour == "aio",
        )
        case(
            "message_too_large",
            klass,
            INT,
            "client-side RESOURCE_EXHAUSTED: reply over max size, not throttling",
            call(plain, "BIG", options=(("grpc.max_receive_message_length", 100),)),
        )
        case(
            "rate_exceeds_limit",
            klass,
            RL,
            "RESOURCE_EXHAUSTED 'request rate exceeds the per-project limit': throttling, "
            "not a message size limit",
            call(plain, "RATE"),
        )
        case(
            "call_credentials_plugin_raises",
            klass,
            AUTH,
            "the call-credentials plugin (a token source) raised: no credentials to send",
            call(lambda ep: f"{LOOPBACK}:{ep.grpc_tls}", "OK", creds=failing_token(raise_=True)),
        )
        case(
            "call_credentials_plugin_error",
            klass,
            AUTH,
            "the call-credentials plugin reported an error to its callback",
            call(lambda ep: f"{LOOPBACK}:{ep.grpc_tls}", "OK", creds=failing_token(raise_=False)),
        )
        case(
            "refused",
            klass,
            NET,
            "nothing listens on the port",
            call(lambda ep: f"{LOOPBACK}:{ep.refused}", "OK"),
        )
        case(
            "tls_untrusted",
            klass,
            CERT,
            "server cert from an untrusted CA",
            call(lambda ep: f"{LOOPBACK}:{ep.grpc_tls}", "OK", creds=rogue_root),
        )
        case(
            "upstream_tls_unavailable",
            klass,
            NET,
            "the server reports UNAVAILABLE quoting its own upstream's certificate failure: "
            "the status decides, not the TLS words in its details (our channel's TLS is fine)",
            call(plain, "UPSTREAM_TLS_UNAVAILABLE"),
            sample=flavour == "sync",
        )
        case(
            "upstream_tls_raises",
            klass,
            INT,
            "the server's handler let its upstream's SSLCertVerificationError escape: UNKNOWN "
            "quoting it, a server-side bug, not our certificate check",
            call(plain, "UPSTREAM_TLS_RAISES"),
        )
        case(
            "tls_client_cert_required",
            klass,
            AUTH | NET,
            "mTLS server, no client cert: gRPC reports only 'Socket closed' (TLS 1.3 alert unseen)",
            call(lambda ep: f"{LOOPBACK}:{ep.grpc_mtls}", "OK", creds=good_root),
        )

    def ready_timeout(ep: Endpoints) -> None:
        with grpc.insecure_channel(f"{LOOPBACK}:{ep.backlog}") as channel:
            grpc.channel_ready_future(channel).result(timeout=T)

    case(
        "channel_ready_timeout",
        "grpc",
        TO,
        "FutureTimeoutError: channel not ready in time",
        ready_timeout,
    )


# -- subprocesses -------------------------------------------------------------------------

ENV = {
    **os.environ,
    "LC_ALL": "C",
    "LANGUAGE": "C",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _run(argv: list[str], timeout: float = 20.0) -> Callable[[Endpoints], Any]:
    """``subprocess.run(check=True, capture_output=True)``: a CalledProcessError."""

    def run(ep: Endpoints) -> None:
        args = [a.format(ep=ep, lo=LOOPBACK, bad=UNRESOLVABLE_HOST, **ep.files) for a in argv]
        subprocess.run(
            args,
            check=True,
            capture_output=True,
            env=ENV,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    return run


def _run_tool(argv: list[str]) -> Callable[[Endpoints], Any]:
    """The author helper ``control_plane.tools.run_tool`` (raises classified errors)."""

    def run(ep: Endpoints) -> None:
        from control_plane.tools import run_tool

        args = [a.format(ep=ep, lo=LOOPBACK, bad=UNRESOLVABLE_HOST, **ep.files) for a in argv]
        run_tool(args, timeout=20, env=ENV)

    return run


def _local_repo(ep: Endpoints) -> str:
    """An empty git repository under the corpus's temporary directory (made once)."""
    repo = os.path.join(ep.files["tmp"], "local-repo")
    if not os.path.isdir(os.path.join(repo, ".git")):
        subprocess.run(["git", "init", "-q", repo], check=True, capture_output=True, env=ENV)
    return repo


def _in_repo(argv: list[str]) -> Callable[[Endpoints], Any]:
    """As :func:`_run`, with ``{repo}`` an empty local repository."""

    def run(ep: Endpoints) -> None:
        repo = _local_repo(ep)
        _run([a.replace("{repo}", repo) for a in argv])(ep)

    return run


def _tool_status(status: int) -> tuple[frozenset[str], str]:
    """A tool does not show the Retry-After header: 503 may honestly be network_error."""
    codes, why = STATUSES[status]
    if status == 503:
        return NET | RL, "503: the tool does not expose Retry-After"
    return codes, why


def _tool_cases() -> None:
    http = "http://{lo}:{ep.http}"
    # git
    git = ["git", "-c", "credential.helper=", "ls-remote"]
    for status in (401, 403, 404, 429, 500, 501, 503):
        codes, why = _tool_status(status)
        case(
            f"http_{status}",
            "git",
            codes,
            why,
            _run([*git, http + f"/status/{status}/repo.git"]),
            sample=status == 404,
        )
    case(
        "refused",
        "git",
        NET,
        "nothing listens on the port",
        _run([*git, "http://{lo}:{ep.refused}/r.git"]),
        sample=True,
    )
    case("dns", "git", NET, "host name does not resolve", _run([*git, "http://{bad}/r.git"]))
    case(
        "missing_repo",
        "git",
        NF,
        "local repository path absent",
        _run([*git, "{tmp}/no-such-repo.git"]),
    )
    case(
        "checkout_unknown_ref",
        "git",
        NF,
        "git checkout of a branch the repository does not have (pathspec did not match)",
        _in_repo(["git", "-C", "{repo}", "checkout", "no-such-branch"]),
    )
    case(
        "rev_parse_unknown_ref",
        "git",
        NF,
        "git rev-parse --verify of an unknown ref (Needed a single revision)",
        _in_repo(["git", "-C", "{repo}", "rev-parse", "--verify", "no-such-branch"]),
    )
    case(
        "garbage_daemon",
        "git",
        NET_OR_INT,
        "git:// server answers garbage",
        _run([*git, "git://{lo}:{ep.raw[garbage]}/r.git"]),
    )
    case(
        "tls_untrusted",
        "git",
        CERT,
        "server cert from an untrusted CA",
        _run(
            [
                "git",
                "-c",
                "http.sslCAInfo={ca}",
                "ls-remote",
                "https://{lo}:{ep.tls[untrusted]}/r.git",
            ]
        ),
    )
    case(
        "tls_client_cert_required",
        "git",
        AUTH,
        "server requires a client cert",
        _run(
            ["git", "-c", "http.sslCAInfo={ca}", "ls-remote", "https://{lo}:{ep.tls[mtls]}/r.git"]
        ),
    )
    case(
        "run_tool_404",
        "git",
        NF,
        "run_tool picks git's table by argv[0]",
        _run_tool([*git, http + "/status/404/repo.git"]),
        sample=True,
    )

    # ssh
    ssh = [
        "ssh",
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "ConnectTimeout=1",
    ]
    case(
        "refused",
        "ssh",
        NET,
        "nothing listens on the port",
        _run([*ssh, "-p", "{ep.refused}", "{lo}", "true"]),
        sample=True,
    )
    case("dns", "ssh", NET, "host name does not resolve", _run([*ssh, "{bad}", "true"]))
    case(
        "banner_timeout",
        "ssh",
        TO,
        "Connection timed out during banner exchange",
        _run([*ssh, "-p", "{ep.raw[silent]}", "{lo}", "true"]),
        sample=True,
    )
    case(
        "closed",
        "ssh",
        NET,
        "server closes at once (kex_exchange_identification)",
        _run([*ssh, "-p", "{ep.raw[close_now]}", "{lo}", "true"]),
    )
    case(
        "run_tool_refused",
        "ssh",
        NET,
        "run_tool picks ssh's table by argv[0]",
        _run_tool([*ssh, "-p", "{ep.refused}", "{lo}", "true"]),
    )

    # curl
    curl = ["curl", "-sS", "--fail", "--max-time", "5"]
    for status in (401, 403, 404, 408, 429, 500, 501, 502, 503, 504):
        codes, why = _tool_status(status)
        case(
            f"http_{status}",
            "curl",
            codes,
            f"--fail: {why}",
            _run([*curl, http + f"/status/{status}"]),
            sample=status == 429,
        )
    case("refused", "curl", NET, "exit 7", _run([*curl, "http://{lo}:{ep.refused}/"]), sample=True)
    case("dns", "curl", NET, "exit 6", _run([*curl, "http://{bad}/"]))
    case(
        "connect_timeout",
        "curl",
        TO,
        "exit 28 (connect): not 'refused'",
        _run(["curl", "-sS", "--connect-timeout", str(T), "http://{lo}:{ep.backlog}/"]),
        sample=True,
    )
    case(
        "read_timeout",
        "curl",
        TO,
        "exit 28 (transfer)",
        _run(["curl", "-sS", "--max-time", str(T), "http://{lo}:{ep.raw[silent]}/"]),
    )
    case(
        "reset",
        "curl",
        NET,
        "exit 56: connection reset",
        _run([*curl, "http://{lo}:{ep.raw[reset]}/"]),
    )
    case(
        "empty_reply",
        "curl",
        NET,
        "exit 52: empty reply",
        _run([*curl, "http://{lo}:{ep.raw[close_now]}/"]),
    )
    case(
        "truncated",
        "curl",
        NET,
        "exit 18: partial transfer",
        _run([*curl, "http://{lo}:{ep.raw[truncated]}/"]),
    )
    for name, port in (
        ("tls_untrusted", "untrusted"),
        ("tls_expired", "expired"),
        ("tls_wronghost", "wronghost"),
    ):
        case(
            name,
            "curl",
            CERT,
            "exit 60: server cert fails verification",
            _run([*curl, "--cacert", "{ca}", f"https://{{lo}}:{{ep.tls[{port}]}}/"]),
        )
    case(
        "tls_client_cert_required",
        "curl",
        AUTH,
        "alert certificate required (exit 56)",
        _run([*curl, "--cacert", "{ca}", "https://{lo}:{ep.tls[mtls]}/"]),
        sample=True,
    )
    case(
        "tls_client_cert_unknown_ca",
        "curl",
        AUTH,
        "alert unknown ca",
        _run(
            [
                *curl,
                "--cacert",
                "{ca}",
                "--cert",
                "{rogue_client_cert}",
                "--key",
                "{rogue_client_key}",
                "https://{lo}:{ep.tls[mtls]}/",
            ]
        ),
    )
    case(
        "tls_wrong_version",
        "curl",
        INT,
        "exit 35: TLS to a plain port",
        _run([*curl, "--cacert", "{ca}", "https://{lo}:{ep.http}/"]),
    )
    case(
        "tls_key_mismatch",
        "curl",
        INT,
        "exit 58: local client cert/key unusable",
        _run(
            [
                *curl,
                "--cacert",
                "{ca}",
                "--cert",
                "{client_cert}",
                "--key",
                "{mismatched_key}",
                "https://{lo}:{ep.tls[mtls]}/",
            ]
        ),
    )
    case(
        "tls_ca_not_pem",
        "curl",
        INT,
        "exit 77: CA file unusable",
        _run([*curl, "--cacert", "{not_pem}", "https://{lo}:{ep.tls[good]}/"]),
    )
    # wrapped: the tool is the one the wrapper runs, not env/timeout/nice/sh
    for name, wrapper in (
        ("env", ["env", "-u", "CORPUS_UNSET", "LC_ALL=C"]),
        ("timeout", ["timeout", "-k", "5", "20"]),
        ("nice", ["nice", "-n", "5"]),
    ):
        case(
            f"wrapped_{name}_404",
            "curl",
            NF,
            f"curl run through {name}: curl's table still applies",
            _run([*wrapper, *curl, http + "/status/404"]),
        )
    case(
        "wrapped_sh_c_refused",
        "curl",
        NET,
        "sh -c 'curl ...': the script's first word is the tool",
        _run(["sh", "-c", "exec " + " ".join(curl) + " http://{lo}:{ep.refused}/"]),
    )
    case(
        "run_tool_404",
        "curl",
        NF,
        "run_tool picks curl's table by argv[0]",
        _run_tool([*curl, http + "/status/404"]),
    )
    case(
        "run_tool_timeout",
        "curl",
        TO,
        "run_tool: curl exit 28",
        _run_tool(["curl", "-sS", "--connect-timeout", str(T), "http://{lo}:{ep.backlog}/"]),
    )

    # wget
    wget = ["wget", "-q", "--tries=1", "--timeout=5", "-O", "/dev/null"]
    wget_v = ["wget", "-nv", "--tries=1", "--timeout=5", "-O", "/dev/null"]
    wget_verbose = ["wget", "--tries=1", "--timeout=5", "-O", "/dev/null"]
    for status in (401, 403, 404, 408, 429, 500, 501, 503, 504):
        codes, why = _tool_status(status)
        case(
            f"http_{status}",
            "wget",
            codes,
            why,
            _run([*wget_verbose, http + f"/status/{status}"]),
            sample=status == 403,
        )
    for status in (404, 500):
        codes, why = _tool_status(status)
        case(
            f"nv_http_{status}",
            "wget",
            codes,
            f"-nv: {why}",
            _run([*wget_v, http + f"/status/{status}"]),
        )
    case(
        "refused",
        "wget",
        NET,
        "exit 4: connection refused",
        _run([*wget_v, "http://{lo}:{ep.refused}/"]),
        sample=True,
    )
    case("dns", "wget", NET, "exit 4: host not resolved", _run([*wget_v, "http://{bad}/"]))
    case(
        "read_timeout",
        "wget",
        TO,
        "exit 4: read timed out",
        _run(
            [
                "wget",
                "-nv",
                "--tries=1",
                f"--timeout={T}",
                "-O",
                "/dev/null",
                "http://{lo}:{ep.raw[silent]}/",
            ]
        ),
    )
    case(
        "connect_timeout",
        "wget",
        TO,
        "exit 4: connect timed out",
        _run(
            [
                "wget",
                "-nv",
                "--tries=1",
                f"--timeout={T}",
                "-O",
                "/dev/null",
                "http://{lo}:{ep.backlog}/",
            ]
        ),
    )
    case(
        "truncated",
        "wget",
        NET,
        "exit 4: connection closed mid-body",
        _run([*wget_v, "http://{lo}:{ep.raw[truncated]}/"]),
    )
    for name, port in (
        ("tls_untrusted", "untrusted"),
        ("tls_expired", "expired"),
        ("tls_wronghost", "wronghost"),
    ):
        case(
            name,
            "wget",
            CERT,
            "exit 5: server cert fails verification",
            _run([*wget_v, "--ca-certificate={ca}", f"https://{{lo}}:{{ep.tls[{port}]}}/"]),
        )
    case(
        "tls_client_cert_required",
        "wget",
        AUTH,
        "server ends the TLS session (GnuTLS names no reason: internal_error at best)",
        _run([*wget_verbose, "--ca-certificate={ca}", "https://{lo}:{ep.tls[mtls]}/"]),
    )
    case(
        "quiet_refused",
        "wget",
        NET,
        "exit 4 with -q: the exit status alone",
        _run([*wget, "http://{lo}:{ep.refused}/"]),
    )

    # ffprobe
    ffprobe = ["ffprobe", "-v", "error", "-rw_timeout", "2000000"]
    case(
        "missing_file",
        "ffprobe",
        NF,
        "the input file does not exist",
        _run([*ffprobe, "{tmp}/missing.mp4"]),
        sample=True,
    )
    case("http_404", "ffprobe", NF, "Server returned 404", _run([*ffprobe, http + "/status/404"]))
    case("http_403", "ffprobe", AUTH, "Server returned 403", _run([*ffprobe, http + "/status/403"]))
    case("http_500", "ffprobe", NET, "Server returned 5XX", _run([*ffprobe, http + "/status/500"]))
    case(
        "refused",
        "ffprobe",
        NET,
        "Connection refused",
        _run([*ffprobe, "http://{lo}:{ep.refused}/a.mp4"]),
    )
    case(
        "dns", "ffprobe", NET, "Failed to resolve hostname", _run([*ffprobe, "http://{bad}/a.mp4"])
    )
    case(
        "invalid_data",
        "ffprobe",
        INT,
        "not media: a pack code, no baseline code",
        _run([*ffprobe, "{not_pem}"]),
    )

    # processes themselves
    def missing_exec(ep: Endpoints) -> None:
        subprocess.run(["corpus-no-such-tool-4711", "--version"], check=True, capture_output=True)

    async def missing_exec_async(ep: Endpoints) -> None:
        await asyncio.create_subprocess_exec("corpus-no-such-tool-4711", "--version")

    def not_executable(ep: Endpoints) -> None:
        subprocess.run([ep.files["not_executable"]], check=True, capture_output=True)

    def missing_cwd(ep: Endpoints) -> None:
        subprocess.run(["true"], check=True, cwd=os.path.join(ep.files["tmp"], "no-such-dir"))

    async def missing_cwd_async(ep: Endpoints) -> None:
        await asyncio.create_subprocess_exec(
            "true", cwd=os.path.join(ep.files["tmp"], "no-such-dir")
        )

    async def missing_cwd_loop(ep: Endpoints) -> None:
        cwd = os.path.join(ep.files["tmp"], "no-such-dir")
        loop = asyncio.get_running_loop()
        await loop.subprocess_exec(asyncio.SubprocessProtocol, "true", cwd=cwd)

    async def missing_cwd_anyio(ep: Endpoints) -> None:
        import anyio

        await anyio.run_process(["true"], cwd=os.path.join(ep.files["tmp"], "no-such-dir"))

    async def missing_exec_anyio(ep: Endpoints) -> None:
        import anyio

        await anyio.run_process(["corpus-no-such-tool-4711", "--version"])

    async def not_executable_async(ep: Endpoints) -> None:
        await asyncio.create_subprocess_exec(ep.files["not_executable"])

    def broken_pipe(ep: Endpoints) -> None:
        proc = subprocess.Popen(["true"], stdin=subprocess.PIPE)
        proc.wait()
        try:
            assert proc.stdin is not None
            proc.stdin.write(b"x" * 1_000_000)
            proc.stdin.flush()
        finally:
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()  # type: ignore[union-attr]

    async def broken_pipe_async(ep: Endpoints) -> None:
        proc = await asyncio.create_subprocess_exec("true", stdin=subprocess.PIPE)
        await proc.wait()
        assert proc.stdin is not None
        for _ in range(3):
            proc.stdin.write(b"x" * 1_000_000)
            await proc.stdin.drain()

    def timeout_expired(ep: Endpoints) -> None:
        subprocess.run(["sleep", "5"], timeout=T, check=True)

    def run_tool_missing(ep: Endpoints) -> None:
        from control_plane._kernel.stderr import run_tool

        run_tool(["corpus-no-such-tool-4711"], timeout=5)

    case(
        "missing_executable",
        "subprocess",
        DEP,
        "FileNotFoundError from exec: the tool is missing",
        missing_exec,
        sample=True,
    )
    case(
        "missing_executable_async",
        "subprocess",
        DEP,
        "create_subprocess_exec of a missing tool",
        missing_exec_async,
    )
    case(
        "not_executable",
        "subprocess",
        DEP,
        "PermissionError from exec: not auth_failed",
        not_executable,
        sample=True,
    )
    case("run_tool_missing", "subprocess", DEP, "run_tool's missing binary", run_tool_missing)
    case(
        "missing_cwd",
        "subprocess",
        NF | INT,
        "chdir to an absent directory before exec",
        missing_cwd,
    )
    case(
        "missing_cwd_async",
        "subprocess",
        NF | INT,
        "asyncio: chdir to an absent directory (uvloop: the same ENOENT as a missing program)",
        missing_cwd_async,
    )
    case(
        "missing_cwd_loop",
        "subprocess",
        NF | INT,
        "loop.subprocess_exec with an absent cwd",
        missing_cwd_loop,
    )
    case(
        "missing_cwd_anyio",
        "subprocess",
        NF | INT,
        "anyio.run_process with an absent cwd (it calls loop.subprocess_exec)",
        missing_cwd_anyio,
    )
    case(
        "missing_executable_anyio",
        "subprocess",
        DEP,
        "anyio.run_process of a missing tool",
        missing_exec_anyio,
    )
    case(
        "not_executable_async",
        "subprocess",
        DEP,
        "asyncio: PermissionError from exec (uvloop: without a file name)",
        not_executable_async,
    )
    case(
        "broken_pipe",
        "subprocess",
        INT,
        "writing to a child that exited: not a network error",
        broken_pipe,
        sample=True,
    )
    case(
        "broken_pipe_async",
        "subprocess",
        INT,
        "asyncio: writing to a child that exited",
        broken_pipe_async,
    )
    case("timeout_expired", "subprocess", TO, "subprocess.run(timeout=) passed", timeout_expired)
    case(
        "unknown_tool_exit",
        "subprocess",
        INT,
        "a tool without a table exits 3",
        _run([sys.executable, "-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"]),
    )


# -- GitPython: git run by a library, its stderr quoted in GitCommandError ---------------


def _gitpython_cases() -> None:
    import tempfile

    import git

    def clone(url: str) -> Callable[[Endpoints], Any]:
        def run(ep: Endpoints) -> None:
            target = tempfile.mkdtemp(dir=ep.files["tmp"], prefix="clone-")
            address = url.format(ep=ep, lo=LOOPBACK, bad=UNRESOLVABLE_HOST)
            git.Repo.clone_from(address, os.path.join(target, "r"), env=ENV)

        return run

    http = "http://{lo}:{ep.http}"
    case(
        "clone_404",
        "gitpython",
        NF,
        "Repo.clone_from of a URL that answers 404",
        clone(http + "/status/404/repo.git"),
        sample=True,
    )
    case(
        "clone_401",
        "gitpython",
        AUTH,
        "Repo.clone_from of a URL that answers 401 (no credentials, prompts disabled)",
        clone(http + "/status/401/repo.git"),
    )
    case(
        "clone_refused",
        "gitpython",
        NET,
        "Repo.clone_from of a port nobody listens on",
        clone("http://{lo}:{ep.refused}/r.git"),
    )
    case(
        "clone_dns",
        "gitpython",
        NET,
        "Repo.clone_from of a host name that does not resolve",
        clone("http://{bad}/r.git"),
    )

    def checkout(ep: Endpoints) -> None:
        git.Repo(_local_repo(ep)).git.checkout("no-such-branch")

    def no_such_path(ep: Endpoints) -> None:
        git.Repo(os.path.join(ep.files["tmp"], "no-such-repo"))

    case(
        "checkout_unknown_ref",
        "gitpython",
        NF,
        "repo.git.checkout of a branch the repository does not have",
        checkout,
        sample=True,
    )
    case("no_such_path", "gitpython", NF, "Repo() of a path that does not exist", no_such_path)

    def not_a_repo(ep: Endpoints) -> None:
        git.Repo(tempfile.mkdtemp(dir=ep.files["tmp"], prefix="plain-"))

    def no_git(ep: Endpoints) -> None:
        git.Git(ep.files["tmp"]).execute(["/nonexistent/bin/git", "status"])

    case(
        "not_a_repository",
        "gitpython",
        NF,
        "Repo() of a directory that is no repository",
        not_a_repo,
    )
    case("git_not_installed", "gitpython", DEP, "the git executable does not exist", no_git)


# -- sqlite3: a database another connection or statement holds locked --------------------


def _sqlite_cases() -> None:
    import sqlite3
    import tempfile

    def database(ep: Endpoints) -> str:
        path = os.path.join(tempfile.mkdtemp(dir=ep.files["tmp"], prefix="sqlite-"), "db")
        with contextlib.closing(sqlite3.connect(path)) as setup, setup:
            setup.execute("CREATE TABLE t (x)")
            setup.execute("INSERT INTO t VALUES (1), (2)")
        return path

    def busy(ep: Endpoints) -> None:
        path = database(ep)
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as holder:
            holder.execute("BEGIN EXCLUSIVE")
            with contextlib.closing(sqlite3.connect(path, timeout=0.05)) as writer:
                writer.execute("INSERT INTO t VALUES (3)")

    def table_locked(ep: Endpoints) -> None:
        with contextlib.closing(sqlite3.connect(database(ep))) as db:
            reading = db.execute("SELECT x FROM t")
            reading.fetchone()
            db.execute("DROP TABLE t")

    case(
        "database_is_locked",
        "sqlite",
        TO,
        "SQLITE_BUSY: another connection holds the lock past the busy timeout",
        busy,
        sample=True,
    )
    case(
        "database_table_is_locked",
        "sqlite",
        TO,
        "SQLITE_LOCKED: a statement still reads the table being dropped",
        table_locked,
    )


def all_cases() -> list[Case]:
    """Every case, built once (libraries are imported here, never by the runtime)."""
    if not CASES:
        for build in (
            _httpx_cases,
            _requests_cases,
            _aiohttp_cases,
            _websockets_cases,
            _stdlib_http_cases,
            _proxy_cases,
            _socket_cases,
            _smtp_cases,
            _ftp_cases,
            _imap_cases,
            _pop_cases,
            _grpc_cases,
            _tool_cases,
            _gitpython_cases,
            _sqlite_cases,
        ):
            build()
        ids = [c.id for c in CASES]
        assert len(ids) == len(set(ids)), "duplicate case ids"
    return CASES


def by_id(ids: Iterable[str]) -> list[Case]:
    wanted = set(ids)
    return [c for c in all_cases() if c.id in wanted]
