"""Grants enforced: egress, programs, Landlock (docs/grants.md)."""
