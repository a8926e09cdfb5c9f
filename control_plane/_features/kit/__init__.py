"""The pack author kit: ``packctl new``, ``packctl check``, the pytest plugin; its public API is
``control_plane.testing`` (docs/authoring.md).
"""
