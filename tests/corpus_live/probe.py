"""Provoke the cases of a half and print the raw failure of each, with no classification:
the exception's type, its message and its cause chain (a CLI's exit status and stderr).

    PYTHONPATH=.:tests python -m corpus_live.probe --half heldout2 [-f FAMILY] [-k TEXT]

This is how a case is checked while it is written: it must fail the way its reason says.
It imports nothing of the control plane, so writing a held-out half with it never shows
what the engine answers.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Sequence

from corpus_live.core import Case, family_env, load, run_async, scratch


def describe(exc: BaseException) -> str:
    parts: list[str] = []
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen and len(parts) < 4:
        seen.add(id(cur))
        text = f"{type(cur).__module__}.{type(cur).__qualname__}: {str(cur)[:1200]!r}"
        if isinstance(cur, subprocess.CalledProcessError):
            err = (cur.stderr or b"").decode(errors="replace").strip()[:1200]
            text += f" rc={cur.returncode} stderr={err!r}"
        parts.append(text)
        cur = cur.__cause__ or cur.__context__
    return "\n      <- ".join(parts)


def provoke(c: Case, ctx: object) -> str:
    started = time.monotonic()
    try:
        result = c.run(ctx)
        if hasattr(result, "__await__"):
            run_async(result)
    except BaseException as exc:  # a probe prints whatever the case raised
        return f"{time.monotonic() - started:5.1f}s {describe(exc)}"
    return "DID NOT FAIL"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--half", default="heldout2")
    parser.add_argument("-f", "--family", action="append")
    parser.add_argument("-k")
    args = parser.parse_args(argv)
    families = load(args.half)
    if args.family:
        families = [f for f in families if f.name in set(args.family)]
    root = scratch("probe")
    broken = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for fam in families:
                cases = [c for c in fam.cases if not args.k or args.k in c.id]
                if not cases:
                    continue
                print(f"== {fam.name} ({fam.server}): {len(cases)} cases", flush=True)
                with family_env(fam, root) as ctx:
                    for c in cases:
                        out = provoke(c, ctx)
                        broken += out == "DID NOT FAIL"
                        want = ",".join(sorted(c.expect))
                        ra = "" if c.retry_after is None else f" ra={c.retry_after}"
                        print(f"  {c.id} [{want}{ra}] {c.reason}\n    {out}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
