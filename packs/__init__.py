"""Built-in capability packs; each sub-package is a plugin like any third-party one."""
