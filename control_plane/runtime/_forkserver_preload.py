"""Preloaded by the isolation fork server only: it and its workers leave SIGINT/SIGTERM to us."""

from __future__ import annotations

import contextlib
import signal

for _signum in (signal.SIGINT, signal.SIGTERM):
    with contextlib.suppress(OSError, ValueError):
        signal.signal(_signum, signal.SIG_IGN)
