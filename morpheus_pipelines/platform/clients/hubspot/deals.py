"""Deals: searched by modification time, read in batches (with when each entered its stage),
and the contacts each is associated with (the deal worker and the reconciliation,
docs/hubspot-webhooks.md)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from morpheus_pipelines.platform.clients.hubspot.associations import AssociationReads
from morpheus_pipelines.platform.clients.hubspot.objects import ObjectBatchReads
from morpheus_pipelines.platform.clients.hubspot.search import (
    SEARCH_PAGE_SIZE,
    ObjectSearch,
    hubspot_millis,
    since_millis,
)

DEAL_STAGE_PROPERTY = "dealstage"


@dataclass(frozen=True)
class DealStage:
    """A deal's stage now, and since when (the newest entry of its ``dealstage`` history;
    ``None`` when HubSpot gives no history)."""

    stage: str | None
    entered_at: datetime | None


def _entered_at(deal: dict[str, Any]) -> datetime | None:
    history = (deal.get("propertiesWithHistory") or {}).get(DEAL_STAGE_PROPERTY) or []
    stamps = [hubspot_millis(h.get("timestamp")) for h in history if isinstance(h, dict)]
    stamps = [s for s in stamps if s > 0]
    return datetime.fromtimestamp(max(stamps) / 1000, UTC) if stamps else None


class DealEndpoints(ObjectBatchReads, AssociationReads, ObjectSearch):
    """The deal endpoints."""

    def iter_deals_modified_since(
        self, since: datetime, properties: Sequence[str], *, limit: int = SEARCH_PAGE_SIZE
    ) -> Iterator[list[dict[str, Any]]]:
        """Pages of the deals whose ``hs_lastmodifieddate`` is at or after ``since``, oldest
        first (``POST /crm/v3/objects/deals/search``), each with ``properties`` and
        ``hs_lastmodifieddate``. Past HubSpot's 10,000-result cap of one query a new query
        starts from the last modification time seen, so deals may come twice."""
        return self._iter_modified_since(
            "deals",
            modified_property="hs_lastmodifieddate",
            since_ms=since_millis(since),
            properties=properties,
            endpoint="deals_search",
            limit=limit,
        )

    def read_deals(
        self, deal_ids: Sequence[str], properties: Sequence[str]
    ) -> dict[str, dict[str, str | None]]:
        """``properties`` of ≤ 100 deals, by deal id (deals HubSpot does not know are left
        out)."""
        batch = self._batch_read("deals", "deals_batch_read", deal_ids, properties)
        return {
            str(d["id"]): {name: (d.get("properties") or {}).get(name) for name in properties}
            for d in batch.companies
            if isinstance(d, dict) and d.get("id") is not None
        }

    def read_deal_stages(self, deal_ids: Sequence[str]) -> dict[str, DealStage]:
        """The stage of ≤ 100 deals and when each entered it, read with the ``dealstage``
        history (deals HubSpot does not know are left out)."""
        batch = self._batch_read(
            "deals",
            "deals_batch_read",
            deal_ids,
            (DEAL_STAGE_PROPERTY,),
            properties_with_history=(DEAL_STAGE_PROPERTY,),
        )
        return {
            str(d["id"]): DealStage(
                stage=(d.get("properties") or {}).get(DEAL_STAGE_PROPERTY) or None,
                entered_at=_entered_at(d),
            )
            for d in batch.companies
            if isinstance(d, dict) and d.get("id") is not None
        }

    def read_deal_contacts(self, deal_ids: Sequence[str]) -> dict[str, list[str]]:
        """The contacts each of ≤ 100 deals is associated with
        (``POST /crm/v4/associations/deals/contacts/batch/read``); deals without contacts are
        left out."""
        return self._read_associated_contacts("deals", deal_ids)
