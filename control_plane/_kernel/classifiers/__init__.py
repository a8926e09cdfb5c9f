"""The kernel's built-in ``classify_exception`` plugins: its readings of the standard library
(TLS, subprocesses and the tools they run, sockets), knowing exceptions by class and frames.
Well-known client libraries are a feature's (``control_plane/_features/libraries/``); the
order in which all of them are asked is ``BUILTIN_CLASSIFIERS`` (``_runtime/plugins.py``)."""
