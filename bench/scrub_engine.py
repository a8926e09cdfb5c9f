"""The scrubber's rules as written (possessive repeats, matched by the interpreter's own
``re``) against their portable form (atomic look-aheads, control_plane.core.portable_regex):
µs per scrub on representative texts, and the ratio. ``python -m bench.scrub_engine``."""

from __future__ import annotations

import random
import re
import sys
import time
from collections.abc import Callable

from control_plane.core import redact
from control_plane.core.secret_rules import RULES, Rule, written

sys.path.insert(0, "tests")
from scrub_families import FAMILIES, ordinary

ROUNDS = 5


def _written_rules() -> tuple[Rule, ...]:
    return tuple(
        Rule(
            r.name,
            re.compile(written(r.pattern), r.pattern.flags),
            r.repl,
            r.triggers,
            r.run,
        )
        for r in RULES
    )


def _texts() -> dict[str, list[str]]:
    rng = random.Random(35)
    secrets = [FAMILIES[name](rng)[0] for name in FAMILIES for _ in range(20)]
    plain = [ordinary(rng) for _ in range(400)]
    trace = [
        "Traceback (most recent call last):\n"
        + "".join(
            f'  File "/srv/app/{n}.py", line {i}, in run\n    call(x)\n'
            for i, n in enumerate("abcdefgh")
        )
        + "ConnectionError: postgres://app:"
        + "Pw7x" * 3
        + "@db.invalid:5432 refused"
        for _ in range(50)
    ]
    return {"secrets": secrets, "ordinary": plain, "tracebacks": trace}


def _per_scrub(texts: list[str]) -> float:
    """Best-of-ROUNDS µs per scrub (the clean-text memo emptied before each round)."""
    best = float("inf")
    for _ in range(ROUNDS):
        redact._CLEAN.clear()
        start = time.perf_counter()
        for text in texts:
            redact._scrub(text)
        best = min(best, (time.perf_counter() - start) / len(texts) * 1e6)
    return best


def _with(rules: tuple[Rule, ...], fn: Callable[[], float]) -> float:
    saved = redact.RULES
    redact.RULES = rules
    try:
        return fn()
    finally:
        redact.RULES = saved


def main() -> int:
    old = _written_rules()
    print(f"python {sys.version.split()[0]}; best of {ROUNDS}; µs per scrub")
    print(f"{'texts':<12}{'n':>6}{'written':>10}{'portable':>10}{'ratio':>8}")
    for name, texts in _texts().items():
        a = _with(old, lambda t=texts: _per_scrub(t))  # type: ignore[misc]
        b = _with(RULES, lambda t=texts: _per_scrub(t))  # type: ignore[misc]
        print(f"{name:<12}{len(texts):>6}{a:>10.1f}{b:>10.1f}{b / a:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
