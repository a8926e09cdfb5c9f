"""Imported only by the isolation fork server (``set_forkserver_preload``), never by the
control plane itself: the fork server and the workers it forks ignore SIGINT and SIGTERM,
so a signal sent to the whole process group leaves the draining to the control plane."""

from __future__ import annotations

import contextlib
import signal

for _signum in (signal.SIGINT, signal.SIGTERM):
    with contextlib.suppress(OSError, ValueError):
        signal.signal(_signum, signal.SIG_IGN)
