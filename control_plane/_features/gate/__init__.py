"""``packctl gate``: run pack validations in strict mode over artifacts and gate CI on them
(docs/gate.md).
"""
