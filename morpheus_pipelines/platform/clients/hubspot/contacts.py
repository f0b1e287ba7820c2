"""Contacts: their owners and emails read, their properties written back (docs/ownership.md),
upserted by email or by Morpheus's lead key, and searched by modification time (the
reconciliation, docs/hubspot-webhooks.md)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from morpheus_pipelines.platform.clients.hubspot.objects import (
    BatchWriteResult,
    ObjectBatchReads,
    ObjectBatchWrites,
    ObjectUpsert,
    error_ids,
)
from morpheus_pipelines.platform.clients.hubspot.search import (
    SEARCH_PAGE_SIZE,
    ObjectSearch,
    since_millis,
)
from morpheus_pipelines.platform.clients.hubspot.transport import results_of

BATCH_UPDATE_SIZE = 100

# What the re-engagement segments need of a list member (docs/ownership.md).
SEGMENT_CONTACT_PROPERTIES = (
    "email",
    "phone",
    "hubspot_owner_id",
    "call_assigned_to",
    "lifecyclestage",
    "hs_email_optout",
)


@dataclass(frozen=True)
class ContactUpdateBatch:
    """One contacts ``batch/update`` answer: the ids written and those HubSpot does not know."""

    updated_ids: list[str]
    missing_ids: list[str]


class ContactEndpoints(ObjectBatchReads, ObjectBatchWrites, ObjectSearch):
    """The contact endpoints."""

    def batch_upsert_contacts(self, inputs: Sequence[ObjectUpsert]) -> BatchWriteResult:
        """``POST /crm/v3/objects/contacts/batch/upsert`` for ≤ 100 contacts, each keyed by
        ``email`` (matched in any case) or ``morpheus_lead_key`` (``id_property``): a contact
        with that value is updated, else created, so a retried batch creates no one twice."""
        return self._batch_upsert("contacts", "contacts_batch_upsert", inputs)

    def read_contact_owners(self, contact_ids: Sequence[str]) -> dict[str, str | None]:
        """The current ``hubspot_owner_id`` of ≤ 100 contacts (``None``: no owner); contacts
        HubSpot does not know are left out. The ownership block decides on this, not on a
        local copy that a person may have changed in HubSpot since."""
        batch = self._batch_read(
            "contacts", "contacts_batch_read", contact_ids, ("hubspot_owner_id",)
        )
        return {
            str(c["id"]): ((c.get("properties") or {}).get("hubspot_owner_id") or None)
            for c in batch.companies
            if isinstance(c, dict) and c.get("id") is not None
        }

    def read_contact_emails(self, contact_ids: Sequence[str]) -> dict[str, str]:
        """The ``email`` of ≤ 100 contacts (contacts without one, or unknown, are left
        out)."""
        batch = self._batch_read("contacts", "contacts_batch_read", contact_ids, ("email",))
        return {
            str(c["id"]): email
            for c in batch.companies
            if isinstance(c, dict) and (email := (c.get("properties") or {}).get("email"))
        }

    def read_contacts(
        self, contact_ids: Sequence[str], properties: Sequence[str] = SEGMENT_CONTACT_PROPERTIES
    ) -> dict[str, dict[str, str | None]]:
        """``properties`` of ≤ 100 contacts, by contact id (contacts HubSpot does not know are
        left out)."""
        batch = self._batch_read("contacts", "contacts_batch_read", contact_ids, properties)
        return {
            str(c["id"]): {name: (c.get("properties") or {}).get(name) for name in properties}
            for c in batch.companies
            if isinstance(c, dict) and c.get("id") is not None
        }

    def iter_contacts_modified_since(
        self, since: datetime, properties: Sequence[str], *, limit: int = SEARCH_PAGE_SIZE
    ) -> Iterator[list[dict[str, Any]]]:
        """Pages of the contacts whose ``lastmodifieddate`` is at or after ``since``, oldest
        first (``POST /crm/v3/objects/contacts/search``), each with ``properties`` and
        ``lastmodifieddate``. Past HubSpot's 10,000-result cap of one query a new query starts
        from the last modification time seen, so contacts may come twice."""
        return self._iter_modified_since(
            "contacts",
            modified_property="lastmodifieddate",
            since_ms=since_millis(since),
            properties=properties,
            endpoint="contacts_search",
            limit=limit,
        )

    def batch_update_contacts(
        self, updates: Sequence[tuple[str, dict[str, str]]]
    ) -> ContactUpdateBatch:
        """``POST /crm/v3/objects/contacts/batch/update`` for ≤ 100 ``(contact id,
        properties)`` pairs. Setting a property to the value it already has changes nothing,
        so a retried batch is harmless."""
        if len(updates) > BATCH_UPDATE_SIZE:
            raise ValueError(f"batch/update takes at most {BATCH_UPDATE_SIZE} contacts")
        payload = {"inputs": [{"id": str(i), "properties": dict(p)} for i, p in updates]}
        endpoint = "contacts_batch_update"
        _, body = self.request(
            "POST", "/crm/v3/objects/contacts/batch/update", endpoint=endpoint, json=payload
        )
        results = results_of(body, "batch/update response has no 'results' list", endpoint=endpoint)
        updated = [str(r.get("id")) for r in results if isinstance(r, dict)]
        return ContactUpdateBatch(updated_ids=updated, missing_ids=error_ids(body))
