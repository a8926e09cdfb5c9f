"""``packctl``: the parser, main, list/describe/call, the backends."""
