"""Repository of ``hubspot_outbox`` (docs/hubspot-outbox.md): queue an intent, claim the due
rows, settle what HubSpot answered, and the counts the check and the Daily Summary show.

A claim is a lease, not a lock held across HTTP: claiming moves the rows' ``nextAttemptAt``
a few minutes ahead in one ``UPDATE … FOR UPDATE SKIP LOCKED`` and commits, so the drain
talks to HubSpot with no transaction open, a second drain never takes the same rows, and rows
of a drain that died are due again when the lease runs out. "Now" is always passed in, so a
test (or a replay) can drive the clock.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import (
    Activity,
    Contact,
    FollowUpTask,
    HubSpotOutboxRow,
    Lead,
    LeadContactRetrieval,
    SalesRep,
)
from morpheus_pipelines.crm.repositories.contact import ContactRepository
from morpheus_pipelines.crm.rules.hubspot_outbox import (
    OutboxBacklog,
    OutboxKind,
    OutboxStatus,
    after_failure,
    call_intent,
    task_intent,
)
from morpheus_pipelines.platform.store.base import BaseRepository

LEASE = timedelta(minutes=5)
_contacts = ContactRepository()

_SET_LEAD_CONTACTS = """
UPDATE leads SET "hubspotContactId" = v.contact
FROM unnest(CAST(:leads AS uuid[]), CAST(:contacts AS text[])) AS v(lead, contact)
WHERE leads.id = v.lead
"""
# New local contacts in one statement; one whose email or phone another contact holds is left
# to the per-row merge (ON CONFLICT DO NOTHING, then not returned).
_INSERT_CONTACTS = """
INSERT INTO contacts ("subscriptionId", "hubspotContactId", email, phone, "firstName",
                      "lastName", "hubspotOwnerId")
SELECT :sub, v.contact, lower(v.email), v.phone, v.first, v.last, v.owner
FROM unnest(CAST(:contacts AS text[]), CAST(:emails AS text[]), CAST(:phones AS text[]),
            CAST(:firsts AS text[]), CAST(:lasts AS text[]), CAST(:owners AS text[]))
     AS v(contact, email, phone, first, last, owner)
ON CONFLICT DO NOTHING
RETURNING "hubspotContactId"
"""
# The lead's activities join the contact's timeline.
_LINK_LEAD_ACTIVITIES = """
UPDATE activities AS a SET "contactId" = c.id, "hubspotContactId" = v.contact
FROM unnest(CAST(:leads AS uuid[]), CAST(:contacts AS text[])) AS v(lead, contact)
JOIN LATERAL (
    SELECT id FROM contacts
    WHERE "subscriptionId" = :sub AND "hubspotContactId" = v.contact
    ORDER BY id LIMIT 1
) AS c ON true
WHERE a."leadId" = v.lead AND a."contactId" IS NULL
"""


@dataclass(frozen=True)
class OutboxEntry:
    """One claimed row: what to write and where the answer goes."""

    id: int
    kind: OutboxKind
    intent_key: str
    payload: Mapping[str, Any]
    attempts: int
    lead_id: uuid.UUID | None = None
    follow_up_task_id: int | None = None
    activity_id: int | None = None
    sales_rep_id: int | None = None


class HubSpotOutboxRepository(BaseRepository[HubSpotOutboxRow]):
    model_class = HubSpotOutboxRow

    def enqueue(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        kind: OutboxKind,
        intent_key: str,
        payload: Mapping[str, Any] | None = None,
        *,
        lead_id: uuid.UUID | None = None,
        follow_up_task_id: int | None = None,
        activity_id: int | None = None,
        sales_rep_id: int | None = None,
    ) -> bool:
        """Queue ``intent_key`` in the caller's transaction; ``False`` when it is queued (or
        sent) already: the intent is written once however often it is decided."""
        statement = (
            insert(HubSpotOutboxRow)
            .values(
                subscriptionId=subscription_id,
                kind=kind.value,
                intentKey=intent_key,
                payload=dict(payload or {}),
                leadId=lead_id,
                followUpTaskId=follow_up_task_id,
                activityId=activity_id,
                salesRepId=sales_rep_id,
            )
            .on_conflict_do_nothing(index_elements=["subscriptionId", "intentKey"])
            .returning(HubSpotOutboxRow.id)
        )
        return session.execute(statement).scalar() is not None

    def enqueue_many(
        self, session: Session, subscription_id: uuid.UUID, rows: Sequence[Mapping[str, Any]]
    ) -> int:
        """Queue many intents in one statement (``kind``, ``intentKey``, ``payload`` and the
        subject's id column each), in the caller's transaction; how many were new. As
        :meth:`enqueue`, an intent already queued is kept as it is."""
        if not rows:
            return 0
        values = [
            {
                "subscriptionId": subscription_id,
                "kind": OutboxKind(row["kind"]).value,
                "intentKey": row["intentKey"],
                "payload": dict(row.get("payload") or {}),
                "leadId": row.get("leadId"),
                "followUpTaskId": row.get("followUpTaskId"),
                "activityId": row.get("activityId"),
                "salesRepId": row.get("salesRepId"),
            }
            for row in rows
        ]
        statement = (
            insert(HubSpotOutboxRow)
            .values(values)
            .on_conflict_do_nothing(index_elements=["subscriptionId", "intentKey"])
            .returning(HubSpotOutboxRow.id)
        )
        return len(session.execute(statement).scalars().all())

    def claim_due(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        kind: OutboxKind,
        *,
        now: datetime,
        limit: int,
        lease: timedelta = LEASE,
    ) -> list[OutboxEntry]:
        """Lease up to ``limit`` due pending rows of ``kind``, oldest first."""
        due = (
            select(HubSpotOutboxRow.id)
            .where(
                HubSpotOutboxRow.subscriptionId == subscription_id,
                HubSpotOutboxRow.kind == kind.value,
                HubSpotOutboxRow.status == OutboxStatus.PENDING.value,
                HubSpotOutboxRow.nextAttemptAt <= now,
            )
            .order_by(HubSpotOutboxRow.nextAttemptAt, HubSpotOutboxRow.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
            .scalar_subquery()
        )
        rows = session.execute(
            update(HubSpotOutboxRow)
            .where(HubSpotOutboxRow.id.in_(due))
            .values(nextAttemptAt=now + lease)
            .returning(
                HubSpotOutboxRow.id,
                HubSpotOutboxRow.intentKey,
                HubSpotOutboxRow.payload,
                HubSpotOutboxRow.attempts,
                HubSpotOutboxRow.leadId,
                HubSpotOutboxRow.followUpTaskId,
                HubSpotOutboxRow.activityId,
                HubSpotOutboxRow.salesRepId,
            )
        ).all()
        entries = [
            OutboxEntry(
                id=row.id,
                kind=kind,
                intent_key=row.intentKey,
                payload=row.payload,
                attempts=row.attempts,
                lead_id=row.leadId,
                follow_up_task_id=row.followUpTaskId,
                activity_id=row.activityId,
                sales_rep_id=row.salesRepId,
            )
            for row in rows
        ]
        return sorted(entries, key=lambda entry: entry.id)

    def mark_done(self, session: Session, done: Mapping[int, str | None], *, now: datetime) -> None:
        """The rows HubSpot has, with the id of the object each wrote."""
        self._update_by_id(
            session,
            [
                {
                    "id": row_id,
                    "status": OutboxStatus.DONE.value,
                    "hubspotObjectId": object_id,
                    "lastError": None,
                    "doneAt": now,
                }
                for row_id, object_id in done.items()
            ],
        )

    def mark_failed(
        self,
        session: Session,
        entries: Iterable[OutboxEntry],
        reasons: Mapping[int, str],
        *,
        now: datetime,
        retry_after: timedelta | None = None,
    ) -> int:
        """Count one more failed attempt of each entry, with its reason; each waits its
        back-off, or is dead after the last attempt. Returns how many are now dead."""
        dead = 0
        changes = []
        for entry in entries:
            attempts = entry.attempts + 1
            status, next_at = after_failure(attempts, now, retry_after=retry_after)
            dead += status is OutboxStatus.DEAD
            changes.append(
                {
                    "id": entry.id,
                    "status": status.value,
                    "attempts": attempts,
                    "nextAttemptAt": next_at,
                    "lastError": reasons[entry.id][:1000],
                }
            )
        self._update_by_id(session, changes)
        return dead

    def postpone(self, session: Session, reasons: Mapping[int, str], *, until: datetime) -> None:
        """Give claimed rows back without counting an attempt: what they wait for is not a
        failure of theirs (the contact they need has no HubSpot id yet, HubSpot is
        rate-limiting us)."""
        self._update_by_id(
            session,
            [
                {"id": row_id, "nextAttemptAt": until, "lastError": reason[:1000]}
                for row_id, reason in reasons.items()
            ],
        )

    @staticmethod
    def _update_by_id(session: Session, changes: list[dict[str, Any]]) -> None:
        # One executemany by primary key, not a statement per row.
        if changes:
            session.execute(update(HubSpotOutboxRow), changes)

    def requeue_dead(self, session: Session, subscription_id: uuid.UUID, *, now: datetime) -> int:
        """Put every dead row of the subscription back in the queue with its attempts reset
        (after a person fixed what HubSpot refused)."""
        result = session.execute(
            update(HubSpotOutboxRow)
            .where(
                HubSpotOutboxRow.subscriptionId == subscription_id,
                HubSpotOutboxRow.status == OutboxStatus.DEAD.value,
            )
            .values(status=OutboxStatus.PENDING.value, attempts=0, nextAttemptAt=now)
        )
        return result.rowcount

    def backlog(
        self, session: Session, subscription_id: uuid.UUID, *, now: datetime, since: datetime
    ) -> OutboxBacklog:
        """Pending, due and dead rows, rows done since ``since``, the oldest pending row's age
        and the dead rows' reasons."""
        row = HubSpotOutboxRow
        pending = row.status == OutboxStatus.PENDING.value
        counts = session.execute(
            select(
                func.count().filter(pending),
                func.count().filter(pending, row.nextAttemptAt <= now),
                func.count().filter(row.status == OutboxStatus.DEAD.value),
                func.count().filter(row.status == OutboxStatus.DONE.value, row.doneAt >= since),
                func.min(row.createdAt).filter(pending),
            ).where(row.subscriptionId == subscription_id)
        ).one()
        reasons = session.execute(
            select(row.lastError, func.count())
            .where(row.subscriptionId == subscription_id, row.status == OutboxStatus.DEAD.value)
            .group_by(row.lastError)
        ).all()
        return OutboxBacklog(
            pending=counts[0],
            due=counts[1],
            dead=counts[2],
            done_since=counts[3],
            oldest_pending_at=counts[4],
            dead_reasons={reason or "(no reason)": n for reason, n in reasons},
        )

    def has_due(self, session: Session, subscription_id: uuid.UUID, *, now: datetime) -> bool:
        """Whether any pending row is due (the sensor's question; one index probe)."""
        return (
            session.scalar(
                select(HubSpotOutboxRow.id)
                .where(
                    HubSpotOutboxRow.subscriptionId == subscription_id,
                    HubSpotOutboxRow.status == OutboxStatus.PENDING.value,
                    HubSpotOutboxRow.nextAttemptAt <= now,
                )
                .limit(1)
            )
            is not None
        )

    # -- the subjects: what a row writes, read when it is sent -------------------------------

    def subjects(
        self, session: Session, kind: OutboxKind, entries: Sequence[OutboxEntry]
    ) -> dict[int, dict[str, Any]]:
        """The current state of each entry's subject, by outbox row id."""
        if kind is OutboxKind.CONTACT_OWNER:
            # A new owner of a lead's contact, or of a task's contact (a hand-over).
            leads = self._leads(session, [e.lead_id for e in entries if e.lead_id])
            tasks = self._tasks(session, [e.follow_up_task_id for e in entries if not e.lead_id])
            return {
                e.id: leads[e.lead_id] if e.lead_id else tasks[e.follow_up_task_id] for e in entries
            }
        if kind is OutboxKind.CONTACT:
            by_subject = self._leads(session, [e.lead_id for e in entries])
            return {e.id: by_subject[e.lead_id] for e in entries}
        if kind is OutboxKind.TASK:
            by_subject = self._tasks(session, [e.follow_up_task_id for e in entries])
            return {e.id: by_subject[e.follow_up_task_id] for e in entries}
        if kind is OutboxKind.CALL:
            by_subject = self._calls(session, [e.activity_id for e in entries])
            return {e.id: by_subject[e.activity_id] for e in entries}
        by_subject = self._reps(session, [e.sales_rep_id for e in entries])
        return {e.id: by_subject[e.sales_rep_id] for e in entries}

    @staticmethod
    def _leads(session: Session, ids: list[Any]) -> dict[Any, dict[str, Any]]:
        rows = session.execute(
            select(
                Lead.id,
                Lead.email,
                Lead.phone,
                Lead.firstName,
                Lead.lastName,
                Lead.ownerHubspotOwnerId,
                Lead.hubspotContactId,
                (
                    LeadContactRetrieval.leadId.is_not(None)
                    & LeadContactRetrieval.completedAt.is_(None)
                    & LeadContactRetrieval.failedAt.is_(None)
                ).label("contact_pending"),
            )
            .outerjoin(LeadContactRetrieval, LeadContactRetrieval.leadId == Lead.id)
            .where(Lead.id.in_(ids))
        )
        return {
            row.id: {
                "lead_id": str(row.id),
                "email": row.email,
                "phone": row.phone,
                "first_name": row.firstName,
                "last_name": row.lastName,
                "owner_id": row.ownerHubspotOwnerId,
                "hubspot_contact_id": row.hubspotContactId,
                "contact_pending": bool(row.contact_pending),
            }
            for row in rows
        }

    @staticmethod
    def _tasks(session: Session, ids: list[Any]) -> dict[Any, dict[str, Any]]:
        rows = session.execute(
            select(
                FollowUpTask.id,
                FollowUpTask.segment,
                FollowUpTask.dueAt,
                FollowUpTask.status,
                FollowUpTask.escalationStage,
                SalesRep.hubspotOwnerId,
                Contact.hubspotContactId,
            )
            .join(Contact, Contact.id == FollowUpTask.contactId)
            .outerjoin(SalesRep, SalesRep.id == FollowUpTask.salesRepId)
            .where(FollowUpTask.id.in_(ids))
        )
        return {
            row.id: {
                "task_id": row.id,
                "intent_key": task_intent(row.id),
                "segment": row.segment,
                "due_at": row.dueAt,
                "status": str(row.status),
                "escalation_stage": row.escalationStage,
                "owner_id": row.hubspotOwnerId,
                "hubspot_contact_id": row.hubspotContactId,
            }
            for row in rows
        }

    @staticmethod
    def _calls(session: Session, ids: list[Any]) -> dict[Any, dict[str, Any]]:
        rows = session.execute(
            select(
                Activity.id,
                Activity.subject,
                Activity.body,
                Activity.direction,
                Activity.occurredAt,
                func.coalesce(Activity.hubspotContactId, Contact.hubspotContactId).label(
                    "hubspot_contact_id"
                ),
            )
            .outerjoin(Contact, Contact.id == Activity.contactId)
            .where(Activity.id.in_(ids))
        )
        return {
            row.id: {
                "activity_id": row.id,
                "intent_key": call_intent(row.id),
                "subject": row.subject,
                "body": row.body,
                "direction": row.direction,
                "occurred_at": row.occurredAt,
                "hubspot_contact_id": row.hubspot_contact_id,
            }
            for row in rows
        }

    @staticmethod
    def _reps(session: Session, ids: list[Any]) -> dict[Any, dict[str, Any]]:
        rows = session.execute(
            select(
                SalesRep.id, SalesRep.email, SalesRep.hubspotCallSegmentId, SalesRep.activeListId
            ).where(SalesRep.id.in_(ids))
        )
        return {
            row.id: {
                "sales_rep_id": row.id,
                "email": row.email,
                "call_list_id": row.hubspotCallSegmentId,
                "active_list_id": row.activeListId,
            }
            for row in rows
        }

    def record_answers(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        kind: OutboxKind,
        answers: Sequence[tuple[OutboxEntry, Mapping[str, Any], str]],
    ) -> None:
        """Keep the ids HubSpot gave, ``(entry, subject, object id)`` each, where they belong:
        the lead's contact (and the local contact it is, so the person has one timeline), the
        task's, the call's, the rep's lists. A few statements per batch, not per row."""
        if not answers:
            return
        if kind is OutboxKind.CONTACT:
            self._record_contacts(session, subscription_id, answers)
        elif kind is OutboxKind.TASK:
            session.execute(
                update(FollowUpTask),
                [{"id": e.follow_up_task_id, "hubspotTaskId": oid} for e, _, oid in answers],
            )
        elif kind is OutboxKind.CALL:
            session.execute(
                update(Activity),
                [{"id": e.activity_id, "hubspotEngagementId": oid} for e, _, oid in answers],
            )
        elif kind in (OutboxKind.CALL_LIST, OutboxKind.REP_LIST):
            column = (
                SalesRep.hubspotCallSegmentId
                if kind is OutboxKind.CALL_LIST
                else SalesRep.activeListId
            )
            for entry, _, object_id in answers:  # a rep's list a person set is kept
                session.execute(
                    update(SalesRep)
                    .where(SalesRep.id == entry.sales_rep_id, column.is_(None))
                    .values({column: object_id})
                )

    def _record_contacts(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        answers: Sequence[tuple[OutboxEntry, Mapping[str, Any], str]],
    ) -> None:
        lead_ids = [entry.lead_id for entry, _, _ in answers]
        contact_ids = [object_id for _, _, object_id in answers]
        session.execute(text(_SET_LEAD_CONTACTS), {"leads": lead_ids, "contacts": contact_ids})
        known = set(
            session.scalars(
                select(Contact.hubspotContactId).where(
                    Contact.subscriptionId == subscription_id,
                    Contact.hubspotContactId.in_(contact_ids),
                )
            )
        )
        new = {oid: subject for _, subject, oid in answers if oid not in known}
        inserted = (
            set(
                session.scalars(
                    text(_INSERT_CONTACTS),
                    {
                        "sub": subscription_id,
                        "contacts": list(new),
                        "emails": [(s.get("email") or None) for s in new.values()],
                        "phones": [s.get("phone") for s in new.values()],
                        "firsts": [s.get("first_name") for s in new.values()],
                        "lasts": [s.get("last_name") for s in new.values()],
                        "owners": [s.get("owner_id") for s in new.values()],
                    },
                )
            )
            if new
            else set()
        )
        # A contact we had (or one whose email or phone another contact holds): merged one by
        # one, by the contact repository's rules.
        for _, subject, object_id in answers:
            if object_id in inserted:
                continue
            _contacts.upsert_from_hubspot(
                session,
                subscription_id,
                object_id,
                {
                    "email": subject.get("email"),
                    "phone": subject.get("phone"),
                    "firstName": subject.get("first_name"),
                    "lastName": subject.get("last_name"),
                    "hubspotOwnerId": subject.get("owner_id"),
                },
            )
            inserted.add(object_id)
        session.execute(
            text(_LINK_LEAD_ACTIVITIES),
            {"sub": subscription_id, "leads": lead_ids, "contacts": contact_ids},
        )

    def rows_of(self, session: Session, ids: Sequence[int]) -> list[HubSpotOutboxRow]:
        return list(session.scalars(select(HubSpotOutboxRow).where(HubSpotOutboxRow.id.in_(ids))))
