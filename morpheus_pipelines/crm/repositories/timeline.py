"""Repositories of the unified timeline's consumers (docs/leads.md, "The timeline"). Not
among the 16 exports of ``morpheus_pipelines.crm.repositories``; import them from here.

The guarantees are statements, not checks:

* an activity is inserted with ``ON CONFLICT (subscriptionId, externalId) DO NOTHING``;
* a WhatsApp free-form message is inserted by an ``INSERT … SELECT … WHERE`` the window is
  open *at the instant it is queued*: the check and the enqueue cannot be told apart;
* every due nudge of every rule is found, recorded and queued by one statement over the
  timeline, and ``(ruleId, leadId, quietSince)`` is UNIQUE, so a nudge fires once per quiet
  period however often, and however concurrently, the evaluation runs.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, text, tuple_
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import (
    ENGAGEMENT_PREDICATE,
    INBOUND_WHATSAPP_PREDICATE,
    WHATSAPP_WINDOW_SECONDS,
    Activity,
    AutomationRule,
    OutboundMessage,
)
from morpheus_pipelines.crm.repositories.activity import ActivityRepository
from morpheus_pipelines.crm.repositories.message_sending import MessageSendingQueries
from morpheus_pipelines.crm.rules.lead_status import LeadStatus
from morpheus_pipelines.platform.store.base import BaseRepository


class TimelineRepository(ActivityRepository):
    """A lead's activities, every channel in one list."""

    def record(self, session: Session, data: Mapping[str, Any]) -> tuple[Activity, bool]:
        """Insert the activity unless its ``(subscriptionId, externalId)`` exists:
        ``(activity, created)``. A concurrent duplicate waits for the first to commit and
        then gets the stored row."""
        self._check_columns(data, "record")
        statement = (
            pg_insert(self.table)
            .values(dict(data))
            .on_conflict_do_nothing(index_elements=["subscriptionId", "externalId"])
            .returning(*self.table.columns)
        )
        created = session.scalars(
            select(Activity).from_statement(statement).execution_options(populate_existing=True)
        ).first()
        if created is not None:
            return created, True
        stored = self.get_by_external_id(
            session, subscription_id=data["subscriptionId"], external_id=data["externalId"]
        )
        assert stored is not None  # the conflict was on this id, so it exists
        return stored, False

    def page(
        self,
        session: Session,
        lead_id: uuid.UUID,
        *,
        limit: int,
        before: tuple[datetime, int] | None = None,
    ) -> list[Activity]:
        """Newest first; ``before`` is the ``(occurredAt, id)`` of the last row of the previous
        page (keyset pagination: stable while activities keep arriving, out of order too)."""
        statement = select(Activity).where(Activity.leadId == lead_id)
        if before is not None:
            statement = statement.where(
                tuple_(Activity.occurredAt, Activity.id) < tuple_(before[0], before[1])
            )
        statement = statement.order_by(Activity.occurredAt.desc(), Activity.id.desc()).limit(limit)
        return list(session.scalars(statement))

    def latest_leads_by_email(
        self, session: Session, subscription_id: uuid.UUID, emails: list[str]
    ) -> dict[str, uuid.UUID]:
        """The newest lead of each email in the subscription: whose timeline a synced
        engagement with that contact joins."""
        if not emails:
            return {}
        rows = session.execute(
            text(
                'SELECT DISTINCT ON (email) email, id FROM leads WHERE "subscriptionId" = :sub '
                'AND email = ANY(:emails) ORDER BY email, "createdAt" DESC'
            ),
            {"sub": subscription_id, "emails": emails},
        )
        return {email: lead_id for email, lead_id in rows}

    def latest_lead_by_phone(
        self, session: Session, subscription_id: uuid.UUID, phone: str
    ) -> uuid.UUID | None:
        """The subscription's lead with this E.164 number, its open one before any closed one,
        newest first: whose timeline a WhatsApp message from that number joins."""
        return session.scalar(
            text(
                'SELECT id FROM leads WHERE "subscriptionId" = :sub AND phone = :phone '
                'AND NOT "isTest" ORDER BY status = \'open\' DESC, "createdAt" DESC LIMIT 1'
            ),
            {"sub": subscription_id, "phone": phone},
        )

    def last_inbound_whatsapp(
        self, session: Session, lead_id: uuid.UUID, *, at: datetime
    ) -> datetime | None:
        """When the lead last wrote to us on WhatsApp, as of ``at``."""
        return session.execute(
            text(
                'SELECT max("occurredAt") FROM activities WHERE "leadId" = :lead '
                f'AND "occurredAt" <= :at AND {INBOUND_WHATSAPP_PREDICATE}'
            ),
            {"lead": lead_id, "at": at},
        ).scalar()


# An email to the lead's address while its newsletter opt-out is set (the same test as the
# automations' evaluation below).
OPTED_OUT_EMAIL_PREDICATE = """EXISTS (
    SELECT 1 FROM leads l JOIN target_emails t
      ON t."subscriptionId" = l."subscriptionId" AND lower(t.email) = lower(l.email)
    WHERE l.id = :lead_id AND t."newsletterOptedOut" AND NOT t."isDeleted")"""

# The checks and the enqueue in one statement: nothing is inserted unless, at ``:now``, the
# message is not free-form WhatsApp or the lead wrote on WhatsApp in the last 24 hours, and it
# is not an email to an opted-out address (an opt-out landing between a check and an insert
# cannot leak a message).
_ENQUEUE = f"""
INSERT INTO outbound_messages ("subscriptionId", "leadId", channel, kind, "templateName",
                               body, "idempotencyKey", "requestFingerprint", "createdAt",
                               "nextAttemptAt")
SELECT :subscription_id, :lead_id, CAST(:channel AS activity_type), :kind, :template_name,
       :body, :idempotency_key, :fingerprint, :now, :now
WHERE (:kind <> 'free_form' OR :channel <> 'WHATSAPP' OR EXISTS (
    SELECT 1 FROM activities
    WHERE "leadId" = :lead_id AND {INBOUND_WHATSAPP_PREDICATE}
      AND "occurredAt" <= :now
      AND "occurredAt" > :now - make_interval(secs => {WHATSAPP_WINDOW_SECONDS})
))
  AND NOT (:channel = 'EMAIL' AND {OPTED_OUT_EMAIL_PREDICATE})
ON CONFLICT ("subscriptionId", "idempotencyKey") DO NOTHING
RETURNING id
"""


class OutboundMessageRepository(MessageSendingQueries, BaseRepository[OutboundMessage]):
    """Queueing a message (:meth:`enqueue`) and, from :class:`MessageSendingQueries`,
    sending it and following its statuses (docs/messages.md)."""

    model_class = OutboundMessage

    def enqueue(
        self, session: Session, data: Mapping[str, Any], *, now: datetime
    ) -> uuid.UUID | None:
        """Queue the message if the WhatsApp window and the newsletter opt-out allow it at
        ``now``: its id, or ``None`` when nothing was queued (the window was closed, the address
        opted out, or the idempotency key exists: the caller tells which with
        :meth:`get_by_key` and the channel)."""
        params = {
            "subscription_id": data["subscriptionId"],
            "lead_id": data["leadId"],
            "channel": str(data["channel"]),
            "kind": data["kind"],
            "template_name": data.get("templateName"),
            "body": data.get("body"),
            "idempotency_key": data.get("idempotencyKey"),
            "fingerprint": data.get("requestFingerprint"),
            "now": now,
        }
        return session.execute(text(_ENQUEUE), params).scalar()

    def get_by_key(
        self, session: Session, subscription_id: uuid.UUID, idempotency_key: str
    ) -> OutboundMessage | None:
        statement = select(OutboundMessage).where(
            OutboundMessage.subscriptionId == subscription_id,
            OutboundMessage.idempotencyKey == idempotency_key,
        )
        return session.scalars(statement).one_or_none()


# Every rule against every open lead of its subscription, in one statement: the lead's quiet
# period starts at its last engagement (or its creation); a rule is due ``quietSeconds`` later,
# a WhatsApp rule no earlier than ``windowLeadSeconds`` before the window closes, and a
# free-form one only while the window is open. Due and not yet fired for this quiet period → a
# firing and its queued message.
_WINDOW = f"make_interval(secs => {WHATSAPP_WINDOW_SECONDS})"
EVALUATION_STATEMENT = f"""
WITH rules AS (
    SELECT * FROM automation_rules WHERE "isActive"
), state AS MATERIALIZED (
    SELECT l.id AS lead_id, l."subscriptionId", l.email,
           greatest(l."createdAt", engaged.last) AS quiet_since,
           whatsapp.last AS last_whatsapp
    FROM leads l
    -- Each lead's last engagement and last inbound WhatsApp message: one ordered pass over
    -- each partial index (a streaming group-by), not a probe per lead (docs/decisions/0023).
    -- MATERIALIZED: computed once per lead, whatever the number of rules.
    LEFT JOIN (
        SELECT a."leadId", max(a."occurredAt") AS last FROM activities a
        WHERE a."occurredAt" <= :now AND ({ENGAGEMENT_PREDICATE})
        GROUP BY a."leadId"
    ) engaged ON engaged."leadId" = l.id
    LEFT JOIN (
        SELECT a."leadId", max(a."occurredAt") AS last FROM activities a
        WHERE a."occurredAt" <= :now AND {INBOUND_WHATSAPP_PREDICATE}
        GROUP BY a."leadId"
    ) whatsapp ON whatsapp."leadId" = l.id
    WHERE l.status = '{LeadStatus.OPEN}' AND l."createdAt" <= :now
      AND l."subscriptionId" IN (SELECT "subscriptionId" FROM rules)
), due AS (
    SELECT r.id AS rule_id, r."subscriptionId", s.lead_id, s.quiet_since,
           r."windowLeadSeconds" IS NOT NULL AS has_deadline,
           CASE WHEN r."windowLeadSeconds" IS NULL
                THEN s.quiet_since + make_interval(secs => r."quietSeconds")
                ELSE greatest(s.quiet_since + make_interval(secs => r."quietSeconds"),
                              s.last_whatsapp + {_WINDOW}
                              - make_interval(secs => r."windowLeadSeconds"))
           END AS due_at
    FROM state s JOIN rules r ON r."subscriptionId" = s."subscriptionId"
    -- Only a free-form WhatsApp nudge is bound to the window; a template may go at any time
    -- (greatest() ignores a NULL window, so a template is due on its quiet period alone).
    WHERE (r."windowLeadSeconds" IS NULL OR r.kind <> 'free_form'
           OR (s.last_whatsapp IS NOT NULL AND :now < s.last_whatsapp + {_WINDOW}))
      -- An email nudge never goes to an address whose newsletter opt-out is set.
      AND NOT (r.channel = 'EMAIL' AND EXISTS (
          SELECT 1 FROM target_emails t
          WHERE t."subscriptionId" = s."subscriptionId" AND t."newsletterOptedOut"
            AND NOT t."isDeleted" AND lower(t.email) = lower(s.email)))
), fired AS (
    INSERT INTO automation_firings ("subscriptionId", "ruleId", "leadId", "quietSince",
                                    "dueAt", "firedAt")
    SELECT d."subscriptionId", d.rule_id, d.lead_id, d.quiet_since, d.due_at, :now
    FROM due d
    WHERE d.due_at <= :now AND NOT EXISTS (
        SELECT 1 FROM automation_firings f
        WHERE f."ruleId" = d.rule_id AND f."leadId" = d.lead_id
          AND f."quietSince" = d.quiet_since)
    -- A bounded burst: a rule switched on over a million quiet leads drains over a few
    -- evaluations instead of flooding the provider; nudges with a window deadline go first.
    ORDER BY d.has_deadline DESC, d.due_at
    LIMIT :max_firings
    ON CONFLICT ("ruleId", "leadId", "quietSince") DO NOTHING
    RETURNING id, "subscriptionId", "ruleId", "leadId", "quietSince", "dueAt"
), queued AS (
    INSERT INTO outbound_messages ("subscriptionId", "leadId", channel, kind, "templateName",
                                   body, "automationFiringId", "createdAt", "nextAttemptAt")
    SELECT f."subscriptionId", f."leadId", r.channel, r.kind, r."templateName", r.body, f.id,
           :now, :now
    FROM fired f JOIN rules r ON r.id = f."ruleId"
    RETURNING id, "automationFiringId"
)
SELECT f."ruleId", f."leadId", f."quietSince", f."dueAt", q.id AS message_id
FROM fired f JOIN queued q ON q."automationFiringId" = f.id
"""


MAX_FIRINGS = 10_000


@dataclass(frozen=True)
class Firing:
    rule_id: int
    lead_id: uuid.UUID
    quiet_since: datetime
    due_at: datetime
    message_id: uuid.UUID


class AutomationRepository(BaseRepository[AutomationRule]):
    model_class = AutomationRule

    def fire_due(
        self, session: Session, *, now: datetime, max_firings: int = MAX_FIRINGS
    ) -> list[Firing]:
        """Record and queue the nudges due at ``now`` that have not fired for their quiet
        period, at most ``max_firings`` (WhatsApp ones, which have a deadline, first); the
        firings made by this call."""
        params = {"now": now, "max_firings": max_firings}
        return [Firing(*row) for row in session.execute(text(EVALUATION_STATEMENT), params)]

    def active_rules(self, session: Session) -> list[AutomationRule]:
        statement = (
            select(AutomationRule)
            .where(AutomationRule.isActive)
            .order_by(AutomationRule.subscriptionId, AutomationRule.id)
        )
        return list(session.scalars(statement))


_WON_TOUCHES = f"""
SELECT l.id, l."closedAt", l."ownerHubspotOwnerId", a."occurredAt", lower(CAST(a.type AS text)),
       a.metadata ->> 'hubspot_owner_id'
FROM leads l
LEFT JOIN activities a
  ON a."leadId" = l.id AND a."occurredAt" <= l."closedAt"
 AND a.type IN ('FORM', 'WHATSAPP', 'CALL', 'EMAIL')
WHERE l."subscriptionId" = :subscription_id AND l.status = '{LeadStatus.WON}'
  AND l."closedAt" IS NOT NULL
ORDER BY l.id, a."occurredAt", a.id
"""


class AttributionRepository(BaseRepository[Activity]):
    model_class = Activity

    def won_lead_touches(
        self, session: Session, subscription_id: uuid.UUID
    ) -> Iterator[tuple[Any, ...]]:
        """``(lead id, won at, lead owner, touch time, channel, touch owner)`` per touch of
        every won lead of the subscription before its win, grouped by lead (a lead without
        touches: one row of ``None`` touch columns). Streamed."""
        result = session.execute(
            text(_WON_TOUCHES),
            {"subscription_id": subscription_id},
            execution_options={"yield_per": 5_000},
        )
        yield from result
