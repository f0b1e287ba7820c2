"""HubSpot CRM v3 client: the target-account snapshot (docs/pipeline.md), the ownership
slice's owners mirror and write-back (docs/ownership.md), the engagement sync, the reads the
deal worker and the reconciliation converge on (docs/hubspot-webhooks.md), and the writes of
Morpheus's outbox (contacts, tasks and calls upserted by a unique key, their associations,
contact lists, the unique key properties; docs/hubspot-outbox.md).

``transport`` holds what every call shares (the session, the rate budget, bounded retries,
forward paging; its docstring has the retry policy); ``objects`` the batch reads and upserts
and :class:`BatchWriteResult`, ``search`` the search by modification time and
``associations`` the association reads and writes, which every object type shares; each other
module one API resource: ``lists``, ``companies``, ``contacts``, ``deals``, ``owners``,
``engagements``, ``tasks``, ``calls`` and ``properties``. :class:`HubSpotClient` is all of
them, and every public name is importable from here.
"""

from __future__ import annotations

from morpheus_pipelines.platform.clients.hubspot.associations import (
    ASSOCIATION_BATCH_SIZE,
    AssociationEndpoints,
)
from morpheus_pipelines.platform.clients.hubspot.calls import CALL_PROPERTIES, CallEndpoints
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
    MEMBERSHIP_CHANGE_SIZE,
    MEMBERSHIP_PAGE_SIZE,
    ListEndpoints,
    ListMembershipChange,
)
from morpheus_pipelines.platform.clients.hubspot.objects import (
    BATCH_READ_SIZE,
    BATCH_UPSERT_SIZE,
    NOT_IN_ANSWER,
    BatchWriteResult,
    CompanyBatch,
    ObjectUpsert,
)
from morpheus_pipelines.platform.clients.hubspot.owners import OWNERS_PAGE_SIZE, OwnerEndpoints
from morpheus_pipelines.platform.clients.hubspot.properties import (
    INTENT_KEY_PROPERTY,
    LEAD_KEY_PROPERTY,
    UNIQUE_KEY_PROPERTIES,
    PropertyEndpoints,
)
from morpheus_pipelines.platform.clients.hubspot.search import SEARCH_PAGE_SIZE, SEARCH_RESULT_CAP
from morpheus_pipelines.platform.clients.hubspot.tasks import TASK_PROPERTIES, TaskEndpoints
from morpheus_pipelines.platform.clients.hubspot.transport import NOT_RETRIED, HubSpotError


class HubSpotClient(
    ListEndpoints,
    CompanyEndpoints,
    ContactEndpoints,
    OwnerEndpoints,
    EngagementEndpoints,
    DealEndpoints,
    TaskEndpoints,
    CallEndpoints,
    AssociationEndpoints,
    PropertyEndpoints,
):
    """A small, strict client of the endpoints Morpheus reads and writes."""


__all__ = [
    "ASSOCIATION_BATCH_SIZE",
    "BATCH_READ_SIZE",
    "BATCH_UPDATE_SIZE",
    "BATCH_UPSERT_SIZE",
    "CALL_PROPERTIES",
    "COMPANY_PROPERTIES",
    "INTENT_KEY_PROPERTY",
    "LEAD_KEY_PROPERTY",
    "MEMBERSHIP_CHANGE_SIZE",
    "MEMBERSHIP_PAGE_SIZE",
    "NOT_IN_ANSWER",
    "NOT_RETRIED",
    "OWNERS_PAGE_SIZE",
    "SEARCH_PAGE_SIZE",
    "SEARCH_RESULT_CAP",
    "SEGMENT_CONTACT_PROPERTIES",
    "TASK_PROPERTIES",
    "UNIQUE_KEY_PROPERTIES",
    "BatchWriteResult",
    "CompanyBatch",
    "ContactUpdateBatch",
    "DealStage",
    "HubSpotClient",
    "HubSpotError",
    "ListMembershipChange",
    "ObjectUpsert",
]
