"""What the HubSpot reconciliation applies of what HubSpot holds now (docs/hubspot-webhooks.md,
"The reconciliation"), as rules: pure, no HTTP, no database.

Webhooks arrive at least once, and some never do. The reconciliation re-reads the contacts and
deals HubSpot changed since its cursor and applies what their webhooks would have, no more:

* a contact's ``hubspot_owner_id`` or ``call_assigned_to`` that our contacts hold otherwise
  is stored on them, and the owner on the leads linked to the contact, as the webhook does;
* ``hs_email_optout`` ``"true"`` opts out the contact's addresses that are not opted out yet,
  through the out-of-order guard, at the contact's ``lastmodifieddate``. An opt-in is *not*
  applied: ``"false"`` is also what HubSpot holds for a contact that never opted out, and on
  that evidence alone we would mail someone who may have unsubscribed another way; a real
  opt-in arrives by its webhook;
* a deal in a closed stage closes its contacts' open leads created before it entered the
  stage, through the deal worker's function.

Each part keeps its own cursor: the newest modification time it has read, moved only after a
complete read. The next window starts an overlap before it, for HubSpot's search index, which
shows a change a little after it is made; the first run reads a fixed look-back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from morpheus_pipelines.crm.rules import watermarks
from morpheus_pipelines.crm.rules.hubspot_deals import STAGE_PROPERTY
from morpheus_pipelines.crm.rules.hubspot_webhooks import (
    CALL_ASSIGNED_PROPERTY,
    OPT_OUT_PROPERTY,
    OWNER_PROPERTY,
    opted_out,
    owner_value,
)

CONTACT_PROPERTIES = (OWNER_PROPERTY, CALL_ASSIGNED_PROPERTY, OPT_OUT_PROPERTY, "email")
CONTACT_MODIFIED_PROPERTY = "lastmodifieddate"
DEAL_PROPERTIES = (STAGE_PROPERTY,)
DEAL_MODIFIED_PROPERTY = "hs_lastmodifieddate"
DEFAULT_OVERLAP = timedelta(hours=1)
FIRST_RUN_LOOKBACK = timedelta(days=1)


def window_start(
    cursor: datetime | None,
    *,
    now: datetime,
    overlap: timedelta = DEFAULT_OVERLAP,
    first_run_lookback: timedelta = FIRST_RUN_LOOKBACK,
) -> datetime:
    """Where a part's read starts: its cursor minus the overlap, or the look-back on the
    first run."""
    return watermarks.window_start(
        cursor, now=now, overlap=overlap, first_run_lookback=first_run_lookback
    )


@dataclass(frozen=True)
class ContactChanges:
    """What one HubSpot contact asks of our rows."""

    owner: str | None
    owner_differs: bool  # some contact of ours holds another owner
    call_assigned: str | None
    call_assigned_differs: bool
    opted_out: bool  # HubSpot says opted out (an opt-in is never applied from here)


def contact_changes(
    properties: Mapping[str, str | None], stored: Sequence[tuple[str | None, str | None]]
) -> ContactChanges:
    """Compare HubSpot's ``properties`` of a contact with the ``(hubspotOwnerId,
    callAssignedTo)`` of each of our contacts with its id (empty when only leads name it)."""
    owner = owner_value(properties.get(OWNER_PROPERTY))
    call_assigned = owner_value(properties.get(CALL_ASSIGNED_PROPERTY))
    return ContactChanges(
        owner=owner,
        owner_differs=any(stored_owner != owner for stored_owner, _ in stored),
        call_assigned=call_assigned,
        call_assigned_differs=any(stored_call != call_assigned for _, stored_call in stored),
        opted_out=opted_out(properties.get(OPT_OUT_PROPERTY)),
    )
