"""Run the corpus, classify every failure, print correct / wrong specific / internal_error.

    PYTHONPATH=.:tests python -m failure_corpus.score [-v] [--json FILE]

* **correct** -- the code is one of the case's acceptable codes (and a rate-limited case
  carries the expected ``retry_after``);
* **wrong** -- a specific code that is not acceptable (or a wrong ``retry_after``): it
  sends an agent down the wrong path;
* **internal** -- ``internal_error`` where a specific code was right: honest, not useful.

Classification is what the control plane does: ``classify(exc, classifiers)`` with the
classifiers every plugin (built-in and installed) contributes; ``None`` is
``internal_error``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from control_plane._kernel.classify import classify
from control_plane._runtime.plugins import load_registry
from failure_corpus.cases import Case, all_cases, provoke
from failure_corpus.servers import Endpoints, start


@dataclass(frozen=True)
class Result:
    case: Case
    exc_type: str
    code: str
    retry_after: float | None
    rule: str
    verdict: str  # correct | wrong | internal | broken

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.case.id,
            "class": self.case.klass,
            "expect": sorted(self.case.expect),
            "reason": self.case.reason,
            "exception": self.exc_type,
            "code": self.code,
            "retry_after": self.retry_after,
            "rule": self.rule,
            "verdict": self.verdict,
        }


def classifiers() -> tuple[Any, ...]:
    """The classifiers a control plane with no pack plugins has (built-ins included)."""
    return tuple(load_registry(builtins=False, entry_points_=False).classifiers)


def judge(c: Case, exc: BaseException, found: Any) -> tuple[str, float | None, str, str]:
    """``(code, retry_after, rule, verdict)`` for one classified failure."""
    if isinstance(exc, AssertionError) and str(exc).startswith(f"case {c.id} did not fail"):
        return "-", None, "-", "broken"
    code = found.code if found is not None else "internal_error"
    retry_after = found.retry_after if found is not None else None
    rule = found.rule if found is not None else "unclassified"
    if code in c.expect:
        if c.retry_after is not None and code == "rate_limited" and retry_after != c.retry_after:
            return code, retry_after, rule, "wrong"
        return code, retry_after, rule, "correct"
    if code == "internal_error":
        return code, retry_after, rule, "internal"
    return code, retry_after, rule, "wrong"


def run(
    cases: Iterable[Case],
    ep: Endpoints,
    plugins: Sequence[Any] | None = None,
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
) -> list[Result]:
    chosen = classifiers() if plugins is None else tuple(plugins)
    results: list[Result] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in cases:
            exc = provoke(c, ep, loop_factory)
            code, retry_after, rule, verdict = judge(c, exc, classify(exc, chosen))
            results.append(Result(c, type(exc).__name__, code, retry_after, rule, verdict))
    return results


def table(results: Sequence[Result]) -> str:
    """The per-class and total figures, as a Markdown table."""
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        per[r.case.klass][r.verdict] += 1
    total: Counter[str] = Counter()
    lines = [
        "| class | cases | correct | wrong specific | internal_error | broken |",
        "|---|---|---|---|---|---|",
    ]
    for klass in sorted(per):
        n = per[klass]
        total.update(n)
        lines.append(
            f"| {klass} | {sum(n.values())} | {n['correct']} | {n['wrong']} | {n['internal']} "
            f"| {n['broken']} |"
        )
    count = sum(total.values())
    share = 100.0 * total["correct"] / count if count else 0.0
    lines.append(
        f"| **total** | {count} | {total['correct']} ({share:.1f}%) | {total['wrong']} "
        f"| {total['internal']} | {total['broken']} |"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss")
    parser.add_argument("--json", help="write every result to this file")
    parser.add_argument("-k", help="only cases whose id contains this text")
    args = parser.parse_args(argv)
    cases = [c for c in all_cases() if not args.k or args.k in c.id]
    with start() as ep:
        results = run(cases, ep)
    print(table(results))
    if args.verbose:
        for r in results:
            if r.verdict != "correct":
                print(
                    f"{r.verdict:8} {r.case.id:45} {r.exc_type:30} -> {r.code} [{r.rule}] "
                    f"want {sorted(r.case.expect)}"
                )
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.to_dict() for r in results], f, indent=1)
    wrong = sum(r.verdict in {"wrong", "broken"} for r in results)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
