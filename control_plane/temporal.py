"""Temporal callers, public (extra ``temporal``; docs/temporal.md): start pack calls as
workflows and get the pack's closed vocabulary back. Imports ``temporalio``.
"""

from control_plane._features.temporal.client import TemporalPackClient, invoke, raise_for_failure
from control_plane._features.temporal.messages import (
    ACTIVITY_NAME,
    CODE_SEARCH_ATTRIBUTE,
    DEFAULT_HEARTBEAT_TIMEOUT,
    DEFAULT_START_TO_CLOSE,
    WORKFLOW_NAME,
    InvokePackRequest,
    PackCall,
    RetrySettings,
)

__all__ = [
    "ACTIVITY_NAME",
    "CODE_SEARCH_ATTRIBUTE",
    "DEFAULT_HEARTBEAT_TIMEOUT",
    "DEFAULT_START_TO_CLOSE",
    "WORKFLOW_NAME",
    "InvokePackRequest",
    "PackCall",
    "RetrySettings",
    "TemporalPackClient",
    "invoke",
    "raise_for_failure",
]
