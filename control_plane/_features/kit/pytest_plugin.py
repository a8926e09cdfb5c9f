"""The kit as a pytest plugin: the ``capability_pack``, ``pack_kit`` and ``pack_grpc`` fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from control_plane._features.kit.harness import FaultReport, PackKit
    from control_plane._features.kit.served import ServedPack
    from control_plane._features.kit.target import PackTarget

_REPORTS = pytest.StashKey[list["FaultReport"]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "capability_pack",
        "dotted name of the pack the capability-packs kit tests (default of the "
        "capability_pack fixture, loaded from the installed entry points)",
        default="",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_REPORTS] = []


@pytest.fixture
def capability_pack(request: pytest.FixtureRequest) -> PackTarget:
    """The pack under test; override in conftest.py to name seams and sample inputs."""
    from control_plane._features.kit.target import PackTarget

    name = str(request.config.getini("capability_pack") or "")
    if not name:
        pytest.fail(
            "the capability-packs kit needs to know the pack: define a `capability_pack` "
            "fixture returning control_plane._features.kit.PackTarget(name=..., seams=...), or set "
            "`capability_pack = NAME` in your pytest configuration",
            pytrace=False,
        )
    return PackTarget(name=name)


@pytest.fixture
def pack_kit(capability_pack: PackTarget, request: pytest.FixtureRequest) -> Iterator[PackKit]:
    """The conformance kit for ``capability_pack``."""
    from control_plane._features.kit.harness import PackKit

    kit = PackKit(capability_pack)
    try:
        yield kit
    finally:
        request.config.stash[_REPORTS].extend(kit.reports)
        kit.close()


@pytest.fixture
def pack_grpc(capability_pack: PackTarget) -> Iterator[ServedPack]:
    """``capability_pack``'s plugin served over gRPC on 127.0.0.1:0."""
    from control_plane._features.kit.served import ServedPack

    served = ServedPack(capability_pack).start()
    try:
        yield served
    finally:
        served.stop()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    reports = config.stash.get(_REPORTS, [])
    if not reports:
        return
    terminalreporter.section("capability-packs kit: fault map")
    for report in reports:
        for line in report.render().splitlines():
            terminalreporter.write_line(line)
