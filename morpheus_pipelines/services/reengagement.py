"""The re-engagement segments: ownership block, follow-up task, list enrolment and the
HubSpot write-back (docs/ownership.md).

A segment is processed in batches. Each batch is one transaction that

1. takes the subscription's rotation lock (so "does this contact already have a task?" and
   the reservation cannot race another batch of the same subscription),
2. claims up to ``batch_size`` new members,
3. skips contacts with live work (``has_active_task_for_contact``) and, for email clicks,
   contacts a human rep called in the last few days,
4. applies the ownership block (one round-robin reservation for the batch),
5. creates the follow-up tasks, updates the local contact, records every outcome with the
   HubSpot write-back it owes (``pending``), and commits.

The HubSpot half (contacts ``batch/update`` of ``hubspot_owner_id`` / ``call_assigned_to``,
``memberships/add`` on the rep's list) runs after the commit, ≤ 100 contacts per call. A
failure leaves the write-backs ``pending`` with the reason; the next run completes them first.
So no task ever exists without either its write-back or a recorded pending write-back.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from morpheus_pipelines.clients.hubspot import BATCH_UPDATE_SIZE, HubSpotClient, HubSpotError
from morpheus_pipelines.crm.models import (
    ActivityType,
    AssignmentOutcome,
    FollowUpTaskType,
    ReengagementSegment,
    WriteBackStatus,
)
from morpheus_pipelines.crm.ownership import (
    DIALER_FALLBACK_HUBSPOT_OWNER_ID,
    SEGMENT_POLICIES,
    NoRepAvailable,
    OwnershipDecision,
    OwnershipRequest,
    decide_ownership,
)
from morpheus_pipelines.crm.repositories.activity import ActivityRepository
from morpheus_pipelines.crm.repositories.contact import ContactRepository
from morpheus_pipelines.crm.repositories.follow_up_task import FollowUpTaskRepository
from morpheus_pipelines.crm.repositories.reengagement import (
    ClaimedMember,
    ReengagementAssignmentRepository,
    ReengagementSegmentMemberRepository,
    SalesRepFairnessRepository,
)
from morpheus_pipelines.crm.repositories.sales_rep import SalesRepRepository
from morpheus_pipelines.crm.repositories.sales_rep_round_robin import lock_rotation
from morpheus_pipelines.observability.events import log_event
from morpheus_pipelines.rules.fairness import FairnessReport, RepShare, fairness

SessionFactory = Callable[[], AbstractContextManager[Session]]

# A rep's call this recent is the follow-up an email click would have asked for.
HUMAN_CALL_SUPPRESSES_FOR = timedelta(days=3)
# When the follow-up call is due after the contact re-engaged.
FOLLOW_UP_DUE_AFTER = timedelta(hours=24)
DEFAULT_BATCH_SIZE = BATCH_UPDATE_SIZE

_members = ReengagementSegmentMemberRepository()
_assignments = ReengagementAssignmentRepository()
_fairness = SalesRepFairnessRepository()
_sales_reps = SalesRepRepository()
_tasks = FollowUpTaskRepository()
_contacts = ContactRepository()
_activities = ActivityRepository()


@dataclass
class SegmentRun:
    """What one segment's run did."""

    segment: ReengagementSegment
    batches: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    aborted: str | None = None  # the reason, when a batch was aborted (campaign target)

    @property
    def processed(self) -> int:
        return sum(self.outcomes.values())


@dataclass
class WriteBackRun:
    """What the HubSpot write-back did."""

    written: int = 0
    rejected: int = 0
    enrolled: int = 0
    calls: int = 0
    error: str | None = None


@dataclass(frozen=True)
class SegmentSettings:
    subscription_id: uuid.UUID
    unassigned_list_id: str | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    run_id: str | None = None


def assign_segment(
    session_factory: SessionFactory,
    segment: ReengagementSegment,
    settings: SegmentSettings,
    *,
    log: logging.Logger | Any | None = None,
) -> SegmentRun:
    """Process every new member of ``segment``, one transaction per batch. A campaign-target
    batch with nobody to assign is rolled back whole and the segment stops (its members stay
    new for the next run)."""
    if not 1 <= settings.batch_size <= BATCH_UPDATE_SIZE:
        raise ValueError(f"batch_size must be 1..{BATCH_UPDATE_SIZE}, got {settings.batch_size}")
    run = SegmentRun(segment)
    while True:
        try:
            with session_factory() as session:
                outcomes = _assign_batch(session, segment, settings)
        except NoRepAvailable as exc:
            run.aborted = str(exc)
            log_event(
                "reengagement_batch_aborted",
                level=logging.ERROR,
                segment=segment.value,
                subscription_id=str(settings.subscription_id),
                reason=str(exc),
            )
            if log is not None:
                log.error(f"{segment.value}: {exc}")
            return run
        if not outcomes:
            return run
        run.batches += 1
        run.outcomes.update(outcomes)
        log_event(
            "reengagement_batch_committed",
            segment=segment.value,
            subscription_id=str(settings.subscription_id),
            batch=run.batches,
            **outcomes,
        )


def _assign_batch(
    session: Session, segment: ReengagementSegment, settings: SegmentSettings
) -> Counter[str]:
    subscription_id = settings.subscription_id
    policy = SEGMENT_POLICIES[segment]
    lock_rotation(session, subscription_id)
    members = _members.claim_new(session, subscription_id, segment, limit=settings.batch_size)
    if not members:
        return Counter()

    skipped: dict[int, AssignmentOutcome] = {}
    recently_called = (
        _assignments.contacts_called_by_a_human_since(
            session,
            subscription_id,
            {m.contact_id for m in members},
            datetime.now(UTC) - HUMAN_CALL_SUPPRESSES_FOR,
            ai_owner_id=DIALER_FALLBACK_HUBSPOT_OWNER_ID,
        )
        if policy.skips_after_human_call
        else set()
    )
    seen_contacts: set[int] = set()
    routed: list[ClaimedMember] = []
    for member in members:
        if member.contact_id in seen_contacts or _tasks.has_active_task_for_contact(
            session, contact_id=member.contact_id, subscription_id=subscription_id
        ):
            skipped[member.member_id] = AssignmentOutcome.SKIPPED_ACTIVE_TASK
        elif member.contact_id in recently_called:
            skipped[member.member_id] = AssignmentOutcome.SKIPPED_RECENT_HUMAN_CALL
        else:
            routed.append(member)
        seen_contacts.add(member.contact_id)

    decisions = decide_ownership(
        session,
        subscription_id,
        policy,
        [OwnershipRequest(m.contact_id, m.hubspot_owner_id, m.deal_owner_id) for m in routed],
        sales_rep_repo=_sales_reps,
    )
    rows = [
        _skipped_row(m, skipped[m.member_id], settings) for m in members if m.member_id in skipped
    ]
    for member, decision in zip(routed, decisions, strict=True):
        rows.append(_assigned_row(session, member, decision, segment, settings))
    _assignments.record(session, rows)
    return Counter(row["outcome"].value for row in rows)


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


def _assigned_row(
    session: Session,
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
    task = _tasks.insert(
        session,
        {
            "subscriptionId": settings.subscription_id,
            "contactId": member.contact_id,
            "salesRepId": rep.id if rep is not None else None,
            "type": FollowUpTaskType.CALL,
            "dueAt": datetime.now(UTC) + FOLLOW_UP_DUE_AFTER,
            "segment": segment.value,
        },
    )
    if segment is ReengagementSegment.DIALER_CALL_ENDED:
        _record_ai_call(session, member, settings.subscription_id)
    contact_changes = {}
    if decision.hubspot_owner_id is not None:
        contact_changes["hubspotOwnerId"] = decision.hubspot_owner_id
    if decision.call_assigned_to is not None:
        contact_changes["callAssignedTo"] = decision.call_assigned_to
    if contact_changes:
        _contacts.update_by_id(session, member.contact_id, contact_changes)
    list_id = (rep.activeListId if rep is not None else None) or settings.unassigned_list_id
    owes_hubspot = decision.writes_properties or list_id is not None
    status = WriteBackStatus.NOT_NEEDED
    error = None
    if owes_hubspot and member.hubspot_contact_id:
        status = WriteBackStatus.PENDING
    elif owes_hubspot:
        status, error = WriteBackStatus.REJECTED, "contact has no hubspotContactId"
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


def _record_ai_call(session: Session, member: ClaimedMember, subscription_id: uuid.UUID) -> None:
    """The AI dialer's call engagement on the timeline, owned by the AI owner whoever owns
    the contact: the CRM records who actually made the call."""
    _activities.upsert(
        session,
        {
            "subscriptionId": subscription_id,
            "externalId": f"dialer-call:{member.source_event_id}",
            "type": ActivityType.CALL,
            "direction": "OUTBOUND",
            "contactId": member.contact_id,
            "hubspotContactId": member.hubspot_contact_id,
            "metadata": {"hubspot_owner_id": DIALER_FALLBACK_HUBSPOT_OWNER_ID, "ai_call": True},
        },
        conflict_columns=["subscriptionId", "externalId"],
        update_columns=["metadata"],
    )


def write_back_pending(
    client: HubSpotClient,
    session_factory: SessionFactory,
    subscription_id: uuid.UUID,
    *,
    batch_size: int = BATCH_UPDATE_SIZE,
) -> WriteBackRun:
    """Send every pending write-back to HubSpot, ≤ ``batch_size`` contacts per call.

    Each batch is claimed (``SKIP LOCKED``) and closed in one transaction around its calls.
    A HubSpot failure records the reason on the batch, keeps it pending and stops: the next
    run starts with it. Contacts HubSpot does not know are ``rejected`` (a retry cannot help).
    Setting a property to the value it has and adding a list member twice change nothing, so
    a batch sent again after a crash is harmless."""
    run = WriteBackRun()
    while True:
        with session_factory() as session:
            pending = _assignments.claim_pending_write_backs(
                session, subscription_id, limit=batch_size
            )
            if not pending:
                return run
            ids = [p.assignment_id for p in pending]
            try:
                missing = _send(client, pending, run)
            except HubSpotError as exc:
                run.error = str(exc)
                _assignments.record_write_back_attempt(
                    session, ids, WriteBackStatus.PENDING, error=str(exc)
                )
                log_event(
                    "reengagement_write_back_failed",
                    level=logging.WARNING,
                    subscription_id=str(subscription_id),
                    pending=len(ids),
                    error=str(exc),
                )
                return run
            rejected = [p.assignment_id for p in pending if p.hubspot_contact_id in missing]
            done = [i for i in ids if i not in set(rejected)]
            _assignments.record_write_back_attempt(session, done, WriteBackStatus.DONE)
            _assignments.record_write_back_attempt(
                session, rejected, WriteBackStatus.REJECTED, error="HubSpot has no such contact"
            )
            run.written += len(done)
            run.rejected += len(rejected)


def _send(client: HubSpotClient, pending: list[Any], run: WriteBackRun) -> set[str]:
    """The batch's calls; the HubSpot contact ids HubSpot reported missing."""
    updates = []
    for item in pending:
        properties = {}
        if item.hubspot_owner_id is not None:
            properties["hubspot_owner_id"] = item.hubspot_owner_id
        if item.call_assigned_to is not None:
            properties["call_assigned_to"] = item.call_assigned_to
        if properties:
            updates.append((item.hubspot_contact_id, properties))
    missing: set[str] = set()
    if updates:
        result = client.batch_update_contacts(updates)
        run.calls += 1
        missing.update(result.missing_ids)
    by_list: dict[str, list[str]] = defaultdict(list)
    for item in pending:
        if item.list_id is not None and item.hubspot_contact_id not in missing:
            by_list[item.list_id].append(item.hubspot_contact_id)
    for list_id, record_ids in by_list.items():
        change = client.add_list_members(list_id, record_ids)
        run.calls += 1
        run.enrolled += len(change.added_ids)
        missing.update(change.missing_ids)
    return missing


def fairness_report(
    session_factory: SessionFactory,
    subscription_id: uuid.UUID,
    *,
    window: timedelta,
    run_id: str | None = None,
) -> FairnessReport:
    """Round-robin assignments per rep over ``window``, against a perfect rotation; the
    result also replaces the subscription's rows in ``sales_rep_fairness``."""
    window_end = datetime.now(UTC)
    window_start = window_end - window
    with session_factory() as session:
        counts = _assignments.round_robin_counts(session, subscription_id, window_start)
        report = fairness(
            [RepShare(c.sales_rep_id, c.email, c.eligible, c.assignments) for c in counts]
        )
        active = {c.sales_rep_id: c.is_active for c in counts}
        _fairness.replace_for_subscription(
            session,
            subscription_id,
            [
                {
                    "subscriptionId": subscription_id,
                    "salesRepId": row.rep_id,
                    "email": row.email,
                    "isActive": active[row.rep_id],
                    "assignments": row.assignments,
                    "expected": row.expected,
                    "deviation": row.deviation,
                    "windowStart": window_start,
                    "windowEnd": window_end,
                    "runId": run_id,
                }
                for row in report.rows
            ],
        )
    return report


@dataclass(frozen=True)
class Backlog:
    """Work waiting for ``reengagement_assignments``."""

    new_members: dict[str, int]
    newest_member_id: int | None
    pending_write_backs: int

    @property
    def empty(self) -> bool:
        return not self.new_members and not self.pending_write_backs


def backlog(session_factory: SessionFactory, subscription_id: uuid.UUID) -> Backlog:
    with session_factory() as session:
        return Backlog(
            _members.count_new(session, subscription_id),
            _members.newest_new_id(session, subscription_id),
            _assignments.count_by_write_back_status(session, subscription_id).get(
                WriteBackStatus.PENDING.value, 0
            ),
        )


def write_back_counts(
    session_factory: SessionFactory, subscription_id: uuid.UUID
) -> dict[str, int]:
    with session_factory() as session:
        return _assignments.count_by_write_back_status(session, subscription_id)
