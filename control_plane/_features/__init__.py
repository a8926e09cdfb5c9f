"""Built-in features, each a plugin on the kernel's hooks in a folder of its own
(docs/architecture.md)."""
