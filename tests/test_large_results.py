"""A large result never holds the event loop of a real ``packctl serve`` (issue 34,
item 4; docs/reliability.md, "The resource model").

A sync pack (tests/largepacks.py) returns about 8 MiB of nested JSON, legal under a raised
``--max-message-bytes``. Everything proportional to the result's size -- the copy to
plain data, the not-JSON check, the output-schema check, the reply's encoding -- must run
in the pack's own thread, not on the loop: the server's own loop monitor
(``capability_packs_event_loop_longest_stall_seconds``) is the measure, as the caller's
latency would be contaminated by the test process decoding the same 8 MiB. The server's
garbage collector is off (``LARGEPACKS_GC=off``): a collection stops every thread, and its
pauses are CPython's, in proportion to the result's structure (docs/reliability.md).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from server_support import reap, subprocess_env
from test_cli import start_serve, stop_serve
from test_metrics import scrape, value
from test_resources import _metrics_port

from control_plane.wire.client import Client

MIB = 8
LIMIT = 64 << 20
#: Calls of the large pack while the loop is watched.
CALLS = 3


@pytest.fixture
def server() -> Iterator[tuple[subprocess.Popen[str], str]]:
    proc, target = start_serve(
        "--plugin",
        "largepacks",
        "--metrics-port",
        "0",
        "--no-incident-db",
        "--max-message-bytes",
        str(LIMIT),
        env=subprocess_env(
            CAPABILITY_PACKS_PLUGINS="largepacks",
            LARGEPACKS_GC=os.environ.get("LARGEPACKS_GC", "off"),
        ),
        drain=True,
    )
    try:
        yield proc, target
    finally:
        if proc.poll() is None:
            stop_serve(proc)
        reap(proc)


def _large(target: str) -> int:
    with Client(target, max_message_bytes=LIMIT) as client:
        outcome = client.invoke("large.result", {"mib": MIB}, timeout=120)
    assert outcome.ok, outcome
    assert outcome.result is not None
    return len(outcome.result["items"])


def test_a_large_result_does_not_stall_the_event_loop(
    server: tuple[subprocess.Popen[str], str],
) -> None:
    """Three 8 MiB results, copied, checked against a schema that descends into every
    item and encoded: the loop's longest stall stays far below the work's own time (on
    main it was the whole copy, check and encoding: ~1 s on a busy 2-core machine)."""
    proc, target = server
    count = _large(target)  # the pack builds its document once; warms every path
    assert count > 10_000
    latencies: list[float] = []
    with Client(target) as probe, ThreadPoolExecutor(1) as pool:
        calls = [pool.submit(_large, target) for _ in range(CALLS)]
        while not all(call.done() for call in calls):
            started = time.monotonic()
            assert probe.invoke("large.echo", {}, timeout=30).ok
            latencies.append(time.monotonic() - started)
            time.sleep(0.02)
        assert [call.result() for call in calls] == [count] * CALLS  # intact
    samples = scrape(_metrics_port(proc))
    longest = value(samples, "capability_packs_event_loop_longest_stall_seconds")
    print(
        f"{CALLS} results of {MIB} MiB: longest event-loop stall {longest:.3f}s; "
        f"neighbour's slowest answer {max(latencies):.3f}s over {len(latencies)} calls"
    )
    # The bound is generous against a loaded machine's noise (a GIL handoff, a garbage
    # collection), far below the result's own handling.
    assert 0 < longest < 0.25, samples
