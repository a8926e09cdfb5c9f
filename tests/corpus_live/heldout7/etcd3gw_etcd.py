"""etcd3gw (OpenStack's client for etcd's grpc-gateway, JSON over HTTP on ``/v3/``) against a
real etcd 3.4 (Debian's ``etcd-server``): one server with authentication enabled, a 4 KiB
request limit and a compacted history, one whose 1 MiB backend quota is full (the NOSPACE
alarm). etcd's gRPC status goes through the gateway as an HTTP status and a JSON body
``{"error", "message", "code"}``; etcd3gw raises ``Etcd3Exception`` (or a subclass chosen by
status) carrying that body. Authentication is the gateway's ``/v3/auth/authenticate`` and the
token in the ``Authorization`` header, as deployments using etcd3gw do it."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout2._daemons import Etcd, etcd

Ctx = Served[Etcd]

FAM = family(
    "etcd3gw",
    "etcd 3.4 (Debian etcd-server) through its grpc-gateway, real",
    served(etcd),
    half="heldout7",
)


def _client(port: int, host: str = LOOPBACK, timeout: float = 3) -> Any:
    from etcd3gw.client import Etcd3Client

    return Etcd3Client(host=host, port=port, timeout=timeout, api_path="/v3/")


def _login(c: Ctx, user: str = "app", password: str = "app-pw") -> Any:
    client = _client(c.server.port)
    answer = client.post(
        client.get_url("/auth/authenticate"), json={"name": user, "password": password}
    )
    client.session.headers["Authorization"] = answer["token"]
    return client


def _no_token(c: Ctx) -> None:
    _client(c.server.port).put("app/x", "v")


def _reader_put(c: Ctx) -> None:
    _login(c, "reader", "reader-pw").put("app/x", "v")


def _outside_prefix(c: Ctx) -> None:
    _login(c).get("other/k")


def _compacted(c: Ctx) -> None:
    _login(c).get("app/k", revision=c.server.compacted_rev)


def _future(c: Ctx) -> None:
    _login(c).get("app/k", revision=10_000_000)


def _too_large(c: Ctx) -> None:
    _login(c).put("app/big", "x" * 8192)


def _nospace(c: Ctx) -> None:
    _client(c.server.full_port).put("more/k", "v")


def _lease_missing(c: Ctx) -> None:
    from etcd3gw.lease import Lease

    client = _login(c)
    Lease(123456789, client).revoke()


def _watch_nothing(c: Ctx) -> None:
    _client(c.server.full_port, timeout=3).watch_once("quiet/key", timeout=0.5)


FAM.add(
    "wrong_password",
    AUTH,
    "authenticate: etcdserver: authentication failed, invalid user ID or password",
    lambda c: _login(c, "app", "bad"),
)
FAM.add(
    "unknown_user",
    AUTH,
    "authenticate as a user that does not exist: authentication failed",
    lambda c: _login(c, "ghost", "ghost-pw"),
)
FAM.add("no_token", AUTH, "auth is enabled, no token sent: user name is empty", _no_token)
FAM.add("reader_put", AUTH, "etcdserver: permission denied (read-only role writes)", _reader_put)
FAM.add(
    "outside_prefix",
    AUTH,
    "etcdserver: permission denied (range outside the role's app/ prefix)",
    _outside_prefix,
)
FAM.add(
    "compacted",
    NF | INT,
    "mvcc: required revision has been compacted (the old revision is gone)",
    _compacted,
)
FAM.add(
    "future_revision",
    INT,
    "mvcc: required revision is a future revision (the caller's revision)",
    _future,
)
FAM.add(
    "too_large",
    INT,
    "etcdserver: request is too large (8 KiB value, --max-request-bytes 4096)",
    _too_large,
)
FAM.add(
    "nospace",
    QUOTA,
    "etcdserver: mvcc: database space exceeded (1 MiB backend quota, NOSPACE alarm)",
    _nospace,
)
FAM.add("lease_missing", NF, "etcdserver: requested lease not found", _lease_missing)
FAM.add(
    "watch_quiet",
    TO,
    "watch_once: no event on the key within the caller's 0.5 s (WatchTimedOut)",
    _watch_nothing,
)
FAM.add(
    "refused",
    NET,
    "ConnectionFailedError: nothing listens",
    lambda c: _client(c.net.closed).get("app/k"),
)
FAM.add(
    "dns",
    NET,
    "ConnectionFailedError: host does not resolve (.invalid)",
    lambda c: _client(2379, host=UNRESOLVABLE).get("app/k"),
)
FAM.add(
    "silent",
    TO,
    "ConnectionTimeoutError: the server never answers (timeout 1 s)",
    lambda c: _client(c.net.silent, timeout=1).get("app/k"),
)
FAM.add(
    "dropped",
    NET,
    "ConnectionFailedError: the peer closes at once",
    lambda c: _client(c.net.close_now).get("app/k"),
)
