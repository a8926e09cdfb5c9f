"""What durable reference ids cost on the ``internal_error`` path (issue 15).

```console
$ python -m bench.incident_journal [--calls 4000] [--rounds 5]
```

Runs ``bench.internal`` (an unclassifiable ``RuntimeError`` -> ``internal_error`` with a
reference id) through the full invoke pipeline, in-process, with observability installed
and the incident store attached (events to no stream), alternating rounds with the
incident journal on (``IncidentStore(durable=True)``, the default: one ``write(2)`` per
incident before the answer) and off (the store's queue only). Prints the median per-call
time of each and the ratio. The transport is left out on purpose: it would only dilute
the difference.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import statistics
import tempfile
import time
from pathlib import Path

import orjson

from bench import packs
from control_plane._features.observability.events import ErrorEvents
from control_plane._features.observability.incident_store import IncidentStore
from control_plane._features.observability.observability import install
from control_plane._kernel.incidents import Incident
from control_plane._kernel.invoke import Invoker
from control_plane._runtime.plugins import load_registry


async def _round(invoker: Invoker, calls: int) -> float:
    payload = orjson.dumps(packs.request_document())
    started = time.perf_counter()
    for _ in range(calls):
        outcome = await invoker.invoke("bench.internal", payload)
        assert outcome.code == "internal_error"
    return (time.perf_counter() - started) / calls * 1e6


def measure(durable: bool, calls: int, directory: Path) -> float:
    load = load_registry(builtins=False, entry_points_=False, extra=[packs])
    invoker = Invoker(load.registry, classifiers=load.classifiers)
    store = IncidentStore(directory / f"i-{durable}.db", durable=durable)
    obs = install(invoker, events=ErrorEvents(), store=store)
    logging.getLogger("capability_packs").setLevel(logging.CRITICAL)  # as --log-level error
    try:
        asyncio.run(_round(invoker, 200))  # warm-up
        return asyncio.run(_round(invoker, calls))
    finally:
        obs.close()
        invoker.close()


def hand_off(durable: bool, calls: int, directory: Path) -> float:
    """The store's part alone: ``add_incident`` per call (us), journal on or off."""
    store = IncidentStore(directory / f"h-{durable}.db", durable=durable)
    incident = Incident(
        reference_id="",
        pack="bench.internal",
        request_id="r" * 32,
        kind="unclassified",
        summary="unclassified failure",
        traceback="Traceback (most recent call last):\n" + "  frame\n" * 40,
        created_at=time.time(),
    )
    items = [dataclasses.replace(incident, reference_id=f"ref_{i:016x}") for i in range(calls)]
    try:
        started = time.perf_counter()
        for item in items:
            store.add_incident(item)
        return (time.perf_counter() - started) / calls * 1e6
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    figures: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for durable in (False, True):
                figures[durable].append(measure(durable, args.calls, Path(tmp)))
        hand: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(args.rounds):
            for durable in (False, True):
                hand[durable].append(hand_off(durable, args.calls, Path(tmp)))
    off = statistics.median(figures[False])
    on = statistics.median(figures[True])
    print(f"internal_error, in-process, {args.calls} calls x {args.rounds} rounds (median):")
    print(f"  journal off: {off:8.1f} us/call   {figures[False]}")
    print(f"  journal on:  {on:8.1f} us/call   {figures[True]}")
    print(f"  cost: +{on - off:.1f} us/call ({on / off:.3f}x)")
    h_off, h_on = statistics.median(hand[False]), statistics.median(hand[True])
    print("the store's hand-off alone (IncidentStore.add_incident), median:")
    print(f"  journal off: {h_off:8.2f} us   journal on: {h_on:8.2f} us   (+{h_on - h_off:.2f} us)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
