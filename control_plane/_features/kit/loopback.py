""":class:`LoopbackOnly`: while the kit runs a pack, no connection or DNS lookup leaves loopback."""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["LoopbackOnly", "NetworkRefused", "is_loopback_host"]

_LOCK = threading.Lock()
_ACTIVE: list[LoopbackOnly] = []
_INSTALLED: list[bool] = []  # [True] once the audit hook is in
_EVENTS = frozenset(
    {
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
        "socket.connect",
        "socket.sendto",
        "socket.sendmsg",
    }
)


class NetworkRefused(ConnectionRefusedError):
    """A pack under the kit tried to reach beyond loopback."""


def is_loopback_host(host: object) -> bool:
    """``localhost``, a loopback address, or nothing to resolve (``None``, empty)."""
    if host is None or host in ("", b""):
        return True
    text = host.decode() if isinstance(host, bytes) else str(host)
    text = text.strip("[]").rstrip(".").lower()
    if text == "localhost" or text.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(text.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _is_invalid(host: object) -> bool:
    text = host.decode() if isinstance(host, bytes) else str(host)
    return text.rstrip(".").lower().endswith(".invalid") or text.lower() == "invalid"


def _target(event: str, args: tuple[Any, ...]) -> object:
    """The host an audit event is about (``None`` for local-only sockets)."""
    if event == "socket.connect" or event in ("socket.sendto", "socket.sendmsg"):
        address = args[1] if len(args) > 1 else None
        if isinstance(address, tuple) and address:
            return address[0]
        return None  # a Unix socket path, or no address
    return args[0] if args else None


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _ACTIVE or event not in _EVENTS:
        return
    host = _target(event, args)
    if is_loopback_host(host):
        return
    if event != "socket.connect" and _is_invalid(host):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known (.invalid)")
    guard = _ACTIVE[-1]
    port = args[1] if event == "socket.getaddrinfo" and len(args) > 1 else None
    if event == "socket.connect" and isinstance(args[1], tuple) and len(args[1]) > 1:
        port = args[1][1]
    where = f"{host}:{port}" if port is not None else str(host)
    guard.record(f"{event.removeprefix('socket.')} {where}")
    raise NetworkRefused(f"the capability-packs kit refused {where}: its runs stay on loopback")


def _install() -> None:
    with _LOCK:
        if not _INSTALLED:
            sys.addaudithook(_hook)  # cannot be removed; inert while no guard is active
            _INSTALLED.append(True)


class LoopbackOnly:
    """Refuse traffic beyond loopback while :meth:`active`; keep what was refused."""

    def __init__(self) -> None:
        self._refused: list[str] = []
        self._lock = threading.Lock()

    def record(self, what: str) -> None:
        with self._lock:
            self._refused.append(what)

    def take(self) -> list[str]:
        """What was refused since the last call (de-duplicated, in order)."""
        with self._lock:
            refused, self._refused = self._refused, []
        return list(dict.fromkeys(refused))

    @contextmanager
    def active(self) -> Iterator[LoopbackOnly]:
        _install()
        with _LOCK:
            _ACTIVE.append(self)
        try:
            yield self
        finally:
            with _LOCK:
                _ACTIVE.remove(self)


def refusal_message(pack: str, refused: list[str]) -> str:
    """The problem line the kit reports for refused traffic."""
    return (
        f"pack {pack!r} tried to reach beyond loopback ({', '.join(refused)}): the kit's "
        "runs never leave this machine. Stub the seam that reaches it "
        "(PackTarget(seams={'pkg.module:function': stub})), point sample inputs at a "
        "server of your test on 127.0.0.1 or at a name under .invalid, or, to test "
        "against a real downstream on purpose, PackTarget(network=True)"
    )
