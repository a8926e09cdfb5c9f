"""Issue 44's live corpus: 314 library and tool families no other test uses (but ``wget``,
a tool with its own table, in ``heldout9``, and ``pycurl``, libcurl's, in ``heldout11``),
each failure provoked for real (Debian's MariaDB, PostgreSQL, RabbitMQ, Dovecot, Mosquitto,
memcached, slapd, ZooKeeper, Redis, nats-server; aiosmtpd and pyftpdlib; fakes of each
product's documented error bodies), raised inside a real pack invoked through the control
plane, and scored on the code the caller receives.

The issue's targets are >= 95% correct and no wrong code on the whole corpus, and >= 90% with
no wrong code on the first run of a half written after the engine. The records in
``corpus_live/scores/``: ``*_main.json`` before the evidence engine; ``*_engine_first.json``
each held-out half's one first run (``heldout`` 13 families, ``heldout2`` 17, ``heldout3`` 30,
``heldout4`` 13, ``heldout5`` 14, ``heldout6`` 13, ``heldout7`` 14, ``heldout8`` 14,
``heldout9`` 14, ``heldout10`` 14, ``heldout11`` 14, ``heldout12`` 9, ``heldout13`` 14,
``heldout14`` 14, ``heldout15`` 14, ``heldout16`` 14, ``heldout17`` 14, ``heldout18`` 14,
``heldout19`` 14, ``heldout20`` 15, ``heldout21`` 10, each written by someone who never read the
classification code, and run once); ``*_engine.json`` each half's latest run. Every half of
:data:`HALVES` is held to its latest record: no case that was right goes wrong or missing, no
new wrong code, nothing broken; the visible half also to its target.
``PYTHONPATH=.:tests python -m corpus_live.score --half visible -v`` prints the figures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corpus_live.core import load
from corpus_live.score import Result, run, table

pytestmark = [pytest.mark.system, pytest.mark.timeout(1800)]  # system: real daemons, CLIs

HALVES = (
    "visible",
    "heldout",
    "heldout2",
    "heldout3",
    "heldout4",
    "heldout5",
    "heldout6",
    "heldout7",
    "heldout8",
    "heldout9",
    "heldout10",
    "heldout11",
    "heldout12",
    "heldout13",
    "heldout14",
    "heldout15",
    "heldout16",
    "heldout17",
    "heldout18",
    "heldout19",
    "heldout20",
    "heldout21",
)
TARGET = {"visible": 0.95} | dict.fromkeys(HALVES[1:], 0.90)
RECORD = {half: f"{half}_engine.json" for half in HALVES}
SCORES = Path(__file__).resolve().parent / "corpus_live" / "scores"


def test_the_corpus_is_large_and_split_in_two_halves() -> None:
    families = load()
    visible = [f for f in families if f.half == "visible"]
    held = [f for f in families if f.half == "heldout"]
    assert len(families) >= 25 and len(visible) >= 12 and len(held) >= 13
    cases = [c for f in families for c in f.cases]
    assert len(cases) >= 300
    assert len({c.id for c in cases}) == len(cases)
    for c in cases:
        assert c.expect and c.reason.strip(), c.id
        if c.retry_after is not None:
            assert "rate_limited" in c.expect, c.id


def _scored(half: str) -> list[Result]:
    results = run(load(half))
    print("\n" + table(results))  # the figures, with -s
    return results


@pytest.mark.parametrize("half", HALVES)
def test_every_case_fails_for_real_and_scores_no_worse_than_its_record(half: str) -> None:
    record = json.loads((SCORES / RECORD[half]).read_text())
    was = {r["id"]: r["verdict"] for r in record["results"]}
    results = _scored(half)

    def worse(r: Result) -> bool:
        return (
            r.verdict == "broken"
            or (r.verdict == "wrong" and was.get(r.case.id) != "wrong")
            or (r.verdict != "correct" and was.get(r.case.id) == "correct")
        )

    # A live case can lose a race on a loaded machine (a 1 s client timeout before a busy
    # fake answers; a held session that ended before the second one was refused): a case
    # that scores worse than its record, or did not fail, is run once more, alone, and only
    # a second such answer counts. A regression of the engine is worse both times.
    families = {f.name: f for f in load(half)}
    again = {r.case.id: run([families[r.case.family]], only=r.case.id) for r in results if worse(r)}
    results = [
        next((x for x in again.get(r.case.id, ()) if x.case.id == r.case.id), r) for r in results
    ]
    broken = [r.case.id for r in results if r.verdict == "broken"]
    assert not broken, f"cases that no longer fail: {broken}"
    still = [
        f"{r.case.id}: was {was.get(r.case.id)}, now {r.verdict}: {r.exc_type} -> {r.code} "
        f"(retry_after {r.retry_after}); right: {sorted(r.case.expect)} ({r.case.reason})"
        for r in results
        if worse(r)
    ]
    assert not still, "\n".join(still)
    correct = sum(r.verdict == "correct" for r in results) / len(results)
    print(f"{half}: {correct:.1%} correct; the issue's target is {TARGET[half]:.0%}")
    if half == "visible":  # the held-out half's first run is its measure, not a ratchet
        assert correct >= TARGET[half]
        assert not [r for r in results if r.verdict == "wrong"]
