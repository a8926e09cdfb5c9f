"""A wire fuzz over hostile handlers: whatever a pack raises or returns, every call gets a
code from the pack's effective vocabulary, the details decode, and the server lives.

Hypothesis draws what the handler does (``hostilepacks.fuzz``): raise any of ~25 exception
types, ``BaseException``s included, with odd texts (lone surrogates, megabytes, secrets,
forged ``str`` codes); raise ``PackError`` with any code, ``retry_after`` and partial
result; return error documents, ``Result``s with thousands of checks, or objects JSON
cannot carry (integers beyond 64 bits, NaN, sets, bytes, cycles, 300 levels of nesting,
dicts whose methods call ``SystemExit``, objects that end whoever unpickles them). It
runs against a real ``packctl serve``, in-process (sync and async) and isolated.

Bounded: ``CAPABILITY_PACKS_FUZZ_EXAMPLES`` examples per mode (default 60) and at most
``CAPABILITY_PACKS_FUZZ_SECONDS`` seconds per mode (default 90). The closing line gives the
calls made, codes outside the vocabulary, calls without a code and server deaths (all but
the first must be 0).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hostilepacks import EXCEPTIONS, SECRET
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from raw_wire import Received, Serve, invoke, vocabulary

from control_plane._kernel.rejection import REASONS

EXAMPLES = int(os.environ.get("CAPABILITY_PACKS_FUZZ_EXAMPLES", "60"))
SECONDS = float(os.environ.get("CAPABILITY_PACKS_FUZZ_SECONDS", "90"))
WRAPS = [
    "bigint",
    "nan",
    "set",
    "bytes",
    "tuple",
    "surrogate_key",
    "int_key",
    "deep",
    "exiting_dict",
    "cycle",
    "huge_string",
    "object",
    "reduce_exit",
    "list",
]
CODES = [
    "rate_limited",
    "not_found",
    "schema_mismatch",
    "timeout",
    "upstream_busy",
    "internal_error",
    "artifact_failed",
    "undeclared_code",
    "NotSnake",
    "",
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
numbers = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e19, 1e308, -1.0, 0.0]),
)
specs = st.fixed_dictionaries(
    {
        "act": st.sampled_from(
            ["raise", "pack_error", "return_error", "return_result", "return_value", "ok"]
        ),
        "exc": st.sampled_from(sorted(EXCEPTIONS)),
        "text": st.text(max_size=40),
        "text_kind": st.sampled_from(["plain", "surrogate", "huge", "secret", "not_a_string"]),
        "code": st.sampled_from(CODES),
        "code_kind": st.sampled_from(["plain", "plain", "forged", "surrogate"]),
        "n": st.integers(min_value=0, max_value=1_500_000),
        "status": st.sampled_from([401, 404, 408, 429, 503, 500, 302]),
        "retry_after": st.sampled_from(["1e19", "-5", "nan", "inf", "1e400", "Wed, 21 Oct 2099"]),
        "retry_after_number": numbers,
        "severity": st.sampled_from(["pass", "warn", "fail", "fatal"]),
        "value": json_values,
        "wraps": st.lists(st.sampled_from(WRAPS), max_size=3),
    }
)


@dataclass
class Tally:
    calls: int = 0
    outside: int = 0
    without_code: int = 0
    deaths: int = 0
    undecodable: int = 0
    leaked: int = 0
    codes: dict[str, int] = field(default_factory=dict)


TALLY = Tally()
FAILURES: list[str] = []


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Serve]]:
    db = tmp_path_factory.mktemp("fuzz") / "incidents.db"
    holder = [Serve(db, "--threads", "16")]
    yield holder
    holder[0].stop()
    holder[0].kill()
    print(  # the closing note
        f"\nwire fuzz: calls={TALLY.calls} outside_vocabulary={TALLY.outside} "
        f"without_code={TALLY.without_code} server_deaths={TALLY.deaths} "
        f"undecodable={TALLY.undecodable} secrets_leaked={TALLY.leaked} codes={TALLY.codes}"
    )


def allowed(server: Serve, pack: str, got: Received) -> bool:
    """A pack code of the effective vocabulary, or a refusal's reason (result too large)."""
    if got.code == "ok":
        return True
    if got.error_info is not None and got.error_info.domain == "control_plane":
        return got.code in REASONS
    return got.code in vocabulary(server.channel, pack)


def one_call(holder: list[Serve], pack: str, spec: dict[str, Any], strict: bool) -> None:
    server = holder[0]
    got = invoke(server.channel, pack, spec, strict=strict, timeout=30)
    TALLY.calls += 1
    code = got.code
    TALLY.codes[str(code)] = TALLY.codes.get(str(code), 0) + 1
    if got.problems:
        TALLY.undecodable += 1
    if code is None:
        TALLY.without_code += 1
    elif not allowed(server, pack, got):
        TALLY.outside += 1
    if SECRET in got.message + str(got.pack_error):
        TALLY.leaked += 1
    if not server.alive():
        TALLY.deaths += 1
        FAILURES.append(f"server died (exit {server.proc.poll()}): {''.join(server.stderr[-5:])}")
        holder[0] = Serve(server.db, "--threads", "16")  # keep fuzzing; the death counts
    failed = (
        got.problems
        or code is None
        or not allowed(holder[0], pack, got)
        or SECRET in got.message + str(got.pack_error)
        or holder[0] is not server
    )
    if failed:  # kept, not raised: no shrinking replays against a live server
        FAILURES.append(f"{pack} {spec!r}: {got.status} {code} {got.problems}")


@pytest.mark.slow
@pytest.mark.timeout(SECONDS + 120)
@pytest.mark.parametrize("pack", ["hostile.fuzz", "hostile.fuzz_async", "hostile.fuzz_iso"])
def test_wire_fuzz(server: list[Serve], pack: str, tmp_path: Path) -> None:
    started = time.monotonic()
    FAILURES.clear()

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(spec=specs, strict=st.booleans())
    def run(spec: dict[str, Any], strict: bool) -> None:
        if time.monotonic() - started > SECONDS:
            return  # the time budget is spent: the remaining examples are no-ops
        one_call(server, pack, spec, strict)

    run()
    assert not FAILURES, "\n".join(FAILURES[:10])
    assert TALLY.outside == 0 and TALLY.without_code == 0 and TALLY.deaths == 0
