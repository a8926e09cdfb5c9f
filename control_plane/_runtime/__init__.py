"""The assembly: ``build_runtime()`` from the kernel and the built-in features
(``BUILTIN_FEATURES``), plugin loading, and what several features share (the log queue,
child-process helpers, TOML files)."""
