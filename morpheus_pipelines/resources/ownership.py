"""The ownership slice's settings as a Dagster resource (docs/ownership.md)."""

from __future__ import annotations

import uuid

import dagster as dg
from pydantic import Field

from morpheus_pipelines.crm.steps.reengagement import DEFAULT_BATCH_SIZE, SegmentSettings


class OwnershipResource(dg.ConfigurableResource):
    """Which subscription owns the configured HubSpot portal (`MORPHEUS_SUBSCRIPTION_ID`), the
    list that takes contacts nobody could be assigned (`HUBSPOT_UNASSIGNED_LIST_ID`), the
    batch size (≤ 100, HubSpot's batch limit) and the fairness window."""

    subscription_id: str = ""
    unassigned_list_id: str = ""
    batch_size: int = Field(default=DEFAULT_BATCH_SIZE, ge=1, le=100)
    fairness_window_days: int = Field(default=7, ge=1)

    def subscription(self) -> uuid.UUID:
        """The subscription id; a clear error when it is unset or not a UUID."""
        if not self.subscription_id:
            raise dg.Failure(
                "MORPHEUS_SUBSCRIPTION_ID is not set: the ownership assets need the "
                "subscription (workspace) that owns the configured HubSpot portal. Create one "
                "with `morpheus subscription create --name <name>`."
            )
        try:
            return uuid.UUID(self.subscription_id)
        except ValueError:
            raise dg.Failure(
                f"MORPHEUS_SUBSCRIPTION_ID must be a UUID, got {self.subscription_id!r}"
            ) from None

    def segment_settings(self, run_id: str | None) -> SegmentSettings:
        return SegmentSettings(
            subscription_id=self.subscription(),
            unassigned_list_id=self.unassigned_list_id or None,
            batch_size=self.batch_size,
            run_id=run_id,
        )
