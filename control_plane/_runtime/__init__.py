"""Assembly and operations: plugin loading, isolation, incidents, events, metrics, the Runtime."""
