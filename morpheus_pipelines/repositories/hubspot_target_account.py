"""Repository of the HubSpot target-account snapshot (002 §4.1)."""

from __future__ import annotations

from morpheus_pipelines.models import HubSpotTargetAccount
from morpheus_pipelines.repositories.bulk import SetBasedRepository


class HubSpotTargetAccountRepository(SetBasedRepository[HubSpotTargetAccount]):
    model_class = HubSpotTargetAccount
