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
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import (
    ActivityType,
    AssignmentOutcome,
    FollowUpTaskType,
    ReengagementSegment,
    WriteBackStatus,
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
from morpheus_pipelines.crm.rules.fairness import FairnessReport, RepShare, fairness
from morpheus_pipelines.crm.rules.ownership import (
    DIALER_FALLBACK_HUBSPOT_OWNER_ID,
    SEGMENT_POLICIES,
    NoRepAvailable,
    OwnershipDecision,
    OwnershipRequest,
)
from morpheus_pipelines.crm.rules.timeline import DIALER_CALL_EXTERNAL_ID_PREFIX
from morpheus_pipelines.crm.steps.ownership import decide_ownership
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import (
    BATCH_UPDATE_SIZE,
    HubSpotClient,
    HubSpotError,
)
from morpheus_pipelines.platform.observability.events import log_event

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
    error: str | None = None  # HubSpot could not say who owns the contacts: members wait

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
    client: HubSpotClient,
    *,
    log: Any | None = None,
) -> SegmentRun:
    """Process every new member of ``segment``, one transaction per batch. A campaign-target
    batch with nobody to assign is rolled back whole and the segment stops (its members stay
    new for the next run); so does a batch whose owners HubSpot could not be asked for."""
    if not 1 <= settings.batch_size <= BATCH_UPDATE_SIZE:
        raise ValueError(f"batch_size must be 1..{BATCH_UPDATE_SIZE}, got {settings.batch_size}")
    run = SegmentRun(segment)
    while True:
        try:
            with session_factory() as session:
                outcomes = _assign_batch(session, segment, settings, client)
        except HubSpotError as exc:
            run.error = str(exc)
            log_event(
                "reengagement_owner_read_failed",
                level=logging.WARNING,
                segment=segment.value,
                subscription_id=str(settings.subscription_id),
                error=str(exc),
            )
            return run
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
    session: Session,
    segment: ReengagementSegment,
    settings: SegmentSettings,
    client: HubSpotClient,
) -> Counter[str]:
    subscription_id = settings.subscription_id
    policy = SEGMENT_POLICIES[segment]
    lock_rotation(session, subscription_id)
    members = _members.claim_new(session, subscription_id, segment, limit=settings.batch_size)
    if not members:
        return Counter()
    members = _with_current_owners(session, client, members)

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


def _with_current_owners(
    session: Session, client: HubSpotClient, members: list[ClaimedMember]
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
                _contacts.update_by_id(session, member.contact_id, {"hubspotOwnerId": owner})
                member = replace(member, hubspot_owner_id=owner)
        refreshed.append(member)
    return refreshed


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
    # The rep's own list; the unassigned list only for contacts nobody was assigned. A rep
    # without a list gets the task and the properties but no enrolment (logged).
    list_id = rep.activeListId if rep is not None else settings.unassigned_list_id
    if rep is not None and not rep.activeListId:
        log_event(
            "reengagement_rep_without_list",
            level=logging.WARNING,
            segment=segment.value,
            sales_rep_id=rep.id,
            contact_id=member.contact_id,
        )
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
            "externalId": f"{DIALER_CALL_EXTERNAL_ID_PREFIX}{member.source_event_id}",
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
    What one write-back cannot get past is decided for it alone (``rejected`` with the
    reason): a contact HubSpot does not know, a value or list HubSpot refuses (a 400/404 is
    retried contact by contact to find the one), an owner someone changed in HubSpot since
    the decision (never overwritten), an older write-back of a contact that has a newer one.
    A failure that may pass (timeouts, 429, 5xx, auth) keeps the batch pending with the
    reason and stops the run; after ``MAX_WRITE_BACK_ATTEMPTS`` such failures a write-back is
    given up. Setting a property to the value it has and adding a list member twice change
    nothing, so a batch sent again is harmless (docs/ownership.md, "Write-back")."""
    run = WriteBackRun()
    while True:
        with session_factory() as session:
            pending = _assignments.claim_pending_write_backs(
                session, subscription_id, limit=batch_size
            )
            if not pending:
                return run
            try:
                verdicts = _write_batch(client, pending, run)
            except HubSpotError as exc:
                _keep_pending(session, pending, str(exc), run)
                log_event(
                    "reengagement_write_back_failed",
                    level=logging.WARNING,
                    subscription_id=str(subscription_id),
                    pending=len(pending),
                    error=str(exc),
                )
                return run
            by_outcome: dict[tuple[WriteBackStatus, str | None], list[int]] = defaultdict(list)
            for assignment_id, verdict in verdicts.items():
                by_outcome[verdict].append(assignment_id)
            for (status, error), ids in by_outcome.items():
                _assignments.record_write_back_attempt(session, ids, status, error=error)
                if status is WriteBackStatus.DONE:
                    run.written += len(ids)
                else:
                    run.rejected += len(ids)


MAX_WRITE_BACK_ATTEMPTS = 8
_REFUSED = frozenset({400, 404})  # HubSpot will refuse these again: decide per write-back
_NO_CONTACT = (WriteBackStatus.REJECTED, "HubSpot has no such contact")

Verdict = tuple[WriteBackStatus, str | None]


def _keep_pending(session: Session, pending: list[Any], error: str, run: WriteBackRun) -> None:
    run.error = error
    exhausted = [p.assignment_id for p in pending if p.attempts + 1 >= MAX_WRITE_BACK_ATTEMPTS]
    retry = [p.assignment_id for p in pending if p.attempts + 1 < MAX_WRITE_BACK_ATTEMPTS]
    _assignments.record_write_back_attempt(session, retry, WriteBackStatus.PENDING, error=error)
    _assignments.record_write_back_attempt(
        session,
        exhausted,
        WriteBackStatus.REJECTED,
        error=f"gave up after {MAX_WRITE_BACK_ATTEMPTS} attempts: {error}",
    )
    run.rejected += len(exhausted)


def _properties(item: Any) -> dict[str, str]:
    properties = {}
    if item.hubspot_owner_id is not None:
        properties["hubspot_owner_id"] = item.hubspot_owner_id
    if item.call_assigned_to is not None:
        properties["call_assigned_to"] = item.call_assigned_to
    return properties


def _write_batch(
    client: HubSpotClient, pending: list[Any], run: WriteBackRun
) -> dict[int, Verdict]:
    """Every write-back of the batch with its verdict; raises ``HubSpotError`` for a failure
    that may pass (the caller keeps the whole batch pending)."""
    verdicts: dict[int, Verdict] = {}
    newest: dict[str, Any] = {}
    for item in sorted(pending, key=lambda p: p.assignment_id):
        older = newest.get(item.hubspot_contact_id)
        if older is not None:  # HubSpot refuses one contact twice in a batch; newest wins
            verdicts[older.assignment_id] = (
                WriteBackStatus.REJECTED,
                f"superseded by assignment {item.assignment_id}",
            )
        newest[item.hubspot_contact_id] = item
    live = list(newest.values())

    reassigning = [i for i in live if i.hubspot_owner_id is not None]
    if reassigning:
        owners = client.read_contact_owners([i.hubspot_contact_id for i in reassigning])
        run.calls += 1
        for item in reassigning:
            if item.hubspot_contact_id not in owners:
                verdicts[item.assignment_id] = _NO_CONTACT
                continue
            now = owners[item.hubspot_contact_id]
            if now not in (item.previous_owner_id, item.hubspot_owner_id):
                verdicts[item.assignment_id] = (
                    WriteBackStatus.REJECTED,
                    f"owner changed in HubSpot to {now} since the decision; not overwritten",
                )
    live = [i for i in live if i.assignment_id not in verdicts]

    updates = [(i, _properties(i)) for i in live if _properties(i)]
    if updates:
        verdicts.update(_update_properties(client, updates, run))
    live = [i for i in live if i.assignment_id not in verdicts]

    by_list: dict[str, list[Any]] = defaultdict(list)
    for item in live:
        if item.list_id is not None:
            by_list[item.list_id].append(item)
    for list_id, items in by_list.items():
        try:
            change = client.add_list_members(list_id, [i.hubspot_contact_id for i in items])
        except HubSpotError as exc:
            if exc.status not in _REFUSED:
                raise
            for item in items:
                verdicts[item.assignment_id] = (
                    WriteBackStatus.REJECTED,
                    f"list {list_id} refused the enrolment: {exc}",
                )
            continue
        run.calls += 1
        run.enrolled += len(change.added_ids)
        for item in items:
            if item.hubspot_contact_id in change.missing_ids:
                verdicts[item.assignment_id] = _NO_CONTACT
    for item in live:
        verdicts.setdefault(item.assignment_id, (WriteBackStatus.DONE, None))
    return verdicts


def _update_properties(
    client: HubSpotClient, updates: list[tuple[Any, dict[str, str]]], run: WriteBackRun
) -> dict[int, Verdict]:
    """One ``batch/update``; when HubSpot refuses the batch, each contact alone, so one bad
    value does not hold back the rest."""
    try:
        result = client.batch_update_contacts([(i.hubspot_contact_id, p) for i, p in updates])
        run.calls += 1
    except HubSpotError as exc:
        if exc.status not in _REFUSED or len(updates) == 1:
            if exc.status in _REFUSED:
                return {updates[0][0].assignment_id: (WriteBackStatus.REJECTED, str(exc))}
            raise
        verdicts: dict[int, Verdict] = {}
        for update_ in updates:
            verdicts.update(_update_properties(client, [update_], run))
        return verdicts
    missing = set(result.missing_ids)
    return {i.assignment_id: _NO_CONTACT for i, _ in updates if i.hubspot_contact_id in missing}


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
    oldest_pending_id: int | None = None

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
            _assignments.oldest_pending_id(session, subscription_id),
        )


def write_back_counts(
    session_factory: SessionFactory, subscription_id: uuid.UUID
) -> dict[str, int]:
    with session_factory() as session:
        return _assignments.count_by_write_back_status(session, subscription_id)
