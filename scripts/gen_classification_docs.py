"""Rewrite (or with ``--check``, verify) the generated tables of docs/classification.md.

    python scripts/gen_classification_docs.py          # rewrite the generated block
    python scripts/gen_classification_docs.py --check  # exit 1 if it is out of date

The tables are rendered by :mod:`control_plane.core.classifiers.doc` from the tables the
code uses; ``tests/test_classification_docs.py`` runs the check.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from control_plane.core.classifiers.doc import update  # noqa: E402

PAGE = ROOT / "docs" / "classification.md"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report a stale page")
    args = parser.parse_args(argv)
    text = PAGE.read_text(encoding="utf-8")
    fresh = update(text)
    if fresh == text:
        return 0
    if args.check:
        print(f"stale: {PAGE} (run python scripts/gen_classification_docs.py)")
        return 1
    PAGE.write_text(fresh, encoding="utf-8")
    print(f"updated: {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
