"""A plugin that cannot be imported, and says why with secrets in the message.

Loaded by ``tests/test_redact_channels.py`` (``--plugin leakpacks_broken``): the import error
becomes a load failure (``ListPacks.load_failures``, health, the log line), scrubbed.
"""

from __future__ import annotations

from secret_corpus import SECRETS

raise ImportError("cannot configure: " + " | ".join(s.text for s in SECRETS[::40]))
