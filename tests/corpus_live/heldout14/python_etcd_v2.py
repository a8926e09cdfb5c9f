"""python-etcd (the ``etcd`` module, a client of etcd's v2 keys API over urllib3) against a
real etcd 3.4 (Debian's ``etcd-server``) started by the family's setup with ``--enable-v2``
on its own client and peer ports and data directory. The setup turns v2 authentication on
through etcd's own v2 auth API (a root user, an ``app`` user whose role may read and write
``/app/*``, the guest role's rights revoked). Every failure is etcd's own v2 error answer or
a real socket on 127.0.0.1. Nothing is faked."""

from __future__ import annotations

import base64
import contextlib
import json
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import etcd  # type: ignore[import-untyped]

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Served,
    daemon,
    family,
    free_port,
    require,
    served,
)


@dataclass
class EtcdV2:
    port: int


Ctx = Served[EtcdV2]


def _api(port: int, method: str, path: str, body: Any, auth: str | None = None) -> None:
    req = urllib.request.Request(
        f"http://{LOOPBACK}:{port}{path}",
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    if auth:
        req.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    with urllib.request.urlopen(req, timeout=10) as resp:
        resp.read()


def _start(stack: contextlib.ExitStack, work: Path) -> EtcdV2:
    require("etcd")
    port, peer = free_port(), free_port()
    daemon(
        stack,
        [
            "etcd",
            "--name",
            "v2",
            "--data-dir",
            str(work / "etcd-v2"),
            "--enable-v2=true",
            "--listen-client-urls",
            f"http://{LOOPBACK}:{port}",
            "--advertise-client-urls",
            f"http://{LOOPBACK}:{port}",
            "--listen-peer-urls",
            f"http://{LOOPBACK}:{peer}",
            "--initial-advertise-peer-urls",
            f"http://{LOOPBACK}:{peer}",
            "--initial-cluster",
            f"v2=http://{LOOPBACK}:{peer}",
        ],
        port,
        log=work / "etcd-v2.log",
    )
    setup = etcd.Client(host=LOOPBACK, port=port, read_timeout=10)
    setup.write("/app/k", "v1")
    setup.write("/app/dir/leaf", "x")
    _api(port, "PUT", "/v2/auth/users/root", {"user": "root", "password": "root-pw"})
    _api(
        port,
        "PUT",
        "/v2/auth/roles/app",
        {"role": "app", "permissions": {"kv": {"read": ["/app/*"], "write": ["/app/*"]}}},
    )
    _api(port, "PUT", "/v2/auth/users/app", {"user": "app", "password": "app-pw", "roles": ["app"]})
    _api(port, "PUT", "/v2/auth/enable", None)
    _api(
        port,
        "PUT",
        "/v2/auth/roles/guest",
        {"role": "guest", "revoke": {"kv": {"read": ["/*"], "write": ["/*"]}}},
        auth="root:root-pw",
    )
    return EtcdV2(port)


FAM = family(
    "python-etcd",
    "python-etcd against etcd 3.4 with its v2 API (Debian etcd-server), real",
    served(_start),
    half="heldout14",
)


def _client(
    c: Ctx,
    *,
    user: str | None = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: int | None = None,
    timeout: float = 1,
) -> Any:
    return etcd.Client(
        host=host,
        port=c.server.port if port is None else port,
        read_timeout=timeout,
        username=user,
        password=password if user else None,
    )


def _do(op: Callable[[Any], Any], **kw: Any) -> Callable[[Ctx], None]:
    return lambda c: op(_client(c, **kw))


FAM.add(
    "key_not_found", NF, "the key /app/ghost does not exist", _do(lambda e: e.read("/app/ghost"))
)
FAM.add(
    "already_exists",
    EXISTS,
    "prevExist=false on a key that exists",
    _do(lambda e: e.write("/app/k", "v2", prevExist=False)),
)
FAM.add(
    "compare_failed",
    INT,
    "compare-and-swap: prevValue does not match",
    _do(lambda e: e.write("/app/k", "v3", prevValue="not-this")),
)
FAM.add(
    "not_a_file",
    INT,
    "a value written over a directory",
    _do(lambda e: e.write("/app/dir", "v")),
)
FAM.add(
    "dir_not_empty",
    INT,
    "a directory deleted without recursive",
    _do(lambda e: e.delete("/app/dir", dir=True)),
)
FAM.add(
    "bad_ttl",
    INT,
    "the caller's TTL is not a number",
    _do(lambda e: e.write("/app/t", "v", ttl="soon")),
)
FAM.add(
    "wrong_password",
    AUTH,
    "etcd refuses the basic-auth credentials",
    _do(lambda e: e.read("/app/k"), password="nope"),
)
FAM.add(
    "guest_denied",
    AUTH,
    "no credentials: the guest role's rights are revoked",
    _do(lambda e: e.read("/app/k"), user=None),
)
FAM.add(
    "outside_role",
    AUTH,
    "the app user writes a key outside its role's /app/*",
    _do(lambda e: e.write("/other/k", "v")),
)
FAM.add(
    "watch_timeout",
    TO,
    "a watch on a key nobody changes: the 1 s read timeout expires",
    _do(lambda e: e.read("/app/k", wait=True, waitIndex=10_000, timeout=1)),
)
FAM.add("refused", NET, "nothing listens", lambda c: _client(c, port=c.net.closed).read("/app/k"))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    lambda c: _client(c, host=UNRESOLVABLE, port=2379).read("/app/k"),
)
FAM.add(
    "silent",
    TO,
    "the server accepts and never answers: a 0.3 s read timeout, urllib3's retries",
    lambda c: _client(c, port=c.net.silent, timeout=0.3).read("/app/k"),
)
FAM.add(
    "dropped",
    NET,
    "the server closes the connection without a word",
    lambda c: _client(c, port=c.net.close_now).read("/app/k"),
)
