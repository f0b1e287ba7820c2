"""Calls: the calls Morpheus logs on a contact's timeline, keyed by its intent key."""

from __future__ import annotations

from collections.abc import Sequence

from morpheus_pipelines.platform.clients.hubspot.objects import (
    BatchWriteResult,
    ObjectBatchWrites,
    ObjectUpsert,
)

# What Morpheus writes on a call (hs_call_duration in milliseconds).
CALL_PROPERTIES = (
    "hs_timestamp",
    "hs_call_title",
    "hs_call_body",
    "hs_call_direction",
    "hs_call_status",
    "hs_call_duration",
    "hubspot_owner_id",
)


class CallEndpoints(ObjectBatchWrites):
    """The call endpoints."""

    def batch_upsert_calls(self, inputs: Sequence[ObjectUpsert]) -> BatchWriteResult:
        """``POST /crm/v3/objects/calls/batch/upsert`` for ≤ 100 calls, each keyed by its
        ``morpheus_intent_key`` (``id_property``): a retried batch logs no call twice. A new
        call needs ``hs_timestamp`` (when it happened)."""
        return self._batch_upsert("calls", "calls_batch_upsert", inputs)
