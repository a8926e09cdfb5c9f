"""The ``CapabilityPacksCode`` search attribute: filter workflows by the code they failed with."""

from __future__ import annotations

import logging

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.service import RPCError

from control_plane._features.temporal.messages import CODE_SEARCH_ATTRIBUTE

__all__ = ["CODE_SEARCH_ATTRIBUTE", "code_attribute_registered", "ensure_code_attribute"]

logger = logging.getLogger("capability_packs.temporal")


async def code_attribute_registered(client: Client, name: str = CODE_SEARCH_ATTRIBUTE) -> bool:
    """True when ``name`` is a Keyword search attribute of the client's namespace."""
    try:
        listing = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=client.namespace)
        )
    except RPCError:
        return False  # no permission to look: do not risk setting an unknown attribute
    kind = listing.custom_attributes.get(name)
    return kind == IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD


async def ensure_code_attribute(client: Client, name: str = CODE_SEARCH_ATTRIBUTE) -> bool:
    """Register ``name`` (Keyword) in the client's namespace unless it is; True if present."""
    if await code_attribute_registered(client, name):
        return True
    try:
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(
                namespace=client.namespace,
                search_attributes={name: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD},
            )
        )
    except RPCError as exc:
        logger.warning(
            "search attribute %s is not registered and could not be (%s): workflows will "
            "not be filterable by code; run `temporal operator search-attribute create "
            "--name %s --type Keyword`",
            name,
            exc.status.name if exc.status is not None else "error",
            name,
            extra={"event": "search_attribute_missing"},
        )
        return False
    return await code_attribute_registered(client, name)
