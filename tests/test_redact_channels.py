"""The secret corpus through every channel of a real ``packctl serve``: 0 leaks.

One server process with the leak plugin (``tests/leakpacks.py``: every way a pack can put a
text in front of the control plane) and a plugin that fails to import quoting secrets. Every
corpus sample goes through every channel; then every byte the callers received (responses,
status messages, trailing metadata with ``grpc-status-details-bin``), every byte the server
wrote to stderr (its JSON logs, other libraries' log lines, tracebacks of dying threads),
the event file and the incident store's files at rest is scanned for every secret.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import leakpacks
import pytest
from child_processes import tied
from secret_corpus import SECRETS, Sample
from server_support import PACKCTL, ROOT, subprocess_env

from control_plane._kernel.redact import scrub
from control_plane.v1 import control_plane_pb2 as pb

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

SERVICE = "/control_plane.v1.ControlPlaneService/"


class Served:
    def __init__(self, proc: subprocess.Popen[bytes], target: str, tmp: Path) -> None:
        self.proc, self.target, self.tmp = proc, target, tmp
        self.stderr = tmp / "stderr.log"
        self.events = tmp / "events.jsonl"
        self.db = tmp / "incidents.db"


def _start(tmp: Path) -> Served:
    env = subprocess_env(
        CAPABILITY_PACKS_PLUGINS="leakpacks,leakpacks_broken",
        CAPABILITY_PACKS_INCIDENT_DB=str(tmp / "incidents.db"),
    )
    stderr = (tmp / "stderr.log").open("wb")
    proc = subprocess.Popen(
        tied(
            [
                *PACKCTL,
                "serve",
                "--address",
                "127.0.0.1:0",
                "--plugin",
                "leakpacks",
                "--plugin",
                "leakpacks_broken",
                "--events-file",
                str(tmp / "events.jsonl"),
            ]
        ),
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        env=env,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = (tmp / "stderr.log").read_text(errors="replace")
        for line in text.splitlines():
            if '"event": "serving"' in line or '"event":"serving"' in line:
                port = json.loads(line)["port"]
                return Served(proc, f"127.0.0.1:{port}", tmp)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("packctl serve did not start:\n" + text)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("channels")
    server = _start(tmp)
    try:
        yield server
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait(timeout=30)


def _call(channel: grpc.Channel, method: str, request: bytes, **kwargs: object) -> bytes:
    """One raw unary call; every byte that came back (reply, or status and trailers)."""
    stub = channel.unary_unary(SERVICE + method)
    try:
        return bytes(stub(request, timeout=60, **kwargs))
    except grpc.RpcError as exc:
        parts = [str(exc.code()).encode(), (exc.details() or "").encode()]
        for key, value in exc.trailing_metadata() or ():
            parts += [key.encode(), value if isinstance(value, bytes) else value.encode()]
        return b"\n".join(parts)


def _invoke(pack: str, doc: object, **fields: object) -> bytes:
    payload = json.dumps(doc).encode()
    return pb.InvokePackRequest(pack=pack, input=payload, **fields).SerializeToString()  # type: ignore[arg-type]


def _calls(sample: Sample) -> list[tuple[str, bytes, list[tuple[str, str]]]]:
    """Every request that makes the control plane handle ``sample.text``."""
    text = sample.text
    corr = [("x-correlation-task_id", text.encode("unicode_escape").decode()[:200])]
    out: list[tuple[str, bytes, list[tuple[str, str]]]] = []
    for mode in leakpacks.MODES:
        doc = {"mode": mode, "text": text}
        strict = mode in {"check", "keyed_check"}
        out.append(("InvokePack", _invoke("leak.channel", doc, strict=strict), corr))
    out += [
        # The echoed pack name (unknown pack), a request id, invalid input, DescribePack.
        ("InvokePack", _invoke(text, {}), corr),
        (
            "InvokePack",
            _invoke("leak.channel", {"mode": "typed", "text": "x"}, request_id=text),
            [],
        ),
        ("InvokePack", _invoke("leak.channel", {"mode": text, "text": 1}), []),
        ("DescribePack", pb.DescribePackRequest(name=text).SerializeToString(), []),
        # A pack that opted in: its result is scrubbed.
        ("InvokePack", _invoke("leak.scrubbed", {"text": text}), []),
    ]
    return out


def _stop(server: Served) -> None:
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(timeout=60)


# The whole corpus through a real server: minutes on a loaded shared machine.
@pytest.mark.timeout(900)
def test_the_corpus_leaks_through_no_channel(served: Served) -> None:
    received: list[bytes] = []
    with grpc.insecure_channel(served.target) as channel:
        received.append(_call(channel, "ListPacks", pb.ListPacksRequest().SerializeToString()))
        requests = [call for sample in SECRETS for call in _calls(sample)]

        def one(call: tuple[str, bytes, list[tuple[str, str]]]) -> bytes:
            method, body, metadata = call
            return _call(channel, method, body, metadata=metadata)

        with ThreadPoolExecutor(max_workers=8) as pool:
            received += list(pool.map(one, requests))
    _stop(served)

    sinks = {
        "received": b"\n".join(received),
        "stderr": served.stderr.read_bytes(),
        "events": served.events.read_bytes(),
        "incident store": b"".join(
            p.read_bytes() for p in served.tmp.iterdir() if p.name.startswith("incidents.db")
        ),
    }
    # Not vacuous: each sink carried scrubbed text, every channel was exercised.
    for name, data in sinks.items():
        assert b"[REDACTED" in data, name
    events = [json.loads(line) for line in sinks["events"].splitlines()]
    assert {e["code"] for e in events} >= {
        "internal_error",
        "network_error",
        "not_found",
        "auth_failed",
        "schema_mismatch",
        "artifact_failed",
        "timeout",
        "unknown_pack",
        "invalid_input",
    }
    assert len(received) == 1 + len(requests)
    stderr = sinks["stderr"].decode(errors="replace")
    assert "load failure" in stderr and "thread failed" in stderr and "client failed" in stderr
    assert "finalizer failed" in stderr and "deprecated: " in stderr

    assert leakpacks.CHECK_ID_SECRET.encode() not in b"".join(sinks.values())
    leaks = [
        (sample.family, secret[:24], where)
        for sample in SECRETS
        for secret in sample.secrets
        for where, data in sinks.items()
        if secret.encode() in data
        or secret.encode("unicode_escape") in data
        or json.dumps(secret)[1:-1].encode() in data
    ]
    print(
        f"{len(SECRETS)} samples x {len(leakpacks.MODES) + 5} request channels, "
        f"+ load failures, logs, events, incident store: {len(leaks)} leaks"
    )
    assert leaks == [], _contexts(sinks, leaks)


def _contexts(sinks: dict[str, bytes], leaks: list[tuple[str, str, str]]) -> str:
    """Where the first leaks were found, with the bytes around them."""
    out = []
    for family, secret, where in leaks[:12]:
        data = sinks[where]
        at = data.find(secret.encode())
        out.append(f"{family} in {where}: {data[max(0, at - 160) : at + 40]!r}")
    return "\n".join(out)


def test_a_result_is_not_scrubbed_unless_the_pack_opts_in(tmp_path: Path) -> None:
    """The guarantee covers failures; a successful result is the pack's own data."""
    server = _start(tmp_path)
    secret = SECRETS[0].secrets[0]
    try:
        with grpc.insecure_channel(server.target) as channel:
            plain = _call(channel, "InvokePack", _invoke("leak.echo", {"text": secret}))
            opted = _call(channel, "InvokePack", _invoke("leak.scrubbed", {"text": secret}))
    finally:
        _stop(server)
    assert secret.encode() in plain
    assert secret.encode() not in opted and b"[REDACTED]" in opted


def test_a_value_under_a_secret_key_leaks_through_no_channel(tmp_path: Path) -> None:
    """A bare secret no text rule knows, under keys that name secrets: a partial result, a
    check's expected and actual, an opted-in result. Nothing reaches the caller, the log,
    the event file or the incident store."""
    server = _start(tmp_path)
    secret = "hunter2-Zq7xK"
    assert scrub(secret) == secret  # alone, it looks like nothing
    try:
        with grpc.insecure_channel(server.target) as channel:
            received = [
                _call(
                    channel,
                    "InvokePack",
                    _invoke("leak.channel", {"mode": mode, "text": secret}, strict=True),
                )
                for mode in ("keyed_partial", "keyed_check")
            ]
            received.append(
                _call(channel, "InvokePack", _invoke("leak.scrubbed", {"password": secret}))
            )
    finally:
        _stop(server)
    sinks = {
        "received": b"\n".join(received),
        "stderr": server.stderr.read_bytes(),
        "events": server.events.read_bytes(),
        "incident store": b"".join(
            p.read_bytes() for p in server.tmp.iterdir() if p.name.startswith("incidents.db")
        ),
    }
    assert b"schema_mismatch" in sinks["received"] and b"artifact_failed" in sinks["received"]
    assert b'"db"' in sinks["received"] and b"creds" in sinks["received"]  # the data travels
    assert [name for name, data in sinks.items() if secret.encode() in data] == []


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
