"""The pack author kit, public: scaffold checks, static conformance, fault injection, gRPC
helpers (extra ``kit``; docs/authoring.md). The code lives in ``control_plane._features.kit``.
"""

from control_plane._features.kit.faults import (
    FAULTS,
    KIT_UNDECLARED_CODE,
    Fault,
    InjectedHTTPError,
    fault,
)
from control_plane._features.kit.harness import FaultReport, FaultResult, GeneratedReport, PackKit
from control_plane._features.kit.served import ServedPack, assert_rich_status
from control_plane._features.kit.static import (
    Finding,
    KitUsageError,
    PackReport,
    StaticReport,
    check_installed,
    check_path,
    check_target,
)
from control_plane._features.kit.target import ConformanceError, PackTarget

__all__ = [
    "FAULTS",
    "KIT_UNDECLARED_CODE",
    "ConformanceError",
    "Fault",
    "FaultReport",
    "FaultResult",
    "Finding",
    "GeneratedReport",
    "InjectedHTTPError",
    "KitUsageError",
    "PackKit",
    "PackReport",
    "PackTarget",
    "ServedPack",
    "StaticReport",
    "assert_rich_status",
    "check_installed",
    "check_path",
    "check_target",
    "fault",
]
