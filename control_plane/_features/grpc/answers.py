"""The answer budget: one server-wide bound on the bytes of answers held unsent.

An answer handed to grpc stays in the process until its caller reads it: a caller whose
HTTP/2 window is 0 never does, and each connection may keep 100 calls open (1,000
connections). :class:`AnswerBudget` counts the bytes of every ``ControlPlaneService``
answer from the moment it is handed to grpc until grpc is done with the call (sent, or the
call ended: the call's done callback), in total and per connection (by peer). While the
total is at the budget, new calls are refused ``overloaded`` with ``RetryInfo`` (nothing
ran); an answer that takes the total past it closes the connections holding the most unread
bytes, largest first, until what the others hold fits (their answers go with them).
docs/reliability.md, "The resource model".

An answer is handed to grpc already serialized (:class:`Answer`): the pack's result is
copied into the reply once, not into a protobuf message and then into its serialization.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ipaddress
import logging
import os
import socket
from collections.abc import Callable, Collection
from typing import Any

import grpc
from google.protobuf.message import Message

from control_plane._features.grpc import status as wire
from control_plane._kernel.rejection import Rejection

__all__ = [
    "ANSWERS_SCOPE",
    "DEFAULT_ANSWER_BUDGET",
    "Answer",
    "AnswerBudget",
    "answer_bytes",
    "close_connection",
    "refused_status",
    "trim_freed_memory",
]

logger = logging.getLogger("capability_packs.answers")

#: Bytes of answers the server may hold unsent, over all connections (128 MiB). The
#: process holds about twice this (each answer is one copy in Python and one in grpc core
#: until it is sent), more during a burst (docs/reliability.md).
DEFAULT_ANSWER_BUDGET = 128 * 1024 * 1024
#: Seconds between the answers held falling low and the trim (:meth:`AnswerBudget._trim_soon`).
TRIM_AFTER = 0.5
#: ``ErrorInfo`` metadata ``scope`` of a call refused by the budget.
ANSWERS_SCOPE = "answers"


class Answer:
    """A reply already serialized: grpc sends :attr:`raw` as it is (:func:`answer_bytes`).
    ``pack_version`` is there for who looks at the reply on its way (the tracing
    interceptor)."""

    __slots__ = ("pack_version", "raw")

    def __init__(self, raw: bytes, pack_version: str = "") -> None:
        self.raw = raw
        self.pack_version = pack_version


def answer_bytes(reply: Answer | Message) -> bytes:
    """The bytes grpc sends for ``reply`` (the response serializer of every method):
    an :class:`Answer`'s own, without a copy; a message's serialization."""
    if type(reply) is Answer:
        return reply.raw
    assert isinstance(reply, Message)
    return reply.SerializeToString()


def refused_status(
    limit: int, retry_after: float, pack: str = "", request_id: str = ""
) -> grpc.Status:
    """The rich ``RESOURCE_EXHAUSTED`` status of a call refused by the budget (the
    ``overloaded`` rejection; nothing ran)."""
    rejection = Rejection.of(
        "overloaded",
        f"overloaded: the server holds {limit} bytes of answers its callers have not read "
        f"(its answer budget); retry after {retry_after:g}s",
        pack=pack,
        request_id=request_id,
        retry_after=retry_after,
        metadata={"scope": ANSWERS_SCOPE, "limit": str(limit)},
    )
    return wire.refusal(rejection)


#: Closes the connection of a peer (grpc's ``context.peer()``); whether it found it.
Closer = Callable[[str], bool]


class AnswerBudget:
    """Bytes of answers held unsent, in total and per peer, against ``limit``.

    Runs on the server's event loop (one thread): plain integers suffice. The table holds
    one entry per connection with an answer held, so at most the connections the server
    admits.
    """

    def __init__(
        self,
        limit: int,
        closer: Closer | None = None,
        trimmer: Callable[[], object] | None = None,
    ) -> None:
        if limit < 1:
            raise ValueError(f"the answer budget must be >= 1 byte, not {limit}")
        self.limit = limit
        #: Run (in a thread, shortly after) once the answers held fall back below a quarter
        #: of the budget after holding more than half of it, and once a connection closed
        #: for the budget has let go of all its answers: the memory they took goes back to
        #: the system (:func:`trim_freed_memory`). At most one is waiting at a time.
        self._trimmer = trimmer
        self._high = False
        self._trim_pending = False
        #: Times the trimmer was started.
        self.trims = 0
        #: Bytes of answers handed to grpc and not yet sent.
        self.held = 0
        #: Connections closed for holding the most unread bytes; calls refused.
        self.closed = 0
        self.refused = 0
        self._closer = closer
        self._by_peer: dict[str, int] = {}
        self._closing: set[str] = set()

    def full(self) -> bool:
        """Whether a new call must be refused (counted when it is)."""
        if self.held < self.limit:
            return False
        self.refused += 1
        return True

    def read(self) -> tuple[int, int]:
        """(bytes held, connections closed): the ``answer_*`` metrics."""
        return self.held, self.closed

    def hold(self, context: Any, reply: Answer | Message) -> None:
        """Count ``reply``, handed to grpc for the call of ``context``, until the call is
        done; past the budget, close the largest holders."""
        size = len(reply.raw) if type(reply) is Answer else reply.ByteSize()  # type: ignore[union-attr]
        peer = str(context.peer())
        self.held += size
        self._by_peer[peer] = self._by_peer.get(peer, 0) + size
        context.add_done_callback(lambda _: self._release(peer, size))
        if self.held > self.limit // 2:
            self._high = True
        if self.held > self.limit:
            self._shed()

    def _release(self, peer: str, size: int) -> None:
        self.held -= size
        left = self._by_peer.get(peer, 0) - size
        if left > 0:
            self._by_peer[peer] = left
        else:
            self._by_peer.pop(peer, None)
            if peer in self._closing:  # a closed connection's answers are all gone
                self._closing.discard(peer)
                self._trim_soon()
        if self._high and self.held <= self.limit // 4:
            self._high = False
            self._trim_soon()

    def _trim_soon(self) -> None:
        """The trimmer, in a thread, once grpc has let go of the calls just ended (their
        core buffers go with the call, a moment after its done callback)."""
        trimmer = self._trimmer
        if trimmer is None or self._trim_pending:
            return
        self.trims += 1
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on a loop (a test's direct call)
            trimmer()
            return
        self._trim_pending = True

        def trim() -> None:
            self._trim_pending = False
            loop.run_in_executor(None, trimmer)

        loop.call_later(TRIM_AFTER, trim)

    def _shed(self) -> None:
        """Close the connections holding the most unread bytes until the others' fit."""
        kept = self.held - sum(self._by_peer.get(p, 0) for p in self._closing)
        if kept <= self.limit or self._closer is None:
            return
        largest = sorted(
            (p for p in self._by_peer if p not in self._closing),
            key=self._by_peer.__getitem__,
            reverse=True,
        )
        for peer in largest:
            if kept <= self.limit:
                break
            holds = self._by_peer[peer]
            if not self._closer(peer):
                continue
            self._closing.add(peer)
            self.closed += 1
            kept -= holds
            logger.warning(
                "closed the connection of %s: it held %d bytes of answers unread "
                "(answer budget %d bytes)",
                peer,
                holds,
                self.limit,
                extra={"event": "connection_closed", "peer": peer, "reason": ANSWERS_SCOPE},
            )


def _peer_address(peer: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int] | None:
    """``ipv4:1.2.3.4:5`` / ``ipv6:[::1]:5`` (grpc's peer) as an address and port."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return None
    host, _, port = rest.rpartition(":")
    try:
        return _plain_ip(host.strip("[]").split("%", 1)[0]), int(port)
    except ValueError:
        return None


def _plain_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address, an IPv4-mapped IPv6 one as its IPv4 address."""
    address = ipaddress.ip_address(text)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def close_connection(peer: str, ports: Collection[int]) -> bool:
    """Shut down the server's TCP connection to ``peer`` (accepted on one of ``ports``):
    grpc core sees it end, fails its calls and frees what they held. ``False`` when no
    such connection is open (a Unix socket's peer has no address to tell it by)."""
    wanted = _peer_address(peer)
    if wanted is None:
        return False
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc/self/fd"):
            if _shut_if(int(name), wanted, ports):
                return True
    return False


def _shut_if(
    fd: int,
    wanted: tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int],
    ports: Collection[int],
) -> bool:
    try:
        if not os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
            return False
        copy = os.dup(fd)
    except OSError:  # closed meanwhile
        return False
    with socket.socket(fileno=copy) as sock:
        try:
            if sock.family not in (socket.AF_INET, socket.AF_INET6):
                return False
            if sock.type != socket.SOCK_STREAM or sock.getsockname()[1] not in ports:
                return False
            host, port = sock.getpeername()[:2]
            if (_plain_ip(host), port) != wanted:
                return False
            sock.shutdown(socket.SHUT_RDWR)  # the connection, not only this copy
        except (OSError, ValueError):
            return False
    return True


def trim_freed_memory() -> bool:
    """Give the memory the C allocator holds free back to the system (glibc's
    ``malloc_trim``: every arena, free pages inside the heaps too). A slow reader's dropped
    answers are large buffers that glibc keeps in its heaps once it has freed one such
    (it raises its mmap threshold to their size): after the attacker left, the server kept
    ~45-85 MiB of the ~90 MiB they had taken; trimmed, it went back to within ~3 MiB of its
    size before. ``False`` where the C library has no ``malloc_trim`` (not glibc).

    Not a fixed mmap threshold instead: every large result would then be a fresh mapping,
    page-faulted on each call (a 2.5 MB result's success path took 2.3x the CPU)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes = (ctypes.c_size_t,)
    trim.restype = ctypes.c_int
    return bool(trim(0))
