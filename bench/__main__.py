"""``python -m bench``: see :mod:`bench.runner`."""

from __future__ import annotations

import sys

from bench.runner import main

sys.exit(main())
