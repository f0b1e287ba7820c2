"""Companies: the target accounts' records the snapshot reads (docs/pipeline.md)."""

from __future__ import annotations

from collections.abc import Sequence

from morpheus_pipelines.platform.clients.hubspot.objects import CompanyBatch, ObjectBatchReads

# Only what deterministic matching and audit need.
COMPANY_PROPERTIES = (
    "hs_object_id",
    "portal_id__c",
    "account_id__c",
    "domain",
    "website",
    "hs_additional_domains",
    "name",
    "account_allias__c",
    "hs_lastmodifieddate",
)


class CompanyEndpoints(ObjectBatchReads):
    """The company endpoints."""

    def batch_read_companies(
        self, company_ids: Sequence[str], properties: Sequence[str] = COMPANY_PROPERTIES
    ) -> CompanyBatch:
        """``POST /crm/v3/objects/companies/batch/read`` for ≤ 100 ids.

        A 207 carries ``errors``; the ids they name are returned as ``missing_ids``.
        """
        return self._batch_read("companies", "batch_read", company_ids, properties)
