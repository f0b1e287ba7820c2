"""Attribution of won leads under five models side by side (docs/leads.md, "Attribution"):
read every won lead's touches before its win, split the credit, write the report."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import groupby
from pathlib import Path
from typing import Any

from morpheus_pipelines.crm.reports.attribution import write_attribution_report
from morpheus_pipelines.crm.rules.attribution import (
    AttributedTouch,
    Attribution,
    WonLead,
    attribute,
)
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory


def owner_label(hubspot_owner_id: str) -> str:
    if hubspot_owner_id == DIALER_FALLBACK_HUBSPOT_OWNER_ID:
        return f"{hubspot_owner_id} (AI dialer)"
    return hubspot_owner_id


def _won_leads(rows: Iterator[tuple[Any, ...]]) -> Iterator[WonLead]:
    for lead_id, lead_rows in groupby(rows, key=lambda row: row[0]):
        lead_rows = list(lead_rows)
        _, won_at, lead_owner, *_ = lead_rows[0]
        touches = [
            AttributedTouch(
                occurred_at=occurred_at,
                channel=channel,
                # An inbound touch is handled by the lead's owner; an outbound one names its
                # own (a rep, or the AI dialer).
                owner=owner_label(touch_owner or lead_owner),
            )
            for _, _, _, occurred_at, channel, touch_owner in lead_rows
            if occurred_at is not None
        ]
        yield WonLead(str(lead_id), won_at, touches)


@dataclass
class AttributionPublication:
    attribution: Attribution
    generated_at: datetime
    files: dict[str, Path]


def publish_lead_attribution(
    session_factory: SessionFactory, subscription_id: uuid.UUID, *, home: str | Path
) -> AttributionPublication:
    """The subscription's won leads, five ways; one subscription's report never mixes in
    another's leads or owners."""
    generated_at = datetime.now(UTC)
    with session_factory() as session:
        touches = CrmStore(session).attribution.won_lead_touches(session, subscription_id)
        attribution = attribute(_won_leads(touches))
    files = write_attribution_report(attribution, generated_at, home)
    return AttributionPublication(attribution, generated_at, files)
