"""What a HubSpot deal's stage means for our leads (docs/hubspot-webhooks.md, "Deal events"), as
rules: pure, no HTTP, no database.

* A deal moved to **closed won** or **closed lost** closes the open leads of its contacts as
  ``won`` or ``lost``: the leads linked to one of the deal's contacts
  (``leads.hubspotContactId``) and created at or before the change; a lead that came after the
  deal closed is a new conversation and stays open.
* The closed stages are those of HubSpot's default sales pipeline, ``closedwon`` and
  ``closedlost`` (:data:`CLOSED_STAGES`, a module constant: a portal's other pipelines name
  their stages by number, and they are not recognised until this becomes a setting).
* Of several stage changes of one deal only the latest counts: an older one is ignored as
  superseded, so the leads follow where the deal ended, whatever order the events came in.
* A deal's owner changing reaches no lead: no rule says what a deal owner means for a
  contact's leads (the contact's own owner does that), so the event is ignored and says why.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta

from morpheus_pipelines.crm.rules.hubspot_webhooks import OWNER_PROPERTY
from morpheus_pipelines.crm.rules.lead_status import LeadStatus

DEAL_EVENT_TYPE = "deal.propertyChange"
STAGE_PROPERTY = "dealstage"
CLOSED_STAGES = {"closedwon": LeadStatus.WON, "closedlost": LeadStatus.LOST}
# How long a deal event may wait before the check on the deal worker turns red.
PENDING_TOO_LONG = timedelta(minutes=15)


class IgnoredBecause(enum.StrEnum):
    """Why a deal event was settled ``ignored`` (counted in the worker's metadata)."""

    DEAL_OWNER = "deal_owner"
    OTHER_PROPERTY = "other_property"
    SUPERSEDED = "superseded"
    DEAL_NOT_FOUND = "deal_not_found"
    NOT_CLOSED = "stage_not_closed"
    NO_CONTACTS = "no_contacts"
    NO_OPEN_LEAD = "no_open_lead"


def lead_status_of_stage(stage: str | None) -> LeadStatus | None:
    """``won``/``lost`` for a closed stage; ``None`` for any other (or none)."""
    return CLOSED_STAGES.get((stage or "").strip())


def stage_of_event(value: str | None) -> str | None:
    """The stage a ``dealstage`` event reports; ``None`` when it carries none (the worker then
    reads the deal from HubSpot)."""
    return (value or "").strip() or None


@dataclass(frozen=True)
class DealEventPlan:
    """What to do with one pending deal event: close the leads of the deal's contacts as
    ``close_as``, or settle it ``ignored`` because of ``ignored`` (``outcome`` says it)."""

    close_as: LeadStatus | None = None
    ignored: IgnoredBecause | None = None
    outcome: str = ""


def plan_deal_event(
    property_name: str | None, stage: str | None, *, superseded: bool, deal_found: bool = True
) -> DealEventPlan:
    """The plan for a ``deal.propertyChange``: ``stage`` is the one it reports (or HubSpot's,
    read when it reports none), ``superseded`` whether a later stage change of the same deal
    was received, ``deal_found`` whether HubSpot still knows the deal when it had to be read."""
    if property_name == OWNER_PROPERTY:
        return DealEventPlan(
            ignored=IgnoredBecause.DEAL_OWNER,
            outcome="a deal's owner reaches no lead: no rule gives it to the contacts' leads",
        )
    if property_name != STAGE_PROPERTY:
        return DealEventPlan(
            ignored=IgnoredBecause.OTHER_PROPERTY,
            outcome=f"a deal's {property_name!r} is not used",
        )
    if superseded:
        return DealEventPlan(
            ignored=IgnoredBecause.SUPERSEDED,
            outcome="superseded: a later stage change of this deal was received",
        )
    if not deal_found or stage is None:
        return DealEventPlan(
            ignored=IgnoredBecause.DEAL_NOT_FOUND,
            outcome="the deal is not in HubSpot any more, so its stage is unknown",
        )
    close_as = lead_status_of_stage(stage)
    if close_as is None:
        return DealEventPlan(
            ignored=IgnoredBecause.NOT_CLOSED,
            outcome=f"stage {stage!r} is neither closed won nor closed lost",
        )
    return DealEventPlan(close_as=close_as)


def closing_outcome(close_as: LeadStatus, contacts: int, closed: int) -> DealEventPlan:
    """How a closing event ends: ``applied`` (``ignored`` is ``None``) when it closed leads,
    else ignored with why (no contacts, or none of them has an open lead any more)."""
    if not contacts:
        return DealEventPlan(close_as, IgnoredBecause.NO_CONTACTS, "the deal has no contacts")
    if not closed:
        return DealEventPlan(
            close_as,
            IgnoredBecause.NO_OPEN_LEAD,
            f"no open lead of the deal's {contacts} contact(s) to close as {close_as}",
        )
    return DealEventPlan(close_as, None, f"closed {closed} lead(s) as {close_as}")


def pending_health(
    oldest_received_at: datetime | None,
    now: datetime,
    max_age: timedelta = PENDING_TOO_LONG,
) -> tuple[bool, str]:
    """``(passed, summary)`` of the check that no deal event waits too long."""
    if oldest_received_at is None:
        return True, "no deal event is pending"
    waited = now - oldest_received_at
    minutes = int(waited.total_seconds() // 60)
    if waited > max_age:
        return False, (
            f"a deal event has been pending for {minutes} min "
            f"(more than {int(max_age.total_seconds() // 60)} min)"
        )
    return True, f"the oldest pending deal event has waited {minutes} min"
