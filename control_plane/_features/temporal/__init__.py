"""Run packs on Temporal with the vocabulary intact (extra ``temporal``; docs/temporal.md).

Importing this package does not import ``temporalio``.
"""
