"""The kit's runs never leave loopback: a pack that reaches elsewhere fails, naming where.

Every host here is harmless even if the guard were broken: lookups use
``AI_NUMERICHOST`` (resolved locally or refused locally, never by a DNS server) and the
only connections go to a server this test runs on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from control_plane import CodeDoc, Context, Pack, hookimpl
from control_plane._features.kit.loopback import LoopbackOnly, NetworkRefused, is_loopback_host
from control_plane.testing import ConformanceError, PackKit, PackTarget, ServedPack

#: A name that resolves nowhere without asking a resolver (AI_NUMERICHOST).
OUTSIDE_NAME = "downstream.example"


def _reach(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Resolve (and with ``connect``, connect to) the host of the input; let errors go."""
    host, port = doc["host"], int(doc.get("port", 443))
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except OSError:
        if doc.get("swallow"):  # a pack that hides its downstream failing
            return {"answer": "offline"}
        raise
    if doc.get("connect"):
        with socket.create_connection(infos[0][4][:2], timeout=5) as conn:
            conn.sendall(b"ping")
            return {"answer": conn.recv(16).decode()}
    return {"answer": str(infos[0][4][0])}


def _reach_by_name(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    socket.getaddrinfo(doc["host"], 80)  # a real lookup, unless the guard answers first
    return {"answer": "resolved"}


class _Plugin:
    @hookimpl
    def register_packs(self, register: Any) -> None:
        output = {
            "type": "object",
            "properties": {
                "answer": {"type": "string"},
                "error": {"properties": {"code": {"enum": ["unreachable"]}}},
            },
        }
        codes = {
            "unreachable": CodeDoc(
                "The host could not be reached.",
                retryable=True,
                recovery_hint="Retry later.",
                absorbs=("network_error", "timeout"),
            )
        }
        schema = {
            "type": "object",
            "required": ["host"],
            "properties": {
                "host": {"type": "string"},
                "port": {"type": "integer"},
                "connect": {"type": "boolean"},
                "swallow": {"type": "boolean"},
            },
        }
        register(Pack("net.reach", "1.0.0", "Reach a host.", schema, output, _reach, codes=codes))
        register(
            Pack(
                "net.lookup",
                "1.0.0",
                "Resolve a name.",
                schema,
                output,
                _reach_by_name,
                codes=codes,
            )
        )


@pytest.fixture
def echo_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 answering ``pong``: the loopback downstream."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(10)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(16)
                conn.sendall(b"pong")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        # close() alone does not wake a thread blocked in accept() (it waited out the
        # 10 s timeout, twice per run); shutdown() on the listening socket does, at once.
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_RDWR)
        server.close()
        thread.join(10)
        assert not thread.is_alive()


def test_a_pack_reaching_beyond_loopback_fails_the_kit_naming_the_host() -> None:
    with PackKit(PackTarget("net.reach", plugin=_Plugin())) as kit:
        with pytest.raises(ConformanceError) as caught:
            kit.invoke({"host": "192.0.2.7", "port": 8443})
        message = str(caught.value)
        assert "tried to reach beyond loopback (getaddrinfo 192.0.2.7:8443)" in message
        assert "PackTarget(network=True)" in message and "seams=" in message
        with pytest.raises(ConformanceError, match=rf"getaddrinfo {OUTSIDE_NAME}:443"):
            kit.invoke({"host": OUTSIDE_NAME})


def test_the_refusal_is_caught_even_when_the_pack_hides_it() -> None:
    # The handler swallows the refused lookup and answers: a conforming-looking success,
    # still a failed kit run; and a propagated refusal maps onto the vocabulary, still fails.
    with PackKit(PackTarget("net.reach", plugin=_Plugin())) as kit:
        with pytest.raises(ConformanceError, match="beyond loopback"):
            kit.invoke({"host": "192.0.2.7", "swallow": True})
        with pytest.raises(ConformanceError, match="beyond loopback"):
            kit.invoke({"host": "192.0.2.7"})
        assert kit.invoke({"host": "127.0.0.1", "swallow": True}).result == {"answer": "127.0.0.1"}


def test_generated_inputs_that_reach_out_fail_the_kit() -> None:
    with (
        PackKit(PackTarget("net.reach", plugin=_Plugin())) as kit,
        pytest.raises(ConformanceError, match="beyond loopback"),
    ):
        kit.check_generated_inputs(max_examples=10, faults=False)


def test_loopback_is_allowed(echo_server: int) -> None:
    with PackKit(PackTarget("net.reach", plugin=_Plugin())) as kit:
        outcome = kit.invoke({"host": "127.0.0.1", "port": echo_server, "connect": True})
    assert outcome.result == {"answer": "pong"}


def test_invalid_names_fail_as_dns_failures_without_a_lookup() -> None:
    with PackKit(PackTarget("net.lookup", plugin=_Plugin())) as kit:
        outcome = kit.invoke({"host": "api.downstream.invalid"})
    # gaierror -> network_error -> unreachable, and nothing was refused: .invalid is fine.
    assert outcome.code == "unreachable"
    guard = LoopbackOnly()
    with guard.active(), pytest.raises(socket.gaierror, match=r"\.invalid"):
        socket.getaddrinfo("api.downstream.invalid", 80)
    assert guard.take() == []


def test_network_true_lets_the_pack_out() -> None:
    target = PackTarget("net.reach", plugin=_Plugin(), network=True)
    with PackKit(target) as kit:
        # AI_NUMERICHOST on an address literal: resolved locally, no packet sent.
        assert kit.invoke({"host": "192.0.2.7"}).result == {"answer": "192.0.2.7"}


def test_pack_grpc_refuses_too(echo_server: int) -> None:
    with ServedPack(PackTarget("net.reach", plugin=_Plugin())) as served:
        doc = {"host": "127.0.0.1", "port": echo_server, "connect": True}
        assert served.invoke(doc).result == {"answer": "pong"}
        with pytest.raises(ConformanceError, match=r"getaddrinfo 192\.0\.2\.7:443"):
            served.status({"host": "192.0.2.7"})


def test_the_guard_is_inert_outside_the_kit() -> None:
    guard = LoopbackOnly()
    with guard.active(), pytest.raises(NetworkRefused):
        socket.getaddrinfo("192.0.2.7", 80, flags=socket.AI_NUMERICHOST)
    assert guard.take() == ["getaddrinfo 192.0.2.7:80"]
    assert socket.getaddrinfo("192.0.2.7", 80, flags=socket.AI_NUMERICHOST)  # no guard now
    assert all(is_loopback_host(h) for h in ("localhost", "127.0.0.1", "::1", "[::1]", None))
    assert not any(is_loopback_host(h) for h in ("192.0.2.7", "example.invalid", "10.0.0.1"))
