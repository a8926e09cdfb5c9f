"""Isolation workers for untrusted packs (docs/grants.md)."""
