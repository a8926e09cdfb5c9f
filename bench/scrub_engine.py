"""The scrubber's rules as written (possessive repeats, matched by the interpreter's own
``re``) against their portable form (atomic look-aheads, control_plane._kernel.portable_regex):
µs per scrub on representative texts, and the ratio. ``python -m bench.scrub_engine``."""

from __future__ import annotations

import random
import re
import sys
import time

from bench.adversarial import ADVERSARIAL
from control_plane._kernel import redact
from control_plane._kernel.secret_rules import RULES, Rule, written

sys.path.insert(0, "tests")
from scrub_families import FAMILIES, ordinary

ROUNDS = 15


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
    # 16 KiB of each adversarial input (bench/adversarial.py): the linear-time cases.
    adversarial = [build(16 * 1024) for build in ADVERSARIAL.values()]
    return {"secrets": secrets, "ordinary": plain, "tracebacks": trace, "adversarial": adversarial}


def _once(rules: tuple[Rule, ...], texts: list[str]) -> float:
    """µs per scrub of ``texts`` with ``rules`` (the clean-text memo emptied first)."""
    saved = redact.RULES
    redact.RULES = rules
    redact._CLEAN.clear()
    try:
        start = time.process_time()
        for text in texts:
            redact._scrub(text)
        return (time.process_time() - start) / len(texts) * 1e6
    finally:
        redact.RULES = saved


def main() -> int:
    old = _written_rules()
    print(f"python {sys.version.split()[0]}; best of {ROUNDS} interleaved rounds; CPU µs per scrub")
    print(f"{'texts':<12}{'n':>6}{'written':>10}{'portable':>10}{'ratio':>8}")
    for name, texts in _texts().items():
        best = {"written": float("inf"), "portable": float("inf")}
        for _ in range(ROUNDS):  # interleaved: a busy moment of the machine hits both
            best["written"] = min(best["written"], _once(old, texts))
            best["portable"] = min(best["portable"], _once(RULES, texts))
        a, b = best["written"], best["portable"]
        print(f"{name:<12}{len(texts):>6}{a:>10.1f}{b:>10.1f}{b / a:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
