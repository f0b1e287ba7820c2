"""The HubSpot outbox as rules (docs/hubspot-outbox.md): what a row asks HubSpot to do, the
states it moves through, when a failed row is tried again and when it stops being tried.

Pure: no HTTP, no database. The repository (``crm.repositories.hubspot_outbox``) stores the
rows; the drain step (``crm.steps.hubspot_outbox``) sends them.

* Every row names one *intent* (``intentKey``, unique per subscription): the lead's contact,
  the task of a follow-up, the owner of a task at one escalation stage, one rep's call list of
  one day. Writing the same intent twice stores it once, and every HubSpot write a row makes
  is an upsert keyed by a unique property, so a retried batch never creates a second object.
* A failed write is tried again after an exponential back-off (capped), or after the
  ``Retry-After`` HubSpot asked for when that is longer; after ``MAX_ATTEMPTS`` failures the
  row is ``dead``: kept with its last reason, shown by a check and the Daily Summary, and
  re-queued by a person (``morpheus outbox retry``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID

BATCH_SIZE = 100  # HubSpot's batch endpoints take at most 100 inputs
# With the back-off below, ten failures span about three hours: an hour-long outage of
# HubSpot leaves every row pending, not dead.
MAX_ATTEMPTS = 10
FIRST_RETRY = timedelta(seconds=30)
LONGEST_RETRY = timedelta(hours=1)
# The unique properties the upserts are keyed by (created in the portal by
# ``morpheus subscription prepare-hubspot``); ``email`` is HubSpot's own.
LEAD_KEY_PROPERTY = "morpheus_lead_key"
INTENT_KEY_PROPERTY = "morpheus_intent_key"


class OutboxKind(enum.StrEnum):
    """What a row writes; the drain sends the kinds in this order, so a task or a call finds
    the contact its lead's row created in the same drain."""

    CONTACT = "contact"  # a lead's contact: created or updated, with its owner
    CONTACT_OWNER = "contact_owner"  # a new owner of an existing HubSpot contact
    TASK = "task"  # a follow-up task: created, re-owned or completed
    CALL = "call"  # an AI call: a call engagement owned by the dialer
    CALL_LIST = "call_list"  # a rep's daily call list: the list's members replaced
    REP_LIST = "rep_list"  # a rep's own list for sequences, created when the rep has none


DRAIN_ORDER: tuple[OutboxKind, ...] = tuple(OutboxKind)


class OutboxStatus(enum.StrEnum):
    """Where a row is (``hubspot_outbox.status``)."""

    PENDING = "pending"  # to be sent (again) at ``nextAttemptAt``
    DONE = "done"  # HubSpot has it; ``hubspotObjectId`` is the object written
    DEAD = "dead"  # failed MAX_ATTEMPTS times; kept with ``lastError`` until re-queued


@dataclass(frozen=True)
class OutboxBacklog:
    """The outbox of one subscription at a glance."""

    pending: int
    due: int
    dead: int
    done_since: int
    oldest_pending_at: datetime | None
    dead_reasons: dict[str, int]


def retry_delay(attempts: int, *, retry_after: timedelta | None = None) -> timedelta:
    """How long a row that has now failed ``attempts`` times waits: doubling from
    ``FIRST_RETRY`` up to ``LONGEST_RETRY``, never shorter than HubSpot's ``Retry-After``."""
    if attempts < 1:
        raise ValueError("a retry follows at least one failed attempt")
    delay = min(FIRST_RETRY * 2 ** (attempts - 1), LONGEST_RETRY)
    if retry_after is not None and retry_after > delay:
        return retry_after
    return delay


def after_failure(
    attempts: int, now: datetime, *, retry_after: timedelta | None = None
) -> tuple[OutboxStatus, datetime]:
    """The status and next attempt time of a row that has now failed ``attempts`` times."""
    if attempts >= MAX_ATTEMPTS:
        return OutboxStatus.DEAD, now
    return OutboxStatus.PENDING, now + retry_delay(attempts, retry_after=retry_after)


T = TypeVar("T")


def batches(rows: Iterable[T], size: int = BATCH_SIZE) -> Iterable[Sequence[T]]:
    """``rows`` in consecutive batches of at most ``size``."""
    if size < 1:
        raise ValueError("a batch holds at least one row")
    batch: list[T] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def lead_contact_intent(lead_id: object) -> str:
    return f"lead:{lead_id}:contact"


def lead_owner_intent(lead_id: object, owner_id: str) -> str:
    return f"lead:{lead_id}:owner:{owner_id}"


def task_intent(task_id: object) -> str:
    return f"task:{task_id}"


def task_change_intent(task_id: object, change: str) -> str:
    return f"task:{task_id}:{change}"


def call_intent(activity_id: object) -> str:
    return f"call:{activity_id}"


def call_list_intent(sales_rep_id: object, day: str) -> str:
    return f"call-list:{sales_rep_id}:{day}"


def rep_list_intent(sales_rep_id: object) -> str:
    return f"rep-list:{sales_rep_id}"


# -- HubSpot's properties of each subject ------------------------------------------------------


def contact_key(lead: Mapping[str, Any]) -> tuple[str, str]:
    """``(id, idProperty)`` of the lead's contact upsert: its email when it has one (HubSpot's
    own unique key for contacts), else the lead's key, so a phone-only lead sent twice is one
    contact."""
    if lead.get("email"):
        return str(lead["email"]).lower(), "email"
    return f"lead:{lead['lead_id']}", LEAD_KEY_PROPERTY


def contact_properties(lead: Mapping[str, Any]) -> dict[str, str]:
    """The lead's contact as HubSpot properties, with the lead's owner as the contact's."""
    properties = {
        "email": lead.get("email"),
        "phone": lead.get("phone"),
        "firstname": lead.get("first_name"),
        "lastname": lead.get("last_name"),
        "hubspot_owner_id": lead.get("owner_id"),
    }
    key, id_property = contact_key(lead)
    if id_property == LEAD_KEY_PROPERTY:
        properties[LEAD_KEY_PROPERTY] = key
    return {name: str(value) for name, value in properties.items() if value}


def _millis(moment: datetime) -> str:
    return str(int(moment.timestamp() * 1000))


def task_properties(task: Mapping[str, Any]) -> dict[str, str]:
    """A follow-up task as a HubSpot task: due date, owner (none: nobody was assignable),
    status, and high priority once escalated."""
    properties = {
        "hs_task_subject": f"Follow up: {task.get('segment') or 'call'}",
        "hs_task_body": f"Morpheus follow-up task {task['task_id']}",
        "hs_timestamp": _millis(task["due_at"]),
        "hs_task_status": "COMPLETED" if task["status"] == "COMPLETED" else "NOT_STARTED",
        "hs_task_type": "CALL",
        "hs_task_priority": "HIGH" if task["escalation_stage"] else "MEDIUM",
    }
    if task.get("owner_id"):
        properties["hubspot_owner_id"] = str(task["owner_id"])
    return properties


def call_properties(call: Mapping[str, Any]) -> dict[str, str]:
    """An AI call as a HubSpot call engagement, owned by the AI dialer whoever owns the
    contact: the CRM records who made the call."""
    return {
        "hs_timestamp": _millis(call["occurred_at"]),
        "hs_call_title": call.get("subject") or "AI call",
        "hs_call_body": call.get("body") or "",
        # Stored lower case; HubSpot's enumeration is upper case.
        "hs_call_direction": str(call.get("direction") or "outbound").upper(),
        "hs_call_status": "COMPLETED",
        "hubspot_owner_id": DIALER_FALLBACK_HUBSPOT_OWNER_ID,
    }


def call_list_name(rep_email: str) -> str:
    return f"Morpheus call list: {rep_email}"


def rep_list_name(rep_email: str) -> str:
    return f"Morpheus sequences: {rep_email}"
