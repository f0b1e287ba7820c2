"""Sending ``outbound_messages`` (docs/messages.md): the statements of the sender and of the
provider's status webhooks. :class:`MessageSendingQueries` is part of
``crm.repositories.timeline.OutboundMessageRepository``; import that.

* :meth:`~MessageSendingQueries.claim_due` takes the due queued messages with ``FOR UPDATE SKIP
  LOCKED`` and marks them ``sending`` (their ``sendingAt``, one more attempt) in the caller's
  transaction, which commits before any provider is called; two drains never claim the same
  message. With each message it reads what the send-time check needs: the lead's last inbound
  WhatsApp message (the partial index the window's enqueue check uses) and the address's
  newsletter opt-out.
* :meth:`~MessageSendingQueries.record_sent` and the other outcomes change a message only while
  it is ``sending``; :meth:`~MessageSendingQueries.record_provider_status` only moves a status
  forward (``crm.rules.message_sending.advance_status``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import INBOUND_WHATSAPP_PREDICATE
from morpheus_pipelines.crm.rules.lead_status import MessageStatus
from morpheus_pipelines.crm.rules.message_sending import (
    STATUS_TIME_COLUMN,
    FailureReason,
    SendCheck,
    advance_status,
    message_external_id,
)

# The due queued messages of the configured channels, oldest due first, claimed and read
# with what the send-time check needs, in one statement.
_CLAIM = f"""
WITH due AS (
    SELECT id FROM outbound_messages
    WHERE status = 'queued' AND "nextAttemptAt" <= :now
      AND CAST(channel AS text) = ANY(:channels)
    ORDER BY "nextAttemptAt", "createdAt"
    LIMIT :limit
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE outbound_messages m
    SET status = 'sending', "sendingAt" = :now, attempts = m.attempts + 1
    FROM due WHERE m.id = due.id
    RETURNING m.id, m."subscriptionId", m."leadId", CAST(m.channel AS text) AS channel, m.kind,
              m."templateName", m.body, m.attempts, m."createdAt"
)
SELECT c.id, c."subscriptionId", c."leadId", c.channel, c.kind, c."templateName", c.body,
       c.attempts, c."createdAt", l.phone, l.email, s."whatsappPhoneNumberId",
       CASE WHEN c.channel = 'WHATSAPP' AND c.kind = 'free_form' THEN (
           SELECT max(a."occurredAt") FROM activities a
           WHERE a."leadId" = c."leadId" AND a."occurredAt" <= :now
             AND {INBOUND_WHATSAPP_PREDICATE}
       ) END AS last_inbound,
       c.channel = 'EMAIL' AND EXISTS (
           SELECT 1 FROM target_emails t
           WHERE t."subscriptionId" = l."subscriptionId" AND lower(t.email) = lower(l.email)
             AND t."newsletterOptedOut" AND NOT t."isDeleted"
       ) AS opted_out,
       template.subject AS template_subject, template.body AS template_body
FROM claimed c
JOIN leads l ON l.id = c."leadId"
JOIN subscriptions s ON s.id = c."subscriptionId"
LEFT JOIN LATERAL (
    SELECT e.subject, e.body FROM emails e
    WHERE c.channel = 'EMAIL' AND c.kind = 'template'
      AND e."subscriptionId" = c."subscriptionId" AND e."campaignId" = c."templateName"
    ORDER BY e.id DESC LIMIT 1
) template ON true
ORDER BY c."createdAt"
"""

_ABANDON = """
UPDATE outbound_messages
SET status = 'failed', "failedAt" = :now, "failureReason" = :reason, "failureCode" = NULL
WHERE status = 'sending' AND "sendingAt" < :before
RETURNING id, CAST(channel AS text)
"""

_SENT = """
UPDATE outbound_messages
SET status = 'sent', "providerMessageId" = :provider_id, "sentAt" = :at
WHERE id = :id AND status = 'sending'
RETURNING "subscriptionId", "leadId", CAST(channel AS text), kind, "templateName", body
"""

_REQUEUE = """
UPDATE outbound_messages SET status = 'queued', "nextAttemptAt" = :next
WHERE id = :id AND status = 'sending'
"""

# A person's retry: failed messages of the given reasons queued again as new, due now. One
# the provider had accepted (it has the provider's id) only when asked for; each loses that
# id and its times, so a late status webhook of the earlier send cannot move the new attempt.
# The old reason is returned (RETURNING sees the new row) to count what went back.
_REQUEUE_FAILED = """
WITH picked AS (
    SELECT id, "failureReason" AS reason FROM outbound_messages
    WHERE "subscriptionId" = :subscription_id AND status = 'failed'
      AND "failureReason" = ANY(:reasons)
      AND ("providerMessageId" IS NULL OR :include_accepted)
    FOR UPDATE
)
UPDATE outbound_messages AS m
SET status = 'queued', attempts = 0, "nextAttemptAt" = :now, "sendingAt" = NULL,
    "failedAt" = NULL, "failureReason" = NULL, "failureCode" = NULL,
    "providerMessageId" = NULL, "sentAt" = NULL, "deliveredAt" = NULL, "readAt" = NULL
FROM picked WHERE m.id = picked.id
RETURNING picked.reason
"""

_FAIL = """
UPDATE outbound_messages
SET status = 'failed', "failedAt" = :at, "failureReason" = :reason, "failureCode" = :code
WHERE id = :id AND status = ANY(:from_statuses)
"""

# A sent message on its lead's timeline: one activity per message (its externalId), whose
# status follows the message's.
_ACTIVITY = """
INSERT INTO activities ("subscriptionId", "externalId", type, direction, "leadId",
                        "occurredAt", subject, body, status, metadata)
VALUES (:subscription_id, :external_id, CAST(:channel AS activity_type), 'outbound', :lead_id,
        :at, :subject, :body, :status, CAST(:metadata AS jsonb))
ON CONFLICT ("subscriptionId", "externalId") DO UPDATE
SET status = EXCLUDED.status, metadata = EXCLUDED.metadata, "updatedAt" = now()
"""

_ACTIVITY_STATUS = """
UPDATE activities
SET status = :status, "updatedAt" = now(),
    metadata = coalesce(metadata, '{}'::jsonb) || CAST(:changes AS jsonb)
WHERE "subscriptionId" = :subscription_id AND "externalId" = :external_id
"""

_BY_PROVIDER_ID = """
SELECT id, "subscriptionId", status FROM outbound_messages
WHERE "providerMessageId" = :provider_id
FOR UPDATE
"""

_BACKLOG = """
SELECT CAST(channel AS text), status, count(*),
       count(*) FILTER (WHERE status = 'queued' AND "nextAttemptAt" <= :now),
       min("createdAt") FILTER (WHERE status IN ('queued', 'sending'))
FROM outbound_messages
WHERE status IN ('queued', 'sending') OR "failedAt" >= :since OR "sentAt" >= :since
GROUP BY 1, 2
"""

_FAILURES = """
SELECT CAST(channel AS text), "failureReason", count(*)
FROM outbound_messages
WHERE status = 'failed' AND "failedAt" >= :since
GROUP BY 1, 2
"""


@dataclass(frozen=True)
class ClaimedMessage:
    """A message marked ``sending``, with what sending it needs."""

    id: uuid.UUID
    subscription_id: uuid.UUID
    lead_id: uuid.UUID
    channel: str  # WHATSAPP or EMAIL
    kind: str
    template_name: str | None
    body: str | None
    attempts: int
    created_at: datetime
    phone: str | None
    email: str | None
    sender_number: str | None
    last_inbound_whatsapp: datetime | None
    opted_out: bool
    template_subject: str | None
    template_body: str | None


def send_check(message: ClaimedMessage) -> SendCheck:
    """What the send-time rules look at of a claimed message."""
    return SendCheck(
        channel=message.channel,
        kind=message.kind,
        phone=message.phone,
        email=message.email,
        sender_number=message.sender_number,
        last_inbound_whatsapp=message.last_inbound_whatsapp,
        opted_out=message.opted_out,
    )


@dataclass(frozen=True)
class MessageBacklog:
    """The messages at a glance: by channel and status, those due now, the oldest still
    waiting, and the failures since ``since`` by channel and reason."""

    by_status: dict[str, dict[str, int]]
    due: dict[str, int]
    oldest_waiting_at: datetime | None
    failures: dict[str, dict[str, int]]


class MessageSendingQueries:
    """The sender's and the status webhooks' statements on ``outbound_messages``."""

    def claim_due(
        self, session: Session, *, channels: Iterable[str], now: datetime, limit: int
    ) -> list[ClaimedMessage]:
        """Mark up to ``limit`` due queued messages of ``channels`` ``sending`` (skipping those
        another drain holds); the caller commits before sending any."""
        wanted = sorted(str(channel).upper() for channel in channels)
        if not wanted or limit < 1:
            return []
        rows = session.execute(text(_CLAIM), {"now": now, "channels": wanted, "limit": limit}).all()
        return [ClaimedMessage(*row) for row in rows]

    def abandon_in_flight(
        self, session: Session, *, now: datetime, after: timedelta
    ) -> list[tuple[uuid.UUID, str]]:
        """Fail ``send_outcome_unknown`` every message ``sending`` for longer than ``after``:
        its drain died between the provider's call and recording the answer, so the provider
        may have it. ``(id, channel)`` of each."""
        params = {
            "now": now,
            "before": now - after,
            "reason": FailureReason.SEND_OUTCOME_UNKNOWN.value,
        }
        return [(row[0], row[1]) for row in session.execute(text(_ABANDON), params)]

    def record_sent(
        self,
        session: Session,
        message: ClaimedMessage,
        provider_id: str,
        *,
        at: datetime,
        subject: str | None = None,
    ) -> bool:
        """The provider took ``message``: ``sent`` with its id, and the outbound activity on the
        lead's timeline. False when the message was no longer ``sending``."""
        row = session.execute(
            text(_SENT), {"id": message.id, "provider_id": provider_id, "at": at}
        ).first()
        if row is None:
            return False
        metadata = {
            "message_id": str(message.id),
            "kind": message.kind,
            "template": message.template_name,
            "status": MessageStatus.SENT.value,
            "provider_message_id": provider_id,
        }
        session.execute(
            text(_ACTIVITY),
            {
                "subscription_id": message.subscription_id,
                "external_id": message_external_id(message.id),
                "channel": message.channel,
                "lead_id": message.lead_id,
                "at": at,
                "subject": subject,
                "body": message.body if message.kind == "free_form" else message.template_name,
                "status": MessageStatus.SENT.value,
                "metadata": json.dumps(metadata),
            },
        )
        return True

    def requeue(
        self, session: Session, message_id: uuid.UUID, *, next_attempt_at: datetime
    ) -> None:
        """Not sent, for now: ``queued`` again, due at ``next_attempt_at``."""
        session.execute(text(_REQUEUE), {"id": message_id, "next": next_attempt_at})

    def requeue_failed(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        reasons: Iterable[FailureReason],
        *,
        now: datetime,
        include_accepted: bool = False,
    ) -> dict[str, int]:
        """Queue the subscription's messages failed for one of ``reasons`` again, attempts
        reset and due at ``now``; those the provider accepted before it reported the failure
        only with ``include_accepted``. How many went back, by their old reason."""
        rows = session.execute(
            text(_REQUEUE_FAILED),
            {
                "subscription_id": subscription_id,
                "reasons": sorted(str(reason) for reason in reasons),
                "now": now,
                "include_accepted": include_accepted,
            },
        )
        counts: dict[str, int] = {}
        for (reason,) in rows:
            counts[reason] = counts.get(reason, 0) + 1
        return counts

    def fail(
        self,
        session: Session,
        message_id: uuid.UUID,
        reason: FailureReason | str,
        *,
        at: datetime,
        code: str | None = None,
    ) -> None:
        """Not sent, for good (a message still ``sending``, or still ``queued``)."""
        session.execute(
            text(_FAIL),
            {
                "id": message_id,
                "reason": str(reason),
                "code": code,
                "at": at,
                "from_statuses": [MessageStatus.SENDING.value, MessageStatus.QUEUED.value],
            },
        )

    def record_provider_status(
        self,
        session: Session,
        provider_message_id: str,
        status: MessageStatus,
        at: datetime,
        *,
        failure_code: str | None = None,
        failure_reason: str | None = None,
    ) -> bool:
        """A status the provider reported (the Cloud API's ``statuses`` webhook: ``sent``,
        ``delivered``, ``read``, ``failed``) for the message it knows as
        ``provider_message_id``; True when it changed something.

        Idempotent and order-safe: the message row is locked, and the status only moves
        forward (:func:`~morpheus_pipelines.crm.rules.message_sending.advance_status`), so a
        repeated webhook, a ``delivered`` after ``read`` or a ``failed`` after ``delivered``
        changes nothing. An unknown id changes nothing either. The status's time goes to its
        column (``deliveredAt``, ``readAt``, …; ``sentAt`` is kept when set), a failure's code
        and reason (default ``delivery_failed``) to the message, and the status to the
        message's activity on the timeline.
        """
        incoming = MessageStatus(status)
        row = session.execute(text(_BY_PROVIDER_ID), {"provider_id": provider_message_id}).first()
        if row is None:
            return False
        message_id, subscription_id, current = row
        if not advance_status(current, incoming):
            return False
        column = STATUS_TIME_COLUMN.get(incoming)
        assignments = ["status = :status"]
        if column == "sentAt":
            assignments.append('"sentAt" = coalesce("sentAt", :at)')
        elif column is not None:
            assignments.append(f'"{column}" = :at')
        params: dict[str, Any] = {"id": message_id, "status": incoming.value, "at": at}
        changes: dict[str, Any] = {"status": incoming.value}
        if incoming is MessageStatus.FAILED:
            assignments += ['"failureReason" = :reason', '"failureCode" = :code']
            params["reason"] = failure_reason or FailureReason.DELIVERY_FAILED.value
            params["code"] = failure_code
            changes |= {"failure_reason": params["reason"], "failure_code": failure_code}
        session.execute(
            text(f"UPDATE outbound_messages SET {', '.join(assignments)} WHERE id = :id"), params
        )
        session.execute(
            text(_ACTIVITY_STATUS),
            {
                "status": incoming.value,
                "changes": json.dumps(changes),
                "subscription_id": subscription_id,
                "external_id": message_external_id(message_id),
            },
        )
        return True

    def backlog(self, session: Session, *, now: datetime, since: datetime) -> MessageBacklog:
        """Every subscription's messages: queued and sending by channel, those due, the
        oldest still waiting; sent and failed since ``since``."""
        by_status: dict[str, dict[str, int]] = {}
        due: dict[str, int] = {}
        oldest: datetime | None = None
        for channel, status, count, due_now, waiting_since in session.execute(
            text(_BACKLOG), {"now": now, "since": since}
        ):
            key = channel.lower()
            by_status.setdefault(key, {})[status] = count
            due[key] = due.get(key, 0) + due_now
            if waiting_since is not None and (oldest is None or waiting_since < oldest):
                oldest = waiting_since
        failures: dict[str, dict[str, int]] = {}
        for channel, reason, count in session.execute(text(_FAILURES), {"since": since}):
            failures.setdefault(channel.lower(), {})[reason or "unknown"] = count
        return MessageBacklog(by_status, due, oldest, failures)
