"""CRM objects read in batches (``POST /crm/v3/objects/{type}/batch/read``), what companies,
contacts and deals share, and the contacts associated with records of any type
(``POST /crm/v4/associations/{type}/contacts/batch/read``), what engagements and deals share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from morpheus_pipelines.platform.clients.hubspot.transport import (
    HubSpotError,
    HubSpotTransport,
    results_of,
)

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
    """``batch/read`` of any CRM object type, and its records' contacts."""

    def _batch_read(
        self,
        object_type: str,
        endpoint: str,
        ids: Sequence[str],
        properties: Sequence[str],
        properties_with_history: Sequence[str] = (),
    ) -> CompanyBatch:
        if len(ids) > BATCH_READ_SIZE:
            raise ValueError(f"batch/read takes at most {BATCH_READ_SIZE} ids")
        payload = {
            "inputs": [{"id": str(i)} for i in ids],
            "properties": list(properties),
            "propertiesWithHistory": list(properties_with_history),
        }
        status, body = self.request(
            "POST", f"/crm/v3/objects/{object_type}/batch/read", endpoint=endpoint, json=payload
        )
        results = results_of(body, "batch/read response has no 'results' list", endpoint=endpoint)
        missing = error_ids(body)
        found = {str(c.get("id")) for c in results if isinstance(c, dict)}
        missing.extend(i for i in map(str, ids) if i not in found and i not in missing)
        return CompanyBatch(companies=results, missing_ids=missing, status=status)

    def _read_associated_contacts(self, from_type: str, ids: Sequence[str]) -> dict[str, list[str]]:
        """The contacts each of ≤ 100 records of ``from_type`` is associated with, in HubSpot's
        order. HubSpot answers a limited number of one record's associations per call and a
        ``paging.next.after`` for the rest: those records are asked again from there, so a
        record with many contacts comes whole. Records without contacts are left out."""
        if len(ids) > BATCH_READ_SIZE:
            raise ValueError(f"associations batch/read takes at most {BATCH_READ_SIZE} ids")
        endpoint = "associations_batch_read"
        path = f"/crm/v4/associations/{from_type}/contacts/batch/read"
        found: dict[str, list[str]] = {}
        asked: list[dict[str, str]] = [{"id": str(i)} for i in ids]
        while asked:
            _, body = self.request("POST", path, endpoint=endpoint, json={"inputs": asked})
            results = results_of(
                body, "associations response has no 'results' list", endpoint=endpoint
            )
            cursors = {item["id"]: item.get("after") for item in asked}
            asked = []
            for item in results:
                if not isinstance(item, dict) or not isinstance(item.get("from"), dict):
                    continue
                record = str(item["from"]["id"])
                # toObjectId is typed a string; a number is read the same way.
                found.setdefault(record, []).extend(
                    str(to["toObjectId"]) for to in item.get("to") or ()
                )
                after = ((item.get("paging") or {}).get("next") or {}).get("after")
                if after:
                    if str(after) == cursors.get(record):
                        raise HubSpotError(
                            f"associations paging of {from_type} {record} did not advance",
                            endpoint=endpoint,
                        )
                    asked.append({"id": record, "after": str(after)})
        return found
