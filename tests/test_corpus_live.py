"""Issue 44's live corpus: 25 library and tool families no other test uses, each failure
provoked for real (Debian's MariaDB, Mosquitto, memcached, slapd, nats-server; aiosmtpd and
pyftpdlib; fakes of each product's documented error bodies), raised inside a real pack
invoked through the control plane, and scored on the code the caller receives.

The targets are the issue's: the visible half >= 95% correct, the held-out half >= 90%
correct on its first run, and no wrong specific code anywhere. ``heldout/`` is written
without reading the classification code; do not tune the engine on it.
``PYTHONPATH=.:tests python -m corpus_live.score --half visible -v`` prints the figures.
"""

from __future__ import annotations

import pytest
from corpus_live.core import load
from corpus_live.score import Result, run, table

pytestmark = [pytest.mark.system, pytest.mark.timeout(1800)]  # system: real daemons, CLIs

TARGET = {"visible": 0.95, "heldout": 0.90}


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


@pytest.mark.parametrize("half", ["visible", "heldout"])
def test_every_case_fails_for_real_and_scores_at_the_target(half: str) -> None:
    results = _scored(half)
    broken = [r.case.id for r in results if r.verdict == "broken"]
    assert not broken, f"cases that no longer fail: {broken}"
    wrong = [
        f"{r.case.id}: {r.exc_type} -> {r.code} (retry_after {r.retry_after}); "
        f"right: {sorted(r.case.expect)} ({r.case.reason})"
        for r in results
        if r.verdict == "wrong"
    ]
    assert not wrong, "\n".join(wrong)
    correct = sum(r.verdict == "correct" for r in results) / len(results)
    assert correct >= TARGET[half], table(results)
