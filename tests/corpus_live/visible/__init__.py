"""Families written before the new classification engine (the visible half)."""
