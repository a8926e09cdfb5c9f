"""A live corpus of library and tool families no other test uses (issue 44).

``visible/`` holds the families written before the new classification engine; ``heldout/``
the families written without reading the classification code, to be run once against the
finished engine (the measure of generalization). ``python -m corpus_live.score`` runs them.
"""
