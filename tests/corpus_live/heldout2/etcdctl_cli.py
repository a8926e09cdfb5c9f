"""``etcdctl`` (Debian's etcd-client, API v3) against a real etcd 3.4 with auth enabled: the
pack sees ``CalledProcessError`` with the tool's stderr (``Error: etcdserver: ...``; for a
server it cannot reach, gRPC's retry warnings and a last ``context deadline exceeded``)."""

from __future__ import annotations

import os
import subprocess
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
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
from corpus_live.heldout2._daemons import ETCD_ROOT, Etcd, etcd

Ctx = Served[Etcd]

FAM = family("etcdctl", "etcd 3.4 (Debian), real, auth enabled", served(etcd), half="heldout2")


def _ctl(*args: str, user: str | None = "app:app-pw", endpoint: Any = None) -> Any:
    def run(ctx: Ctx) -> None:
        ep = ctx.server.endpoint if endpoint is None else endpoint(ctx)
        argv = ["etcdctl", f"--endpoints={ep}", "--dial-timeout=1s", "--command-timeout=3s"]
        if user:
            argv.append(f"--user={user}")
        subprocess.run(
            [*argv, *args],
            capture_output=True,
            check=True,
            timeout=20,
            env=dict(os.environ, ETCDCTL_API="3"),
        )

    return run


def _at(port: Any) -> Any:
    return lambda ctx: f"http://{LOOPBACK}:{port(ctx)}"


FAM.add(
    "wrong_password",
    AUTH,
    "etcdserver: authentication failed, invalid user ID or password",
    _ctl("get", "app/k", user="app:nope"),
)
FAM.add(
    "unknown_user",
    AUTH,
    "authentication failed for a user that does not exist",
    _ctl("get", "app/k", user="ghost:x"),
)
FAM.add(
    "permission_denied",
    AUTH,
    "etcdserver: permission denied (a read-only role writes)",
    _ctl("put", "app/k", "v", user="reader:reader-pw"),
)
FAM.add(
    "user_exists",
    EXISTS,
    "etcdserver: user name already exists",
    _ctl("user", "add", "app:other-pw", user=ETCD_ROOT),
)
FAM.add(
    "role_missing",
    NF,
    "etcdserver: role name not found",
    _ctl("role", "get", "ghost-role", user=ETCD_ROOT),
)
FAM.add(
    "lease_missing",
    NF,
    "etcdserver: requested lease not found",
    _ctl("lease", "revoke", "694d7c5a3f1e2b11"),
)
FAM.add(
    "compacted",
    NF | INT,
    "etcdserver: mvcc: required revision has been compacted (that revision is gone)",
    lambda ctx: _ctl("get", "app/k", f"--rev={ctx.server.compacted_rev}")(ctx),
)
FAM.add(
    "future_revision",
    INT,
    "etcdserver: mvcc: required revision is a future revision (the pack's input)",
    _ctl("get", "app/k", "--rev=99999999"),
)
FAM.add(
    "too_large",
    INT,
    "etcdserver: request is too large (over --max-request-bytes): never passes",
    _ctl("put", "app/big", "x" * 8192),
)
FAM.add(
    "space_exceeded",
    QUOTA,
    "etcdserver: mvcc: database space exceeded (the backend quota is full: an operator "
    "must compact, defragment and disarm the alarm)",
    _ctl("put", "fill/more", "v", user=None, endpoint=_at(lambda c: c.server.full_port)),
)
FAM.add(
    "refused",
    NET | TO,
    "nothing listens: the warning says 'all SubConns are in TransientFailure', the last "
    "line 'context deadline exceeded' (retry either way)",
    _ctl("get", "app/k", endpoint=_at(lambda c: c.net.closed)),
)
FAM.add(
    "dns",
    NET | TO,
    "host does not resolve (the last line: context deadline exceeded)",
    _ctl("get", "app/k", endpoint=lambda c: f"http://{UNRESOLVABLE}:2379"),
)
FAM.add(
    "silent",
    TO,
    "server never answers the HTTP/2 handshake",
    _ctl("get", "app/k", endpoint=_at(lambda c: c.net.silent)),
)
FAM.add(
    "dropped",
    NET | TO,
    "closed at once (the last line: context deadline exceeded)",
    _ctl("get", "app/k", endpoint=_at(lambda c: c.net.close_now)),
)
