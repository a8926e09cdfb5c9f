"""Hostile input at the wire: clear INVALID_ARGUMENT / NOT_FOUND, never a crash or a hang.

Each case goes through the real server with a raw stub (no client-side help) and must end
with the expected status, a rich status naming the field, no traceback text, and a server
that still answers. A hypothesis fuzz test drives random bytes, random JSON and random
pack names through the same server.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import grpc
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import Background
from server_support import ServerThread, load_test_packs

from control_plane._features.grpc import status as wire
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

MAX_MESSAGE = 1024 * 1024
MAX_INPUT = 64 * 1024
INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    srv = ServerThread(
        load_test_packs(), max_workers=4, max_message_bytes=MAX_MESSAGE, max_input_bytes=MAX_INPUT
    ).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def stub(server: ServerThread) -> Iterator[pb_grpc.ControlPlaneServiceStub]:
    channel = grpc.insecure_channel(
        server.target, options=[("grpc.max_send_message_length", 64 * 1024 * 1024)]
    )
    yield pb_grpc.ControlPlaneServiceStub(channel)
    channel.close()


def call(
    stub: pb_grpc.ControlPlaneServiceStub, pack: str, data: bytes, request_id: str = ""
) -> tuple[grpc.StatusCode, wire.ParsedStatus | None]:
    try:
        stub.InvokePack(
            pb.InvokePackRequest(pack=pack, input=data, request_id=request_id), timeout=10
        )
    except grpc.RpcError as exc:
        return exc.code(), wire.parse_status(exc.code(), exc.details(), exc.trailing_metadata())
    return grpc.StatusCode.OK, None


DEEP_ARRAY = b"[" * 10_000 + b"]" * 10_000
DEEP_OBJECT = b'{"a":' * 10_000 + b"1" + b"}" * 10_000

CASES: dict[str, tuple[str, bytes, grpc.StatusCode, str, str]] = {
    # name: (pack, input, status, field, words in the violation)
    "invalid json": ("test.echo", b'{"a": ', INVALID, "", "not valid JSON"),
    "trailing garbage": ("test.echo", b"{} {}", INVALID, "", "not valid JSON"),
    "array": ("test.echo", b"[1, 2]", INVALID, "", "must be a JSON object, got list"),
    "string": ("test.echo", b'"hi"', INVALID, "", "must be a JSON object, got str"),
    "null": ("test.echo", b"null", INVALID, "", "got null"),
    "invalid utf-8": ("test.echo", b'{"a": "\xff\xfe"}', INVALID, "", "not valid UTF-8"),
    "lone surrogate": ("test.echo", b'{"a": "\\ud800"}', INVALID, "", "surrogate"),
    "byte order mark": ("test.echo", b"\xef\xbb\xbf{}", INVALID, "", "byte order mark"),
    "nesting 10000 deep (array)": ("test.echo", DEEP_ARRAY, INVALID, "", "deeper than 200"),
    "nesting 10000 deep (object)": ("test.echo", DEEP_OBJECT, INVALID, "", "deeper than 200"),
    "nesting 500 deep": (
        "test.echo",
        b'{"a":' + b"[" * 499 + b"]" * 499 + b"}",
        INVALID,
        "",
        "deeper than 200",
    ),
    "huge number": ("test.echo", b'{"n": ' + b"9" * 400 + b"}", INVALID, "", "too large"),
    "huge exponent": ("test.echo", b'{"n": 1e999}', INVALID, "", "too large"),
    "over the input limit": (
        "test.echo",
        b'{"a": "' + b"x" * MAX_INPUT + b'"}',
        INVALID,
        "input",
        f"over the limit of {MAX_INPUT} bytes",
    ),
    "unknown field": (
        "test.strict_input",
        b'{"name": "x", "count": 1, "extra": true}',
        INVALID,
        "",
        "'extra' was unexpected",
    ),
    "wrong type": (
        "test.strict_input",
        b'{"name": "x", "count": "1"}',
        INVALID,
        "/count",
        "not of type",
    ),
    "unknown pack": ("no.such.pack", b"{}", NOT_FOUND, "pack", "no pack named 'no.such.pack'"),
    "empty pack name": ("", b"{}", INVALID, "pack", "the pack name is empty"),
    "100k pack name": ("p" * 100_000, b"{}", INVALID, "pack", "over the limit of 256"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_gets_a_clear_refusal(
    server: ServerThread, stub: pb_grpc.ControlPlaneServiceStub, case: str
) -> None:
    pack, data, expected, field, words = CASES[case]
    started = time.monotonic()
    status, parsed = call(stub, pack, data)
    assert time.monotonic() - started < 5
    assert status == expected, (status, parsed)
    assert parsed is not None and parsed.error_info is not None
    assert parsed.error_info.domain == "control_plane"
    violations = {v.field: v.description for v in parsed.field_violations}
    assert field in violations, violations
    assert words in violations[field], violations
    assert "Traceback" not in parsed.message and len(parsed.message) < 2000
    # and the server still serves
    assert call(stub, "test.echo", b'{"ok": true}')[0] == grpc.StatusCode.OK


def test_numbers_within_range_are_accepted(stub: pb_grpc.ControlPlaneServiceStub) -> None:
    assert call(stub, "test.echo", b'{"big": 123456789012345678901234567890}')[0].name == "OK"
    assert call(stub, "test.echo", b'{"n": 1e308, "m": -1e-308}')[0].name == "OK"


def test_nesting_within_the_limit_is_accepted(stub: pb_grpc.ControlPlaneServiceStub) -> None:
    # 200 levels in, 201 out (the echo wraps it): still serializable
    assert call(stub, "test.echo", b'{"a":' + b"[" * 199 + b"]" * 199 + b"}")[0].name == "OK"
    # many containers, shallow: the bracket count alone is not a refusal
    assert (
        call(stub, "test.echo", orjson.dumps({"items": [{"x": [i]} for i in range(500)]}))[0].name
        == "OK"
    )


def test_long_request_id_is_refused_not_echoed(stub: pb_grpc.ControlPlaneServiceStub) -> None:
    status, parsed = call(stub, "test.echo", b"{}", request_id="r" * 100_000)
    assert status == INVALID
    assert parsed is not None
    assert [v.field for v in parsed.field_violations] == ["request_id"]
    assert parsed.error_info is not None
    assert len(dict(parsed.error_info.metadata).get("request_id", "")) <= 128 + len("...")


def test_message_over_the_transport_limit_is_resource_exhausted(
    server: ServerThread, stub: pb_grpc.ControlPlaneServiceStub
) -> None:
    # gRPC refuses it before the control plane reads it: no rich status is possible.
    with Background(server.target, [("test.echo", {"a": 1})]) as background:
        status, _ = call(stub, "test.echo", b'{"a": "' + b"x" * (2 * MAX_MESSAGE) + b'"}')
        time.sleep(0.1)
    assert status == grpc.StatusCode.RESOURCE_EXHAUSTED
    background.assert_unaffected(minimum=1)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=25,
)

FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(data=st.binary(max_size=512), pack=st.sampled_from(["test.echo", "test.strict_input"]))
def test_fuzz_random_bytes(stub: pb_grpc.ControlPlaneServiceStub, data: bytes, pack: str) -> None:
    status, parsed = call(stub, pack, data)
    assert status in (grpc.StatusCode.OK, INVALID), (status, parsed)
    if status == INVALID:
        assert parsed is not None and parsed.field_violations


@FUZZ
@given(doc=json_values)
def test_fuzz_random_json(stub: pb_grpc.ControlPlaneServiceStub, doc: Any) -> None:
    status, parsed = call(stub, "test.echo", orjson.dumps(doc))
    expected = grpc.StatusCode.OK if isinstance(doc, dict) else INVALID
    assert status == expected, (status, parsed)
    status, parsed = call(stub, "test.strict_input", orjson.dumps(doc))
    assert status in (grpc.StatusCode.OK, INVALID), (status, parsed)


@FUZZ
@given(pack=st.text(max_size=300), rid=st.text(max_size=200))
def test_fuzz_random_pack_names_and_request_ids(
    stub: pb_grpc.ControlPlaneServiceStub, pack: str, rid: str
) -> None:
    status, parsed = call(stub, pack, b"{}", request_id=rid)
    assert status in (grpc.StatusCode.OK, INVALID, NOT_FOUND), (status, parsed)
    if status != grpc.StatusCode.OK:
        assert parsed is not None and parsed.field_violations
