"""The kit's generic suite, run against every broken sample pack (see README.md).

Run it in a subprocess: ``pytest conformance_suite.py`` from this directory. Every test
is expected to fail or pass as ``tests/test_kit.py`` says, with the fault named.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

from control_plane.testing import PackKit, PackTarget

BROKEN = ["leaky_pack", "undeclared_code_pack", "open_vocabulary_pack", "bad_output_pack"]


@pytest.fixture(params=BROKEN)
def broken(request: pytest.FixtureRequest) -> ModuleType:
    return importlib.import_module(request.param)


@pytest.fixture
def capability_pack(broken: ModuleType) -> PackTarget:
    return PackTarget(
        name=broken.PACK_NAME, plugin=broken, seams=broken.SEAMS, sample_inputs=[broken.SAMPLE]
    )


def test_static(pack_kit: PackKit) -> None:
    pack_kit.check_static()


def test_invoke(pack_kit: PackKit, broken: ModuleType) -> None:
    pack_kit.invoke(broken.SAMPLE)


def test_faults(pack_kit: PackKit) -> None:
    pack_kit.inject_faults()


def test_generated(pack_kit: PackKit) -> None:
    pack_kit.check_generated_inputs(max_examples=10)
