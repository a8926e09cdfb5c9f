"""Bearer-token auth, TLS and mutual TLS against the real server, with generated certs.

Calls without valid credentials must end with ``UNAUTHENTICATED`` (or fail the TLS
handshake) and reach no pack; a pack's own ``auth_failed`` stays ``PERMISSION_DENIED``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import trustme
from reliability_support import Background
from server_support import ServerThread, load_test_packs

from control_plane._features.cli import cli
from control_plane._features.grpc.auth import (
    AuthConfigError,
    ClientTls,
    ServerTls,
    TokenAuth,
    channel_credentials,
    is_loopback,
    read_token_file,
)
from control_plane._features.grpc.client import AuthFailed, Client, TransportError
from control_plane._kernel.hookspecs import hookimpl

TOKEN = "t0ken-" + "a" * 32
OTHER = "t0ken-" + "b" * 32


class Certs:
    def __init__(self, root: Path) -> None:
        ca = trustme.CA()
        other_ca = trustme.CA()
        self.ca = root / "ca.pem"
        ca.cert_pem.write_to_path(str(self.ca))
        self.other_ca = root / "other-ca.pem"
        other_ca.cert_pem.write_to_path(str(self.other_ca))
        server = ca.issue_cert("localhost", "127.0.0.1")
        self.cert, self.key = root / "server.pem", root / "server.key"
        self.cert.write_bytes(b"".join(b.bytes() for b in server.cert_chain_pems))
        server.private_key_pem.write_to_path(str(self.key))
        client = ca.issue_cert("client.example")
        self.client_cert, self.client_key = root / "client.pem", root / "client.key"
        self.client_cert.write_bytes(b"".join(b.bytes() for b in client.cert_chain_pems))
        client.private_key_pem.write_to_path(str(self.client_key))
        rogue = other_ca.issue_cert("client.example")
        self.rogue_cert, self.rogue_key = root / "rogue.pem", root / "rogue.key"
        self.rogue_cert.write_bytes(b"".join(b.bytes() for b in rogue.cert_chain_pems))
        rogue.private_key_pem.write_to_path(str(self.rogue_key))


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return Certs(tmp_path_factory.mktemp("certs"))


class Counting:
    """Counts calls that reached the invoke pipeline (admitted to a pack)."""

    def __init__(self, server: ServerThread) -> None:
        assert server.server is not None
        self.calls = 0
        server.server.invoker.hooks.register(self)

    @hookimpl
    def call_started(self) -> None:
        self.calls += 1


@pytest.fixture(scope="module")
def token_server() -> Iterator[ServerThread]:
    srv = ServerThread(load_test_packs(), auth=TokenAuth([TOKEN, OTHER])).start()
    yield srv
    srv.stop()


def _status(exc: pytest.ExceptionInfo[TransportError]) -> grpc.StatusCode:
    return exc.value.status


def test_calls_without_a_valid_token_are_unauthenticated_and_reach_no_pack(
    token_server: ServerThread,
) -> None:
    counting = Counting(token_server)
    background = Background(
        token_server.target, client_factory=lambda target: Client(target, token=OTHER)
    )
    with background:
        _refuse_bad_tokens(token_server)
    background.assert_unaffected()
    assert counting.calls == background.ok  # only the authorized calls reached a pack
    counting.calls = 0
    for token in (TOKEN, OTHER):
        with Client(token_server.target, token=token) as client:
            assert client.invoke("test.echo", {"a": 1}, timeout=5).result["echo"] == {"a": 1}
            assert "test.echo" in client.list_packs(timeout=5).names()
            assert client.health(timeout=5) == "SERVING"
    assert counting.calls == 2


def _refuse_bad_tokens(token_server: ServerThread) -> None:
    for token in (None, "wrong-" + "x" * 30, TOKEN + "x", TOKEN[:-1]):
        with Client(token_server.target, token=token) as client:
            with pytest.raises(TransportError) as caught:
                client.invoke("test.echo", {"a": 1}, timeout=5)
            assert _status(caught) == grpc.StatusCode.UNAUTHENTICATED
            assert "Bearer" in caught.value.details
            with pytest.raises(TransportError) as listing:
                client.list_packs(timeout=5)
            assert _status(listing) == grpc.StatusCode.UNAUTHENTICATED
            with pytest.raises(TransportError) as health:
                client.health(timeout=5)
            assert _status(health) == grpc.StatusCode.UNAUTHENTICATED


def test_raw_metadata_schemes_are_checked(token_server: ServerThread) -> None:
    from control_plane.v1 import control_plane_pb2 as pb
    from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

    with grpc.insecure_channel(token_server.target) as channel:
        stub = pb_grpc.ControlPlaneServiceStub(channel)
        request = pb.InvokePackRequest(pack="test.echo", input=b"{}")
        for value in (f"Basic {TOKEN}", TOKEN, f"Bearer  {TOKEN}x", "Bearer"):
            with pytest.raises(grpc.RpcError) as caught:
                stub.InvokePack(request, timeout=5, metadata=(("authorization", value),))
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        reply = stub.InvokePack(
            request, timeout=5, metadata=(("authorization", f"bearer {TOKEN}"),)
        )
        assert reply.pack == "test.echo"


def test_downstream_auth_failed_is_not_unauthenticated(token_server: ServerThread) -> None:
    with Client(token_server.target, token=TOKEN) as client, pytest.raises(AuthFailed) as caught:
        client.invoke("test.fail", {"code": "auth_failed"}, timeout=5)
    assert caught.value.status == grpc.StatusCode.PERMISSION_DENIED


def test_health_can_stay_open() -> None:
    srv = ServerThread(load_test_packs(), auth=TokenAuth([TOKEN], open_health=True)).start()
    try:
        with Client(srv.target) as client:
            assert client.health(timeout=5) == "SERVING"
            with pytest.raises(TransportError) as caught:
                client.invoke("test.echo", {}, timeout=5)
            assert _status(caught) == grpc.StatusCode.UNAUTHENTICATED
    finally:
        srv.stop()


def test_tls_and_token_together(certs: Certs) -> None:
    srv = ServerThread(
        load_test_packs(), auth=TokenAuth([TOKEN]), tls=ServerTls(certs.cert, certs.key)
    ).start()
    try:
        target = f"localhost:{srv.port}"
        with Client(target, token=TOKEN, tls=ClientTls(ca=certs.ca)) as client:
            assert client.invoke("test.echo", {"tls": True}, timeout=5).ok
        with Client(target, tls=ClientTls(ca=certs.ca)) as client:
            with pytest.raises(TransportError) as no_token:
                client.invoke("test.echo", {}, timeout=5)
            assert _status(no_token) == grpc.StatusCode.UNAUTHENTICATED
        with Client(target) as plaintext:
            with pytest.raises(TransportError) as caught:
                plaintext.invoke("test.echo", {}, timeout=5)
            assert _status(caught) == grpc.StatusCode.UNAVAILABLE
        with Client(target, token=TOKEN, tls=ClientTls(ca=certs.other_ca)) as untrusted:
            with pytest.raises(TransportError) as caught:
                untrusted.invoke("test.echo", {}, timeout=5)
            assert _status(caught) == grpc.StatusCode.UNAVAILABLE
    finally:
        srv.stop()


def test_mutual_tls_requires_a_client_certificate_from_the_ca(certs: Certs) -> None:
    srv = ServerThread(
        load_test_packs(), tls=ServerTls(certs.cert, certs.key, client_ca=certs.ca)
    ).start()
    try:
        target = f"localhost:{srv.port}"
        good = ClientTls(ca=certs.ca, cert=certs.client_cert, key=certs.client_key)
        with Client(target, tls=good) as client:
            assert client.invoke("test.echo", {"mtls": True}, timeout=5).ok
        for tls in (
            ClientTls(ca=certs.ca),
            ClientTls(ca=certs.ca, cert=certs.rogue_cert, key=certs.rogue_key),
        ):
            with Client(target, tls=tls) as client:
                with pytest.raises(TransportError) as caught:
                    client.invoke("test.echo", {}, timeout=5)
                assert _status(caught) == grpc.StatusCode.UNAVAILABLE
    finally:
        srv.stop()


def test_packctl_sends_credentials(
    certs: Certs,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CAPABILITY_PACKS_TOKEN", raising=False)
    srv = ServerThread(
        load_test_packs(), auth=TokenAuth([TOKEN]), tls=ServerTls(certs.cert, certs.key)
    ).start()
    token_file = tmp_path / "token"
    token_file.write_text(f"# the team token\n{TOKEN}\n")
    try:
        base = ["call", "test.echo", "--target", f"localhost:{srv.port}", "--output", "json"]
        tls = ["--tls-ca", str(certs.ca)]
        assert cli.main([*base, *tls, "--token-file", str(token_file)]) == cli.EXIT_OK
        assert '"echo"' in capsys.readouterr().out
        assert cli.main([*base, *tls]) == cli.EXIT_USAGE
        refused = capsys.readouterr().out
        assert "UNAUTHENTICATED" in refused
        assert "--token-file PATH" in refused and "$CAPABILITY_PACKS_TOKEN" in refused
        monkeypatch.setenv("CAPABILITY_PACKS_TOKEN", TOKEN)
        assert cli.main([*base, *tls]) == cli.EXIT_OK
        capsys.readouterr()
        assert cli.main([*base, "--tls-ca", str(tmp_path / "missing.pem")]) == cli.EXIT_USAGE
        assert "cannot read CA certificate" in capsys.readouterr().out
    finally:
        srv.stop()


def test_serve_refuses_unusable_auth_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.write_text("# nothing\n")
    assert cli.main(["serve", "--auth-token-file", str(empty)]) == cli.EXIT_USAGE
    assert "no token" in capsys.readouterr().err
    assert cli.main(["serve", "--tls-cert", "x.pem"]) == cli.EXIT_USAGE
    assert cli.main(["serve", "--open-health"]) == cli.EXIT_USAGE


def test_token_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"# comment\n\n{TOKEN}\n  {OTHER}  \n")
    assert read_token_file(path) == [TOKEN, OTHER]
    monkeypatch.setenv("MY_TOKENS", f"{'c' * 20}, {'d' * 20}")
    auth = TokenAuth.from_sources(token_file=path, token_env="MY_TOKENS")
    assert len(auth) == 4
    assert auth.allows([("authorization", f"Bearer {'d' * 20}")])
    assert not auth.allows([("authorization", f"Bearer {'e' * 20}")])
    assert not auth.allows([])
    with pytest.raises(AuthConfigError, match="shorter than"):
        TokenAuth(["short"])
    with pytest.raises(AuthConfigError, match="not set"):
        TokenAuth.from_sources(token_env="NO_SUCH_VARIABLE_HERE")


def test_tokens_never_cross_the_network_in_clear() -> None:
    assert is_loopback("127.0.0.1:50051") and is_loopback("localhost:1") and is_loopback("[::1]:5")
    assert not is_loopback("10.0.0.5:50051") and not is_loopback("example.org:443")
    with pytest.raises(AuthConfigError, match="without TLS"):
        channel_credentials("10.0.0.5:50051", token=TOKEN)
    assert channel_credentials("10.0.0.5:50051") is None
