"""CRM objects read in batches (``POST /crm/v3/objects/{type}/batch/read``), what companies and
contacts share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from morpheus_pipelines.platform.clients.hubspot.transport import HubSpotTransport, results_of

BATCH_READ_SIZE = 100


@dataclass(frozen=True)
class CompanyBatch:
    """One ``batch/read`` answer: the companies found and the ids HubSpot says are missing."""

    companies: list[dict[str, Any]]
    missing_ids: list[str]
    status: int


def error_ids(body: dict[str, Any]) -> list[str]:
    """Record ids named by the ``errors`` of a 207 batch answer."""
    ids: list[str] = []
    for error in body.get("errors") or []:
        ids.extend(str(i) for i in ((error or {}).get("context") or {}).get("ids") or [])
    return ids


class ObjectBatchReads(HubSpotTransport):
    """``batch/read`` of any CRM object type."""

    def _batch_read(
        self, object_type: str, endpoint: str, ids: Sequence[str], properties: Sequence[str]
    ) -> CompanyBatch:
        if len(ids) > BATCH_READ_SIZE:
            raise ValueError(f"batch/read takes at most {BATCH_READ_SIZE} ids")
        payload = {
            "inputs": [{"id": str(i)} for i in ids],
            "properties": list(properties),
            "propertiesWithHistory": [],
        }
        status, body = self.request(
            "POST", f"/crm/v3/objects/{object_type}/batch/read", endpoint=endpoint, json=payload
        )
        results = results_of(body, "batch/read response has no 'results' list", endpoint=endpoint)
        missing = error_ids(body)
        found = {str(c.get("id")) for c in results if isinstance(c, dict)}
        missing.extend(i for i in map(str, ids) if i not in found and i not in missing)
        return CompanyBatch(companies=results, missing_ids=missing, status=status)
