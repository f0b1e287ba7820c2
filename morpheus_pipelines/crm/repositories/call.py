"""Repository of dialer calls (docs/data-layer.md, "The CRM tables").

Calls are written by the dialer sync through :meth:`CallRepository.upsert_from_dialer`, the
base ``upsert`` on :data:`DIALER_CONFLICT_COLUMNS` (``providerCallId``, the provider's own call
id), so a call reported twice stays one row; campaign targets through
:meth:`CampaignTargetRepository.upsert_target`, on ``(campaignId, hubspotContactId)``. The
column lists live here, not in the writers, so the tests exercise the lists production uses.

``Call.target`` is mapped ``lazy="raise"``: touching it unloaded raises instead of issuing a
hidden query, and after the caller's session has closed there is nothing to query with. The
two ``get_with_target_*`` methods therefore load the target in the same statement
(``joinedload``), and a handler can read ``call.target`` after its ``with get_session()``
block.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from morpheus_pipelines.crm.models import Call, CampaignTarget
from morpheus_pipelines.platform.store.base import BaseRepository

# The dialer sync's upsert of a call (docs/data-layer.md): keyed by the provider's call id;
# the link to the campaign target is not an update column, so a re-report keeps it.
DIALER_CONFLICT_COLUMNS = ("providerCallId",)
DIALER_UPDATE_COLUMNS = (
    "targetPhoneNumber",
    "direction",
    "status",
    "disposition",
    "durationMs",
    "durationSec",
    "startTimestamp",
    "hubspotEngagementId",
    "hubspotSyncStatus",
    "contactName",
    "notes",
    "targetPhoneNumbersId",
    "salesRepId",
)
# One target per person per campaign.
CAMPAIGN_TARGET_CONFLICT_COLUMNS = ("campaignId", "hubspotContactId")


class CallRepository(BaseRepository[Call]):
    model_class = Call

    def upsert_from_dialer(self, session: Session, data: Mapping[str, Any]) -> Call:
        """The dialer sync's write of one call: inserted, or updated in place on its
        provider call id."""
        return self.upsert(
            session,
            data,
            conflict_columns=list(DIALER_CONFLICT_COLUMNS),
            update_columns=list(DIALER_UPDATE_COLUMNS),
        )

    def get_by_provider_call_id(self, session: Session, provider_call_id: str) -> Call | None:
        """Lookup by the dialer's own (unique) call identifier, the id its webhooks carry."""
        return session.scalars(select(Call).where(Call.providerCallId == provider_call_id)).first()

    def get_with_target_for_subscription(
        self, session: Session, call_id: int, subscription_id: uuid.UUID
    ) -> Call | None:
        """The call with its campaign target loaded, only if it belongs to the tenant:
        ``None`` for another subscription's call, exactly as for a missing one, so a caller
        cannot tell the two apart."""
        statement = (
            select(Call)
            .options(joinedload(Call.target))
            .where(Call.id == call_id, Call.subscriptionId == subscription_id)
        )
        return session.scalars(statement).first()

    def get_with_target_by_ids(
        self, session: Session, call_id: int, target_id: int, subscription_id: uuid.UUID
    ) -> Call | None:
        """As :meth:`get_with_target_for_subscription`, and the call must point at
        ``target_id``: a webhook pairing a call with someone else's target (a mismatched or
        forged pair) gets ``None`` instead of acting on the wrong person — defence in
        depth."""
        statement = (
            select(Call)
            .options(joinedload(Call.target))
            .where(
                Call.id == call_id,
                Call.targetId == target_id,
                Call.subscriptionId == subscription_id,
            )
        )
        return session.scalars(statement).first()


class CampaignTargetRepository(BaseRepository[CampaignTarget]):
    """A campaign's targets, one per person per campaign."""

    model_class = CampaignTarget

    def upsert_target(self, session: Session, data: Mapping[str, Any]) -> CampaignTarget:
        """Insert the target or update it in place on ``(campaignId, hubspotContactId)``."""
        return self.upsert(session, data, conflict_columns=list(CAMPAIGN_TARGET_CONFLICT_COLUMNS))
