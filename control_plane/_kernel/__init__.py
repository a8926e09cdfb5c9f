"""The contract and the one data path.

Packs, vocabulary, schemas, classification, enforcement, redaction, the outcome.
"""
