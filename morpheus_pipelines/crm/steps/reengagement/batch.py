"""One batch of a re-engagement segment, phase by phase, inside the caller's transaction:
claim the new members (with the owners HubSpot has now), screen out those with live work,
decide their owners, then act on each decision and record every outcome with the HubSpot
write-back it owes."""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from morpheus_pipelines.crm.models import (
    Activity,
    ActivityType,
    AssignmentOutcome,
    FollowUpTask,
    FollowUpTaskType,
    ReengagementSegment,
    SalesRep,
    WriteBackStatus,
)
from morpheus_pipelines.crm.repositories.reengagement import ClaimedMember
from morpheus_pipelines.crm.repositories.sales_rep_round_robin import lock_rotation
from morpheus_pipelines.crm.rules.hubspot_outbox import OutboxKind, call_intent, task_intent
from morpheus_pipelines.crm.rules.ownership import (
    DIALER_FALLBACK_HUBSPOT_OWNER_ID,
    SEGMENT_POLICIES,
    NoRepAvailable,
    OwnershipDecision,
    OwnershipRequest,
    SegmentPolicy,
)
from morpheus_pipelines.crm.rules.timeline import DIALER_CALL_EXTERNAL_ID_PREFIX
from morpheus_pipelines.crm.steps.ownership import decide_ownership
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.platform.clients.hubspot import BATCH_UPDATE_SIZE, HubSpotClient
from morpheus_pipelines.platform.observability.events import log_event

# A rep's call this recent is the follow-up an email click would have asked for.
HUMAN_CALL_SUPPRESSES_FOR = timedelta(days=3)
# When the follow-up call is due after the contact re-engaged.
FOLLOW_UP_DUE_AFTER = timedelta(hours=24)
DEFAULT_BATCH_SIZE = BATCH_UPDATE_SIZE


@dataclass(frozen=True)
class SegmentSettings:
    subscription_id: uuid.UUID
    unassigned_list_id: str | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    run_id: str | None = None


class BatchAborted(NoRepAvailable):
    """A batch nobody could be assigned to, rolled back whole; ``last_member_id`` is where
    the segment's next batch of the same run starts after."""

    def __init__(self, reason: NoRepAvailable, last_member_id: int) -> None:
        super().__init__(str(reason))
        self.last_member_id = last_member_id


def assign_batch(
    store: CrmStore,
    segment: ReengagementSegment,
    settings: SegmentSettings,
    client: HubSpotClient,
    *,
    after_member_id: int | None = None,
) -> Counter[str]:
    """Claim (members after ``after_member_id``, when given), screen, decide and record one
    batch; its outcomes counted (empty: no new member). Raises :class:`BatchAborted` or
    ``HubSpotError`` for the caller to roll back."""
    policy = SEGMENT_POLICIES[segment]
    members = claim_members(store, segment, settings, client, after_member_id=after_member_id)
    if not members:
        return Counter()
    routed, skipped = screen_members(store, members, policy, settings.subscription_id)
    try:
        decisions = decide_ownership(
            store.session,
            settings.subscription_id,
            policy,
            [OwnershipRequest(m.contact_id, m.hubspot_owner_id, m.deal_owner_id) for m in routed],
            sales_rep_repo=store.sales_reps,
        )
    except NoRepAvailable as exc:
        raise BatchAborted(exc, max(m.member_id for m in members)) from exc
    rows = [
        _skipped_row(m, skipped[m.member_id], settings) for m in members if m.member_id in skipped
    ]
    for member, decision in zip(routed, decisions, strict=True):
        rows.append(act_on_decision(store, member, decision, segment, settings))
    store.assignments.record(store.session, rows)
    return Counter(row["outcome"].value for row in rows)


# -- claim ----------------------------------------------------------------------------------


def claim_members(
    store: CrmStore,
    segment: ReengagementSegment,
    settings: SegmentSettings,
    client: HubSpotClient,
    *,
    after_member_id: int | None = None,
) -> list[ClaimedMember]:
    """Up to ``batch_size`` new members of the segment (after ``after_member_id``, when
    given), under the subscription's rotation lock, with the owners HubSpot has now."""
    lock_rotation(store.session, settings.subscription_id)
    members = store.members.claim_new(
        store.session,
        settings.subscription_id,
        segment,
        limit=settings.batch_size,
        after_member_id=after_member_id,
    )
    if not members:
        return []
    return _with_current_owners(store, client, members)


def _with_current_owners(
    store: CrmStore, client: HubSpotClient, members: list[ClaimedMember]
) -> list[ClaimedMember]:
    """The members with the owner HubSpot has now (a person may have taken a contact there
    since we last saw it); the local contact is brought up to date. A contact HubSpot does not
    know keeps its local owner. One batch read of ≤ 100 contacts, inside the batch's
    transaction: the rotation lock is held for that call."""
    hubspot_ids = sorted({m.hubspot_contact_id for m in members if m.hubspot_contact_id})
    if not hubspot_ids:
        return members
    current = client.read_contact_owners(hubspot_ids)
    refreshed = []
    for member in members:
        if member.hubspot_contact_id in current:
            owner = current[member.hubspot_contact_id]
            if owner != member.hubspot_owner_id:
                store.contacts.update_by_id(
                    store.session, member.contact_id, {"hubspotOwnerId": owner}
                )
                member = replace(member, hubspot_owner_id=owner)
        refreshed.append(member)
    return refreshed


# -- screen ---------------------------------------------------------------------------------


def screen_members(
    store: CrmStore,
    members: list[ClaimedMember],
    policy: SegmentPolicy,
    subscription_id: uuid.UUID,
) -> tuple[list[ClaimedMember], dict[int, AssignmentOutcome]]:
    """``(routed, skipped)``: the members that go to the ownership block, and why each other
    one is skipped (by member id). A contact already seen in the batch counts as live work."""
    recently_called = _recently_called_by_a_human(store, members, policy, subscription_id)
    skipped: dict[int, AssignmentOutcome] = {}
    seen_contacts: set[int] = set()
    routed: list[ClaimedMember] = []
    for member in members:
        if member.contact_id in seen_contacts or store.tasks.has_active_task_for_contact(
            store.session, contact_id=member.contact_id, subscription_id=subscription_id
        ):
            skipped[member.member_id] = AssignmentOutcome.SKIPPED_ACTIVE_TASK
        elif member.contact_id in recently_called:
            skipped[member.member_id] = AssignmentOutcome.SKIPPED_RECENT_HUMAN_CALL
        else:
            routed.append(member)
        seen_contacts.add(member.contact_id)
    return routed, skipped


def _recently_called_by_a_human(
    store: CrmStore,
    members: list[ClaimedMember],
    policy: SegmentPolicy,
    subscription_id: uuid.UUID,
) -> set[int]:
    if not policy.skips_after_human_call:
        return set()
    return store.assignments.contacts_called_by_a_human_since(
        store.session,
        subscription_id,
        {m.contact_id for m in members},
        datetime.now(UTC) - HUMAN_CALL_SUPPRESSES_FOR,
        ai_owner_id=DIALER_FALLBACK_HUBSPOT_OWNER_ID,
    )


# -- act and record -------------------------------------------------------------------------


def act_on_decision(
    store: CrmStore,
    member: ClaimedMember,
    decision: OwnershipDecision,
    segment: ReengagementSegment,
    settings: SegmentSettings,
) -> dict[str, Any]:
    """Create the task, record the AI call, update the local contact; the outcome row."""
    rep = decision.rep
    if decision.outcome is AssignmentOutcome.UNASSIGNED:
        log_event(
            "reengagement_no_rep",
            level=logging.WARNING,
            segment=segment.value,
            contact_id=member.contact_id,
            contact_email=member.contact_email,
        )
    task = _create_follow_up_task(store, member, rep, segment, settings.subscription_id)
    # The task and the AI call reach HubSpot through the outbox, queued in this transaction.
    store.outbox.enqueue(
        store.session,
        settings.subscription_id,
        OutboxKind.TASK,
        task_intent(task.id),
        follow_up_task_id=task.id,
    )
    if segment is ReengagementSegment.DIALER_CALL_ENDED:
        call = _record_ai_call(store, member, settings.subscription_id)
        store.outbox.enqueue(
            store.session,
            settings.subscription_id,
            OutboxKind.CALL,
            call_intent(call.id),
            activity_id=call.id,
        )
    _update_local_contact(store, member, decision)
    list_id = _enrolment_list(member, rep, segment, settings)
    status, error = _write_back_owed(member, decision, list_id)
    return _base_row(member, settings) | {
        "outcome": decision.outcome,
        "roundRobin": decision.round_robin,
        "salesRepId": rep.id if rep is not None else None,
        "hubspotOwnerId": decision.hubspot_owner_id,
        "callAssignedTo": decision.call_assigned_to,
        "followUpTaskId": task.id,
        "listId": list_id,
        "writeBackStatus": status,
        "writeBackError": error,
    }


def _create_follow_up_task(
    store: CrmStore,
    member: ClaimedMember,
    rep: SalesRep | None,
    segment: ReengagementSegment,
    subscription_id: uuid.UUID,
) -> FollowUpTask:
    return store.tasks.insert(
        store.session,
        {
            "subscriptionId": subscription_id,
            "contactId": member.contact_id,
            "salesRepId": rep.id if rep is not None else None,
            "type": FollowUpTaskType.CALL,
            "dueAt": datetime.now(UTC) + FOLLOW_UP_DUE_AFTER,
            "segment": segment.value,
        },
    )


def _record_ai_call(store: CrmStore, member: ClaimedMember, subscription_id: uuid.UUID) -> Activity:
    """The AI dialer's call engagement on the timeline, owned by the AI owner whoever owns
    the contact: the CRM records who actually made the call."""
    return store.activities.upsert(
        store.session,
        {
            "subscriptionId": subscription_id,
            "externalId": f"{DIALER_CALL_EXTERNAL_ID_PREFIX}{member.source_event_id}",
            "type": ActivityType.CALL,
            "direction": "outbound",
            "contactId": member.contact_id,
            "hubspotContactId": member.hubspot_contact_id,
            "metadata": {"hubspot_owner_id": DIALER_FALLBACK_HUBSPOT_OWNER_ID, "ai_call": True},
        },
        conflict_columns=["subscriptionId", "externalId"],
        update_columns=["metadata"],
    )


def _update_local_contact(
    store: CrmStore, member: ClaimedMember, decision: OwnershipDecision
) -> None:
    """The local contact takes the properties the decision writes to HubSpot."""
    changes = {}
    if decision.hubspot_owner_id is not None:
        changes["hubspotOwnerId"] = decision.hubspot_owner_id
    if decision.call_assigned_to is not None:
        changes["callAssignedTo"] = decision.call_assigned_to
    if changes:
        store.contacts.update_by_id(store.session, member.contact_id, changes)


def _enrolment_list(
    member: ClaimedMember,
    rep: SalesRep | None,
    segment: ReengagementSegment,
    settings: SegmentSettings,
) -> str | None:
    """The rep's own list; the unassigned list only for contacts nobody was assigned. A rep
    without a list gets the task and the properties but no enrolment (logged)."""
    if rep is None:
        return settings.unassigned_list_id
    if not rep.activeListId:
        log_event(
            "reengagement_rep_without_list",
            level=logging.WARNING,
            segment=segment.value,
            sales_rep_id=rep.id,
            contact_id=member.contact_id,
        )
    return rep.activeListId


def _write_back_owed(
    member: ClaimedMember, decision: OwnershipDecision, list_id: str | None
) -> tuple[WriteBackStatus, str | None]:
    """What HubSpot is owed for this decision: nothing, a pending write-back, or a rejection
    when HubSpot could never be told (the contact has no HubSpot id)."""
    if not (decision.writes_properties or list_id is not None):
        return WriteBackStatus.NOT_NEEDED, None
    if member.hubspot_contact_id:
        return WriteBackStatus.PENDING, None
    return WriteBackStatus.REJECTED, "contact has no hubspotContactId"


def _base_row(member: ClaimedMember, settings: SegmentSettings) -> dict[str, Any]:
    return {
        "subscriptionId": settings.subscription_id,
        "memberId": member.member_id,
        "segment": member.segment,
        "contactId": member.contact_id,
        "hubspotContactId": member.hubspot_contact_id,
        "previousOwnerId": member.hubspot_owner_id,
        "runId": settings.run_id,
    }


def _skipped_row(
    member: ClaimedMember, outcome: AssignmentOutcome, settings: SegmentSettings
) -> dict[str, Any]:
    return _base_row(member, settings) | {
        "outcome": outcome,
        "writeBackStatus": WriteBackStatus.NOT_NEEDED,
    }
