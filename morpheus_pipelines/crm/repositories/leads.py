"""Repository of the ``leads`` table (docs/leads.md). Not among the 16 exports of
``morpheus_pipelines.crm.repositories``; import it from this module.

Each lead queues its HubSpot contact in the outbox in the same statement that inserts it.

The two guarantees are statements, not checks: a lead is inserted with ``ON CONFLICT
(subscriptionId, idempotencyKey) DO NOTHING`` (no read-then-write window), and an owner is
taken with one ``UPDATE … RETURNING`` that also re-checks the rep is active and available
(working hours in their zone, away-until, cap), so a stale cache can never hand a lead to a
deactivated, absent or full rep.

The rest of lead intake's repositories live beside it, one module per table: the routing
directory (:mod:`.routing_directory`), the API keys (:mod:`.intake_keys`) and the slow path
after creation (:mod:`.lead_follow_up`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import TextClause, select, text, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import Lead, RoutingPool, SalesRep, Subscription
from morpheus_pipelines.crm.repositories.hubspot_outbox import HubSpotOutboxRepository
from morpheus_pipelines.crm.repositories.routing_directory import (
    ASSIGNABLE,
    Candidate,
    available_sql,
)
from morpheus_pipelines.crm.rules.hubspot_outbox import (
    OutboxKind,
    lead_contact_intent,
    lead_owner_intent,
)
from morpheus_pipelines.crm.rules.lead_status import LeadStatus, OwnerState
from morpheus_pipelines.platform.store.base import BaseRepository

__all__ = [
    "Candidate",
    "LeadRepository",
]

# The owner: the least loaded candidate relative to its weight, the longest-waiting first on a
# tie (a rotation), locked, and only if the rep is still active and available now (working
# hours in their zone, not away, below the cap: decided here, at the database's now(), never
# cached). ``{skip}``: SKIP LOCKED passes over rows another request is charging right now.
_PICK_OWNER = """
    SELECT {columns}
    FROM unnest(CAST(:ids AS bigint[]), CAST(:weights AS integer[])) AS c(id, weight)
    JOIN sales_reps AS s ON s.id = c.id
    WHERE s."isActive" AND coalesce(s."hubspotOwnerId", '') <> ''
      AND {available}
    ORDER BY (s."openLeads" + 1)::float8 / c.weight,
             s."lastLeadAssignedAt" NULLS FIRST,
             s.id
    LIMIT 1
    FOR UPDATE OF s {skip}""".replace("{available}", available_sql("s"))
# One statement picks and charges it (the transaction path).
_CLAIM = f"""
UPDATE sales_reps AS r
SET "openLeads" = r."openLeads" + 1, "lastLeadAssignedAt" = clock_timestamp()
WHERE r.id = ({_PICK_OWNER.replace("{columns}", "s.id")}
)
RETURNING r.id, r."hubspotOwnerId"
"""


_LEAD_COLUMNS = (
    "id",
    "subscriptionId",
    "idempotencyKey",
    "requestFingerprint",
    "source",
    "sourceSubmissionId",
    "campaignIds",
    "email",
    "phone",
    "phoneExtension",
    "firstName",
    "lastName",
    "payload",
    "poolId",
    "poolRuleId",
    "ownerSalesRepId",
    "ownerHubspotOwnerId",
    "ownerIsFallback",
    "response",
    "createdAt",
)
_JSON_COLUMNS = frozenset({"payload", "response"})
_OWNER_COLUMNS = ("ownerSalesRepId", "ownerHubspotOwnerId", "ownerIsFallback", "response")
_FORM_ACTIVITY = """
form AS (
    INSERT INTO activities
        ("subscriptionId", "externalId", type, direction, "leadId", "contactEmail",
         "occurredAt", metadata)
    SELECT lead."subscriptionId", :activity_external_id, 'FORM', 'inbound', lead.id,
           lead.email, lead."createdAt", CAST(:activity_metadata AS jsonb)
    FROM lead
    ON CONFLICT ("subscriptionId", "externalId") DO NOTHING
)"""
# The lead's write to HubSpot, queued with it (docs/hubspot-outbox.md): its contact, created
# or updated with the lead's owner. Written only when the lead is.
_OUTBOX = f"""
outbox AS (
    INSERT INTO hubspot_outbox ("subscriptionId", kind, "intentKey", payload, "leadId")
    SELECT lead."subscriptionId", '{OutboxKind.CONTACT.value}', :outbox_intent, '{{}}', lead.id
    FROM lead
    ON CONFLICT ("subscriptionId", "intentKey") DO NOTHING
)"""
_ON_CONFLICT = (
    'ON CONFLICT ("subscriptionId", "idempotencyKey") DO NOTHING\n'
    '    RETURNING id, response, "subscriptionId", email, "createdAt"'
)


# The first-touch deadline (docs/ownership.md, "First-touch SLA"): the lead's creation plus its
# pool's SLA, when the pool has one and the lead has a rep for an owner (a waiting lead's
# clock starts when it is given one).
_FIRST_TOUCH_DUE = """(
    SELECT CAST(:createdAt AS timestamptz) + make_interval(secs => p."firstTouchSlaSeconds")
    FROM routing_pools AS p WHERE p.id = CAST(:poolId AS bigint) AND {owned}
)"""


def _placeholder(column: str) -> str:
    return f"CAST(:{column} AS jsonb)" if column in _JSON_COLUMNS else f":{column}"


# The lead and its FORM activity in one statement; the activity is written only when the
# lead is.
_INSERT_LEAD = f"""
WITH lead AS (
    INSERT INTO leads ({", ".join(f'"{c}"' for c in _LEAD_COLUMNS)}, "firstTouchDueAt")
    VALUES ({", ".join(_placeholder(c) for c in _LEAD_COLUMNS)},
            {_FIRST_TOUCH_DUE.format(owned="CAST(:ownerSalesRepId AS bigint) IS NOT NULL")})
    {_ON_CONFLICT}
), {_FORM_ACTIVITY}, {_OUTBOX}
SELECT response FROM lead
"""

# The hot path, one statement and so one round trip in autocommit: pick the least-loaded
# candidate and lock it (skipping rows being charged), insert the lead owned by it, and only
# for a lead inserted charge the owner and write its FORM activity and outbox row. A duplicate
# delivery therefore writes nothing at all, and the statement needs no transaction around it
# to take its charge back. No free candidate: nothing is inserted (owner comes back NULL) and
# the caller takes the path that waits or falls back, in a transaction.
_GIVEN_COLUMNS = tuple(c for c in _LEAD_COLUMNS if c not in _OWNER_COLUMNS)
_PICK = _PICK_OWNER.replace("{columns}", 's.id, s."hubspotOwnerId"').replace(
    "{skip}", "SKIP LOCKED"
)
_CLAIM_AND_INSERT = f"""
WITH pick AS ({_PICK}
), lead AS (
    INSERT INTO leads ({", ".join(f'"{c}"' for c in (*_GIVEN_COLUMNS, *_OWNER_COLUMNS))},
                       "firstTouchDueAt")
    SELECT {", ".join(_placeholder(c) for c in _GIVEN_COLUMNS)},
           pick.id, pick."hubspotOwnerId", false,
           jsonb_build_object(
               'lead_id', CAST(:id AS text),
               'owner', jsonb_build_object(
                   'sales_rep_id', pick.id, 'hubspot_owner_id', pick."hubspotOwnerId"),
               'pool', CAST(:pool_name AS text),
               'owner_is_fallback', false,
               'owner_state', 'assigned',
               'created_at', CAST(:created_at_text AS text)),
           {_FIRST_TOUCH_DUE.format(owned="true")}
    FROM pick
    {_ON_CONFLICT}, "ownerSalesRepId"
), owner AS (
    UPDATE sales_reps AS r
    SET "openLeads" = r."openLeads" + 1, "lastLeadAssignedAt" = clock_timestamp()
    FROM lead WHERE r.id = lead."ownerSalesRepId"
), {_FORM_ACTIVITY}, {_OUTBOX}
SELECT (SELECT id FROM pick), (SELECT "hubspotOwnerId" FROM pick), (SELECT response FROM lead)
"""

# Built once: ``text()`` parses its bind parameters, a cost every lead would pay again.
_INSERT_LEAD_STATEMENT = text(_INSERT_LEAD)
# The hot path is compiled once and run as the driver's own text: from the event loop on the
# intake's own connections (``Intake.claim_and_insert``), or on a session's connection
# (``exec_driver_sql``: no cache key, no compiled-form lookup, but SQLAlchemy's error handling
# and connection invalidation as for any statement); see docs/performance.md, "Lead intake".
CLAIM_AND_INSERT_SQL = str(text(_CLAIM_AND_INSERT).compile(dialect=PGDialect_psycopg()))
_CLAIM_STATEMENTS = {skip: text(_CLAIM.format(skip=skip)) for skip in ("SKIP LOCKED", "")}


# Closing and releasing in one statement: the row is locked by the UPDATE, and the load is
# given back only if it was not released before (a stale lead gave it back already).
_CLOSE_STATEMENT = text("""
UPDATE leads AS l
SET status = :status, "closedAt" = :at, "loadReleasedAt" = coalesce(l."loadReleasedAt", :at),
    "updatedAt" = now()
FROM (SELECT id, "loadReleasedAt" FROM leads WHERE id = :id FOR UPDATE) AS before
WHERE l.id = before.id AND l.status = 'open'
RETURNING l."ownerSalesRepId", l."ownerIsFallback", before."loadReleasedAt" AS released_before
""")

# A lead untouched too long stops counting: one statement releases every such lead's load
# and takes it off its owner's ``openLeads`` (a fallback lead was never charged).
_RELEASE_STALE_STATEMENT = text("""
WITH released AS (
    UPDATE leads AS l
    SET "loadReleasedAt" = :at, "updatedAt" = now()
    WHERE l.status = 'open' AND l."loadReleasedAt" IS NULL AND l."createdAt" < :since
      AND NOT EXISTS (
          SELECT 1 FROM activities AS a WHERE a."leadId" = l.id AND a."occurredAt" >= :since
      )
    RETURNING l."ownerSalesRepId" AS rep, l."ownerIsFallback" AS fallback
), per_rep AS (
    SELECT rep, count(*) AS n FROM released WHERE rep IS NOT NULL AND NOT fallback GROUP BY rep
), charged AS (
    UPDATE sales_reps AS r
    SET "openLeads" = greatest(r."openLeads" - per_rep.n, 0)
    FROM per_rep WHERE r.id = per_rep.rep
)
SELECT count(*) FROM released
""")


def _params(
    row: Mapping[str, Any], activity_external_id: str, activity_metadata: Mapping[str, Any]
) -> dict[str, Any]:
    params = {
        c: json.dumps(row.get(c)) if c in _JSON_COLUMNS else row.get(c) for c in _LEAD_COLUMNS
    }
    params["activity_external_id"] = activity_external_id
    params["activity_metadata"] = json.dumps(dict(activity_metadata))
    params["outbox_intent"] = lead_contact_intent(row["id"])
    return params


_CONTACT_FIELDS = ("email", "phone", "phoneExtension", "firstName", "lastName")
_COMPLETE_CONTACT_STATEMENT = text(
    "UPDATE leads SET "
    + ", ".join(f'"{name}" = coalesce("{name}", :{name})' for name in _CONTACT_FIELDS)
    + """, payload = CASE WHEN CAST(:answers AS jsonb) IS NULL THEN payload
          ELSE coalesce(payload, '{}'::jsonb)
               || jsonb_build_object('answers', CAST(:answers AS jsonb)) END,
       "updatedAt" = now()
    WHERE id = :id"""
)


def claim_params(
    row: Mapping[str, Any],
    candidates: Sequence[Candidate],
    *,
    pool_name: str,
    activity_external_id: str,
    activity_metadata: Mapping[str, Any],
) -> dict[str, Any]:
    """The parameters of :data:`CLAIM_AND_INSERT_SQL` (:meth:`LeadRepository.claim_and_insert`),
    for a caller that runs it on a connection of its own."""
    params = _params(row, activity_external_id, activity_metadata) | {
        "ids": [c.sales_rep_id for c in candidates],
        "weights": [c.weight for c in candidates],
        "pool_name": pool_name,
        "created_at_text": row["createdAt"].isoformat(),
    }
    params["id"] = row["id"]
    return params


def claimed(result: Sequence[Any]) -> tuple[Candidate | None, dict[str, Any] | None]:
    """``(owner, stored answer)`` of the row :data:`CLAIM_AND_INSERT_SQL` returns (see
    :meth:`LeadRepository.claim_and_insert`)."""
    rep_id, owner_id, response = result
    return (None if rep_id is None else Candidate(rep_id, owner_id)), response


class LeadRepository(BaseRepository[Lead]):
    model_class = Lead

    def insert_test_lead(self, session: Session, row: Mapping[str, Any]) -> dict[str, Any] | None:
        """A sender's test delivery: stored closed, without an owner, a timeline or a HubSpot
        write, so it reaches no rep and no count of open leads; the stored answer, or ``None``
        when the key exists."""
        values = {c: row.get(c) for c in _LEAD_COLUMNS if c not in _OWNER_COLUMNS}
        values |= {
            "isTest": True,
            "status": LeadStatus.CLOSED.value,
            "closedAt": row["createdAt"],
            "loadReleasedAt": row["createdAt"],
            "response": row["response"],
        }
        statement = (
            pg_insert(Lead)
            .values(values)
            .on_conflict_do_nothing(index_elements=["subscriptionId", "idempotencyKey"])
            .returning(Lead.response)
        )
        return session.execute(statement).scalar()

    def complete_contact(
        self, session: Session, lead_id: uuid.UUID, contact: Mapping[str, Any]
    ) -> bool:
        """Fill the lead's empty contact fields from its sender's answers (``email``,
        ``phone``, ``phoneExtension``, ``firstName``, ``lastName``; what the lead already has
        stays) and add the other answers to its payload. Never its owner."""
        params = {name: contact.get(name) for name in _CONTACT_FIELDS} | {
            "id": lead_id,
            "answers": json.dumps(contact["answers"]) if contact.get("answers") else None,
        }
        changed = session.execute(_COMPLETE_CONTACT_STATEMENT, params)
        return bool(changed.rowcount)

    def insert_once(
        self,
        session: Session,
        row: Mapping[str, Any],
        *,
        activity_external_id: str,
        activity_metadata: Mapping[str, Any],
    ) -> dict[str, Any] | None:
        """Insert the lead and its ``FORM`` activity unless the idempotency key exists; the
        stored answer as the database returns it (so a replay is byte-identical), or ``None``
        for a duplicate (a concurrent duplicate waits for the first to commit, then gets
        ``None``)."""
        params = _params(row, activity_external_id, activity_metadata)
        return session.execute(_INSERT_LEAD_STATEMENT, params).scalar()

    def claim_and_insert(
        self,
        session: Session,
        row: Mapping[str, Any],
        candidates: Sequence[Candidate],
        *,
        pool_name: str,
        activity_external_id: str,
        activity_metadata: Mapping[str, Any],
    ) -> tuple[Candidate | None, dict[str, Any] | None]:
        """The owner and the lead in one statement: ``(owner, stored answer)``; the answer is
        ``None`` for a duplicate delivery (nothing was written: the owner was not charged),
        the owner is ``None`` when no candidate was free (nothing was written). Safe to run
        in autocommit, where it is the whole transaction."""
        params = claim_params(
            row,
            candidates,
            pool_name=pool_name,
            activity_external_id=activity_external_id,
            activity_metadata=activity_metadata,
        )
        return claimed(session.connection().exec_driver_sql(CLAIM_AND_INSERT_SQL, params).one())

    def close(self, session: Session, lead_id: uuid.UUID, *, status: str, at: datetime) -> bool:
        """Mark an open lead won, lost or closed at ``at`` and give its owner's load back unless
        it was released before (stale); ``False`` when the lead is not open (closing twice
        changes nothing). Every closer goes through here: the API, the CLI, the deal worker
        and the reconciliation."""
        closed = session.execute(
            _CLOSE_STATEMENT, {"id": lead_id, "status": str(status), "at": at}
        ).first()
        if closed is None:
            return False
        if closed.released_before is None:
            self._release(session, closed.ownerSalesRepId, closed.ownerIsFallback)
        return True

    @staticmethod
    def _release(session: Session, rep_id: int | None, was_fallback: bool) -> None:
        # A fallback lead was never charged to its rep's load, so it gives none back.
        if rep_id is not None and not was_fallback:
            session.execute(
                update(SalesRep)
                .where(SalesRep.id == rep_id, SalesRep.openLeads > 0)
                .values(openLeads=SalesRep.openLeads - 1)
            )

    def release_stale(self, session: Session, *, untouched_since: datetime, at: datetime) -> int:
        """Release, in one statement, the load of every open lead created before
        ``untouched_since`` with no activity since then; the leads stay open. How many."""
        return session.execute(
            _RELEASE_STALE_STATEMENT, {"since": untouched_since, "at": at}
        ).scalar_one()

    def page(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        *,
        limit: int,
        before: tuple[datetime, uuid.UUID] | None = None,
        status: str | None = None,
        owner_state: str | None = None,
        source: str | None = None,
        source_submission_id: str | None = None,
    ) -> list[tuple[Lead, str | None]]:
        """A page of the subscription's leads, newest first, after the keyset ``before``
        (``(createdAt, id)`` of the last lead of the previous page), each with its pool's
        name; served by the ``(subscriptionId, createdAt)`` index."""
        statement = (
            select(Lead, RoutingPool.name)
            .outerjoin(RoutingPool, RoutingPool.id == Lead.poolId)
            .where(Lead.subscriptionId == subscription_id)
            .order_by(Lead.createdAt.desc(), Lead.id.desc())
            .limit(limit)
        )
        if before is not None:
            statement = statement.where(tuple_(Lead.createdAt, Lead.id) < tuple_(*before))
        if status is not None:
            statement = statement.where(Lead.status == status)
        if source is not None:
            statement = statement.where(Lead.source == source)
        if source_submission_id is not None:
            statement = statement.where(Lead.sourceSubmissionId == source_submission_id)
        if owner_state == "waiting":
            statement = statement.where(Lead.ownerHubspotOwnerId.is_(None))
        elif owner_state == "fallback":
            statement = statement.where(Lead.ownerHubspotOwnerId.is_not(None), Lead.ownerIsFallback)
        elif owner_state == "assigned":
            statement = statement.where(
                Lead.ownerHubspotOwnerId.is_not(None), ~Lead.ownerIsFallback
            )
        return [(lead, pool) for lead, pool in session.execute(statement)]

    def pool_name(self, session: Session, pool_id: int | None) -> str | None:
        if pool_id is None:
            return None
        return session.scalar(select(RoutingPool.name).where(RoutingPool.id == pool_id))

    def locked(self, session: Session, lead_id: uuid.UUID) -> Lead | None:
        """The lead, row-locked until commit (a hand reassignment and a close serialise)."""
        return session.scalars(
            select(Lead).where(Lead.id == lead_id).with_for_update()
        ).one_or_none()

    def reassign_by_hand(self, session: Session, lead: Lead, rep_id: int, owner_id: str) -> bool:
        """Give ``lead`` (locked, :meth:`locked`) to the rep a person chose: sticky
        (``ownerSetByHand``), no longer a fallback, the load moved from the old owner to the
        new one only while the lead still counts (open, load not released), and the HubSpot
        contact's new owner queued in this transaction. ``False`` when it is already theirs
        by hand (repeating changes nothing)."""
        if lead.ownerSalesRepId == rep_id and lead.ownerSetByHand and not lead.ownerIsFallback:
            return False
        counting = lead.status == LeadStatus.OPEN and lead.loadReleasedAt is None
        if counting and lead.ownerSalesRepId != rep_id:
            self._release(session, lead.ownerSalesRepId, lead.ownerIsFallback)
            session.execute(
                update(SalesRep)
                .where(SalesRep.id == rep_id)
                .values(openLeads=SalesRep.openLeads + 1)
            )
        elif counting and lead.ownerIsFallback:  # now charged to the same rep
            session.execute(
                update(SalesRep)
                .where(SalesRep.id == rep_id)
                .values(openLeads=SalesRep.openLeads + 1)
            )
        moved = lead.ownerHubspotOwnerId != owner_id
        lead.ownerSalesRepId = rep_id
        lead.ownerHubspotOwnerId = owner_id
        lead.ownerIsFallback = False
        lead.ownerSetByHand = True
        session.flush()
        if moved:
            HubSpotOutboxRepository().enqueue(
                session,
                lead.subscriptionId,
                OutboxKind.CONTACT_OWNER,
                lead_owner_intent(lead.id, owner_id),
                {"hubspot_owner_id": owner_id},
                lead_id=lead.id,
            )
        return True

    def get_by_key(
        self, session: Session, subscription_id: uuid.UUID, idempotency_key: str
    ) -> Lead | None:
        statement = select(Lead).where(
            Lead.subscriptionId == subscription_id, Lead.idempotencyKey == idempotency_key
        )
        return session.scalars(statement).one_or_none()

    def claim_owner(self, session: Session, candidates: Sequence[Candidate]) -> Candidate | None:
        """Charge one open lead to the least-loaded active candidate and return it; ``None``
        when no candidate is (still) assignable."""
        if not candidates:
            return None
        params = {
            "ids": [c.sales_rep_id for c in candidates],
            "weights": [c.weight for c in candidates],
        }
        for skip in ("SKIP LOCKED", ""):  # busy rows skipped first; wait only if all busy
            row = session.execute(_CLAIM_STATEMENTS[skip], params).first()
            if row is not None:
                return Candidate(row.id, row.hubspotOwnerId)
        return None

    def fallback_owner(self, session: Session, pool_id: int | None) -> Candidate | None:
        """The pool's fallback rep as the database holds it now, if assignable; the row is
        share-locked until commit, so a deactivation cannot slip in between (docs/leads.md,
        "POST /v1/leads"). Rare (nobody in the pool is assignable), so never cached."""
        if pool_id is None:
            return None
        row = session.execute(
            select(SalesRep.id, SalesRep.hubspotOwnerId)
            .join(RoutingPool, RoutingPool.fallbackSalesRepId == SalesRep.id)
            .where(RoutingPool.id == pool_id, *ASSIGNABLE)
            .with_for_update(read=True, of=SalesRep)
        ).first()
        return None if row is None else Candidate(row.id, row.hubspotOwnerId)

    def ladder_owner(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        candidates: Sequence[Candidate],
        pool_id: int | None,
    ) -> tuple[Candidate | None, OwnerState]:
        """The owner ladder (docs/leads.md, "Who owns a lead"): the least-loaded assignable
        pool member (charged), else the pool's fallback rep, else the subscription's fallback
        rep (neither charged), else nobody: ``(None, WAITING)``."""
        owner = self.claim_owner(session, candidates)
        if owner is not None:
            return owner, OwnerState.ASSIGNED
        fallback = self.fallback_owner(session, pool_id) or self.subscription_fallback_owner(
            session, subscription_id
        )
        if fallback is not None:
            return fallback, OwnerState.FALLBACK
        return None, OwnerState.WAITING

    def subscription_fallback_owner(
        self, session: Session, subscription_id: uuid.UUID
    ) -> Candidate | None:
        """The subscription's fallback rep, if assignable now (the ladder's last rung before
        waiting), share-locked until commit like the pool's fallback."""
        row = session.execute(
            select(SalesRep.id, SalesRep.hubspotOwnerId)
            .join(Subscription, Subscription.fallbackSalesRepId == SalesRep.id)
            .where(Subscription.id == subscription_id, *ASSIGNABLE)
            .with_for_update(read=True, of=SalesRep)
        ).first()
        return None if row is None else Candidate(row.id, row.hubspotOwnerId)

    def waiting(self, session: Session, subscription_id: uuid.UUID, limit: int) -> list[Lead]:
        """Open leads without an owner, oldest first, locked; rows another run holds are
        skipped, so two runs never give one lead two owners."""
        return list(
            session.scalars(
                select(Lead)
                .where(
                    Lead.subscriptionId == subscription_id,
                    Lead.status == LeadStatus.OPEN,
                    Lead.ownerHubspotOwnerId.is_(None),
                )
                .order_by(Lead.createdAt, Lead.id)
                .limit(limit)
                .with_for_update(skip_locked=True)
            )
        )

    def give_owner(
        self, session: Session, lead: Lead, owner: Candidate, *, charged: bool, state: str
    ) -> None:
        """Record a waiting lead's owner, in its row and in its stored answer."""
        lead.ownerSalesRepId = owner.sales_rep_id
        lead.ownerHubspotOwnerId = owner.hubspot_owner_id
        lead.ownerIsFallback = not charged
        lead.response = {
            **dict(lead.response),
            "owner": {
                "sales_rep_id": owner.sales_rep_id,
                "hubspot_owner_id": owner.hubspot_owner_id,
            },
            "owner_is_fallback": not charged,
            "owner_state": state,
        }
        session.flush()

    def drop_owner(self, session: Session, lead: Lead) -> None:
        """The lead waits for an owner (its owner left and nobody can take it): no rep, no
        HubSpot owner, in its row and its stored answer."""
        lead.ownerSalesRepId = None
        lead.ownerHubspotOwnerId = None
        lead.ownerIsFallback = False
        lead.response = {
            **dict(lead.response),
            "owner": None,
            "owner_is_fallback": False,
            "owner_state": OwnerState.WAITING.value,
        }
        session.flush()


def claim_statement(*, skip_locked: bool) -> TextClause:
    """The claim statement (``:ids``, ``:weights``): charge the least-loaded assignable
    candidate and return ``(id, hubspotOwnerId)``; for re-routing outside intake."""
    return _CLAIM_STATEMENTS["SKIP LOCKED" if skip_locked else ""]
