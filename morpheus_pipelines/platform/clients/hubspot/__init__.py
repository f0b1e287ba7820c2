"""HubSpot CRM v3 client: the target-account snapshot (docs/pipeline.md), the ownership
slice's owners mirror and write-back (docs/ownership.md), and the reads the deal worker and
the reconciliation converge on (docs/hubspot-webhooks.md).

``transport`` holds what every call shares (the session, the rate budget, bounded retries,
forward paging; its docstring has the retry policy); each other module one API resource:
``lists``, ``companies``, ``contacts``, ``deals`` (with ``objects``, the batch reads and
association reads they use, and ``search``, the search by modification time), ``owners`` and
``engagements``. :class:`HubSpotClient` is all of them, and every public name is importable
from here.
"""

from __future__ import annotations

from morpheus_pipelines.platform.clients.hubspot.companies import (
    COMPANY_PROPERTIES,
    CompanyEndpoints,
)
from morpheus_pipelines.platform.clients.hubspot.contacts import (
    BATCH_UPDATE_SIZE,
    SEGMENT_CONTACT_PROPERTIES,
    ContactEndpoints,
    ContactUpdateBatch,
)
from morpheus_pipelines.platform.clients.hubspot.deals import DealEndpoints, DealStage
from morpheus_pipelines.platform.clients.hubspot.engagements import EngagementEndpoints
from morpheus_pipelines.platform.clients.hubspot.lists import (
    MEMBERSHIP_PAGE_SIZE,
    ListEndpoints,
    ListMembershipChange,
)
from morpheus_pipelines.platform.clients.hubspot.objects import BATCH_READ_SIZE, CompanyBatch
from morpheus_pipelines.platform.clients.hubspot.owners import OWNERS_PAGE_SIZE, OwnerEndpoints
from morpheus_pipelines.platform.clients.hubspot.search import SEARCH_PAGE_SIZE, SEARCH_RESULT_CAP
from morpheus_pipelines.platform.clients.hubspot.transport import NOT_RETRIED, HubSpotError


class HubSpotClient(
    ListEndpoints,
    CompanyEndpoints,
    ContactEndpoints,
    OwnerEndpoints,
    EngagementEndpoints,
    DealEndpoints,
):
    """A small, strict client of the endpoints the snapshot needs."""


__all__ = [
    "BATCH_READ_SIZE",
    "BATCH_UPDATE_SIZE",
    "COMPANY_PROPERTIES",
    "MEMBERSHIP_PAGE_SIZE",
    "NOT_RETRIED",
    "OWNERS_PAGE_SIZE",
    "SEARCH_PAGE_SIZE",
    "SEARCH_RESULT_CAP",
    "SEGMENT_CONTACT_PROPERTIES",
    "CompanyBatch",
    "ContactUpdateBatch",
    "DealStage",
    "HubSpotClient",
    "HubSpotError",
    "ListMembershipChange",
]
