"""Run the live corpus through a real pack and score the code each caller receives.

    PYTHONPATH=.:tests python -m corpus_live.score --half visible [-v] [-k TEXT] [--json FILE]

Each case runs inside the handler of ``corpus_live.provoke``, a pack that declares every
baseline code and the well-known ``already_exists``, ``dependency_missing`` and
``quota_exhausted``; it is invoked in-process through the control plane's ``Invoker`` with
the classifiers a control plane with no pack plugins has. Verdicts:

* **correct** -- the code is one the case accepts (and a ``rate_limited`` carries the delay
  the server sent, when it sent one);
* **safe miss** -- ``internal_error`` where a specific code was expected: honest, not useful;
* **WRONG** -- another specific code (or the server's delay lost): sends an agent the wrong way;
* **broken** -- the case did not fail: the case itself needs fixing.

Up to ``FAMILIES_AT_ONCE`` families run at once, each with servers of its own (ports, scratch
directories) and its cases one after the other: most of a case's time is a client's timeout
or a daemon's start, spent waiting.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from control_plane import CodeDoc, Pack
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.registry import Registry
from control_plane._runtime.plugins import load_registry
from corpus_live.core import Case, Family, family_env, load, run_async, scratch

PACK = "corpus_live.provoke"
CODES = [
    "auth_failed",
    "rate_limited",
    "not_found",
    "timeout",
    "network_error",
    "schema_mismatch",
    "internal_error",
    "already_exists",
    "dependency_missing",
    "quota_exhausted",
]


#: Families whose servers and cases run at the same time (each family's cases in order).
FAMILIES_AT_ONCE = 4


class _State:
    cases: dict[str, Case] = {}
    #: Each case's family context (families run at once: one context per case).
    ctx: dict[str, Any] = {}
    raised: dict[str, BaseException] = {}


def _handler(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    c = _State.cases[doc["case"]]
    try:
        result = c.run(_State.ctx[c.id])
        if hasattr(result, "__await__"):
            run_async(result)
    except BaseException as exc:
        _State.raised[c.id] = exc
        raise
    return {}


def pack() -> Pack:
    return Pack(
        name=PACK,
        version="1.0.0",
        summary="Provoke one failure of the live corpus (issue 44) and let it escape.",
        input_schema={
            "type": "object",
            "required": ["case"],
            "properties": {"case": {"type": "string"}},
        },
        output_schema={
            "type": "object",
            "properties": {
                "error": {
                    "type": "object",
                    "properties": {"code": {"type": "string", "enum": CODES}},
                    "required": ["code"],
                }
            },
        },
        handler=_handler,
        codes={
            "already_exists": CodeDoc(
                "What the call would create already exists.", recovery_hint="Use it."
            ),
            "dependency_missing": CodeDoc(
                "A program the pack runs is not installed.", recovery_hint="Install it."
            ),
            "quota_exhausted": CodeDoc(
                "The downstream account's quota or credit is exhausted.",
                recovery_hint="Add credit.",
            ),
        },
    )


@dataclass(frozen=True)
class Result:
    case: Case
    exc_type: str
    code: str
    retry_after: float | None
    verdict: str  # correct | miss | wrong | broken
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.case.id,
            "family": self.case.family,
            "half": self.case.half,
            "expect": sorted(self.case.expect),
            "expect_retry_after": self.case.retry_after,
            "reason": self.case.reason,
            "exception": self.exc_type,
            "code": self.code,
            "retry_after": self.retry_after,
            "verdict": self.verdict,
        }


#: How far a delay may be from the case's: a reset a server states as a Unix time is
#: some milliseconds nearer by the time it is read; a delay read wrong is seconds off.
WAIT_TOLERANCE = 0.5
#: How much longer it may be: a reset stated in whole seconds (a Unix time the server
#: rounded, or cut) is up to a second off, and is waited out rounded up -- later, never early.
LATE_TOLERANCE = 1.0


def _same_wait(retry_after: float | None, c: Case) -> bool:
    return (
        retry_after is not None
        and c.retry_after is not None
        and -WAIT_TOLERANCE <= retry_after - c.retry_after <= LATE_TOLERANCE
    )


def judge(c: Case, code: str, retry_after: float | None, failed: bool) -> str:
    if not failed:
        return "broken"
    if code in c.expect:
        if c.retry_after is not None and code == "rate_limited" and not _same_wait(retry_after, c):
            return "wrong"
        return "correct"
    return "miss" if code == "internal_error" else "wrong"


@dataclass
class Runner:
    invoker: Invoker

    def run_family(self, fam: Family, root: Path, only: str | None = None) -> list[Result]:
        cases = [c for c in fam.cases if not only or only in c.id]
        if not cases:
            return []
        out: list[Result] = []
        stack = contextlib.ExitStack()
        try:
            ctx = stack.enter_context(family_env(fam, root))
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            stack.close()
            print(f"{fam.name}: its servers did not start: {exc}", file=sys.stderr)
            return [Result(c, "-", "-", None, "broken", 0.0) for c in cases]
        with stack:
            for c in cases:
                _State.cases[c.id] = c
                _State.ctx[c.id] = ctx
                started = time.monotonic()
                outcome = self.invoker.invoke_sync(PACK, {"case": c.id}, timeout=25)
                exc = _State.raised.pop(c.id, None)
                _State.ctx.pop(c.id, None)
                err = outcome.error
                code = err.code if err is not None else "-"
                ra = err.retry_after if err is not None else None
                verdict = judge(c, code, ra, err is not None and exc is not None)
                out.append(
                    Result(
                        c,
                        type(exc).__qualname__ if exc is not None else "-",
                        code,
                        ra,
                        verdict,
                        time.monotonic() - started,
                    )
                )
        return out


def runner() -> Iterator[Runner]:
    registry = Registry()
    registry.register(pack(), "corpus_live")
    classifiers = tuple(load_registry(builtins=False, entry_points_=False).classifiers)
    invoker = Invoker(registry, classifiers=classifiers, max_workers=32)
    try:
        yield Runner(invoker)
    finally:
        invoker.close()


def run(families: Sequence[Family], only: str | None = None) -> list[Result]:
    root = scratch("run")
    results: list[Result] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for r in runner():
                with ThreadPoolExecutor(FAMILIES_AT_ONCE) as pool:
                    runs = [pool.submit(r.run_family, fam, root, only) for fam in families]
                    for done in runs:
                        results.extend(done.result())
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return results


def totals(results: Sequence[Result]) -> Counter[str]:
    return Counter(r.verdict for r in results)


def table(results: Sequence[Result]) -> str:
    per: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for r in results:
        per[(r.case.half, r.case.family)][r.verdict] += 1
    lines = [
        "| half | family | cases | correct | safe miss | WRONG | broken |",
        "|---|---|---|---|---|---|---|",
    ]
    by_half: dict[str, Counter[str]] = defaultdict(Counter)
    for (half, fam), n in sorted(per.items()):
        by_half[half].update(n)
        lines.append(
            f"| {half} | {fam} | {n.total()} | {n['correct']} | {n['miss']} | {n['wrong']} "
            f"| {n['broken']} |"
        )
    grand: Counter[str] = Counter()
    for half, n in sorted(by_half.items()):
        grand.update(n)
        lines.append(_total_line(f"**{half}**", n, len({f for h, f in per if h == half})))
    if len(by_half) > 1:
        lines.append(_total_line("**all**", grand, len(per)))
    return "\n".join(lines)


def _total_line(label: str, n: Counter[str], families: int) -> str:
    count = n.total()
    share = 100.0 * n["correct"] / count if count else 0.0
    return (
        f"| {label} | {families} families | {count} | {n['correct']} ({share:.1f}%) "
        f"| {n['miss']} | {n['wrong']} | {n['broken']} |"
    )


def record(results: Sequence[Result], label: str) -> dict[str, Any]:
    n = totals(results)
    return {
        "label": label,
        "families": sorted({r.case.family for r in results}),
        "totals": {
            "cases": n.total(),
            "correct": n["correct"],
            "safe_miss": n["miss"],
            "wrong": n["wrong"],
            "broken": n["broken"],
            "correct_share": round(n["correct"] / n.total(), 4) if n.total() else 0.0,
        },
        "results": [r.to_dict() for r in results],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--half",
        choices=(
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
            "all",
        ),
        default="visible",
    )
    parser.add_argument("-f", "--family", action="append", help="only this family (repeat)")
    parser.add_argument("-k", help="only cases whose id contains this text")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every non-correct")
    parser.add_argument("--json", help="write the record (totals and every result) here")
    parser.add_argument("--label", default="", help="a label stored in the JSON record")
    args = parser.parse_args(argv)
    families = load(None if args.half == "all" else args.half)
    if args.family:
        families = [f for f in families if f.name in set(args.family)]
    results = run(families, args.k)
    print(table(results))
    if args.verbose:
        for r in results:
            if r.verdict != "correct":
                print(
                    f"{r.verdict:7} {r.case.id:42} {r.exc_type:34} -> {r.code} "
                    f"(retry_after {r.retry_after}) want {sorted(r.case.expect)}"
                    f"{'' if r.case.retry_after is None else f' {r.case.retry_after}s'}"
                )
    if args.json:
        Path(args.json).write_text(json.dumps(record(results, args.label), indent=1) + "\n")
    n = totals(results)
    return 1 if n["wrong"] or n["broken"] else 0


if __name__ == "__main__":
    sys.exit(main())
