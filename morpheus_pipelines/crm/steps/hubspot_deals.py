"""The deal worker (docs/hubspot-webhooks.md, "Deal events"): the ``deal.propertyChange``
events the webhook stored ``pending``, settled once each.

A batch of at most 100 events at a time, oldest stored first:

1. From HubSpot, before any write: the stage of each deal whose event carries none (a batch
   read), and the contacts of each deal the events close (one v4 association read). A HubSpot
   failure stops the run there: the batch's events stay pending, nothing of it is written,
   and the next run reads them again.
2. In one transaction: the events still pending are locked (another worker's are skipped),
   then each, in the order they happened, is planned by the rules
   (:mod:`~morpheus_pipelines.crm.rules.hubspot_deals`), its leads closed through
   :meth:`LeadRepository.close` (the path ``morpheus lead close`` takes: a lead already closed
   changes nothing, so a rep's ``openLeads`` goes down once per lead), and the event marked
   ``applied`` or ``ignored`` with its ``outcome``, all committed together.

:func:`close_deal_leads` is the one way a closed deal closes leads; the reconciliation calls it
too.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from morpheus_pipelines.crm.rules.hubspot_deals import (
    STAGE_PROPERTY,
    closing_outcome,
    lead_status_of_stage,
    plan_deal_event,
    stage_of_event,
)
from morpheus_pipelines.crm.rules.hubspot_webhooks import WebhookEventStatus
from morpheus_pipelines.crm.rules.lead_status import LeadStatus
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import BATCH_READ_SIZE, HubSpotClient, HubSpotError


@dataclass(frozen=True)
class PendingDealEvent:
    """What the worker needs of one stored event (read in one transaction, settled in
    another)."""

    row_id: int
    event_id: int
    deal_id: str
    property_name: str | None
    value: str | None
    occurred_at: datetime

    @property
    def stage(self) -> str | None:
        return stage_of_event(self.value) if self.property_name == STAGE_PROPERTY else None

    @property
    def needs_deal_read(self) -> bool:
        return self.property_name == STAGE_PROPERTY and self.stage is None


@dataclass(frozen=True)
class DealReads:
    """What HubSpot said of one batch's deals: the stages read (deals HubSpot does not know
    are absent) and each closing deal's contacts."""

    stages: dict[str, str | None] = field(default_factory=dict)
    contacts: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class DealEventRun:
    """What one run of the worker did."""

    statuses: Counter[str] = field(default_factory=Counter)
    leads_closed: Counter[str] = field(default_factory=Counter)
    ignored: Counter[str] = field(default_factory=Counter)  # by IgnoredBecause
    batches: int = 0
    error: str | None = None

    @property
    def settled(self) -> int:
        return sum(self.statuses.values())


@dataclass(frozen=True)
class DealEventBacklog:
    """The subscription's pending deal events: how many, since when, and the newest row."""

    pending: int
    oldest_received_at: datetime | None
    newest_id: int | None


def deal_event_backlog(
    session_factory: SessionFactory, subscription_id: uuid.UUID | None
) -> DealEventBacklog:
    """The pending deal events of one subscription, or of every one (``None``)."""
    with session_factory() as session:
        pending, oldest, newest = CrmStore(session).webhooks.deal_event_backlog(
            session, subscription_id
        )
    return DealEventBacklog(pending, oldest, newest)


def close_deal_leads(
    store: CrmStore,
    subscription_id: uuid.UUID,
    hubspot_contact_ids: Iterable[str],
    close_as: LeadStatus,
    at: datetime,
) -> int:
    """Close as ``close_as`` at ``at`` the subscription's open leads linked to one of the
    deal's contacts and created at or before ``at``; how many were closed now (each releases
    its rep's load once; a lead closed before is left as it is)."""
    lead_ids = store.webhooks.open_leads_of_contacts(
        store.session, subscription_id, hubspot_contact_ids, created_by=at
    )
    return sum(store.leads.close(store.session, lead, status=close_as, at=at) for lead in lead_ids)


def apply_pending_deal_events(
    client: HubSpotClient,
    session_factory: SessionFactory,
    subscription_id: uuid.UUID,
    *,
    now: datetime | None = None,
    batch_size: int = BATCH_READ_SIZE,
) -> DealEventRun:
    """Settle the subscription's pending deal events, a batch at a time; a HubSpot failure
    ends the run with ``error`` set and the unread batches still pending."""
    if not 1 <= batch_size <= BATCH_READ_SIZE:
        raise ValueError(f"batch_size must be between 1 and {BATCH_READ_SIZE}")
    run = DealEventRun()
    after_id = 0
    while True:
        with session_factory() as session:
            rows = CrmStore(session).webhooks.pending_deal_events(
                session, subscription_id, after_id=after_id, limit=batch_size
            )
            events = [
                PendingDealEvent(
                    row_id=row.id,
                    event_id=row.eventId,
                    deal_id=str(row.objectId),
                    property_name=row.propertyName,
                    value=row.propertyValue,
                    occurred_at=row.occurredAt,
                )
                for row in rows
            ]
        if not events:
            return run
        try:
            reads = read_deals_of(client, events)
        except HubSpotError as exc:
            run.error = str(exc)
            return run
        with session_factory() as session:
            settle_deal_events(
                CrmStore(session), subscription_id, events, reads, now or datetime.now(UTC), run
            )
        run.batches += 1
        after_id = events[-1].row_id


def read_deals_of(client: HubSpotClient, events: Sequence[PendingDealEvent]) -> DealReads:
    """HubSpot's reads for one batch (≤ 100 deals): the stages its events do not carry, then
    the contacts of the deals a stage closes."""
    unread = sorted({e.deal_id for e in events if e.needs_deal_read})
    stages: dict[str, str | None] = {}
    if unread:
        stages = {
            deal: properties.get(STAGE_PROPERTY)
            for deal, properties in client.read_deals(unread, (STAGE_PROPERTY,)).items()
        }
    closing = sorted(
        {e.deal_id for e in events if lead_status_of_stage(e.stage or stages.get(e.deal_id))}
    )
    contacts = client.read_deal_contacts(closing) if closing else {}
    return DealReads(stages=stages, contacts=contacts)


def settle_deal_events(
    store: CrmStore,
    subscription_id: uuid.UUID,
    events: Sequence[PendingDealEvent],
    reads: DealReads,
    now: datetime,
    run: DealEventRun,
) -> None:
    """Apply or ignore each event still pending, in the order they happened, within the
    caller's one transaction."""
    session = store.session
    locked = store.webhooks.lock_pending(session, (e.row_id for e in events))
    superseded = store.webhooks.superseded(session, locked)
    for event in sorted(events, key=lambda e: (e.occurred_at, e.event_id)):
        if event.row_id not in locked:
            continue
        stage = event.stage or reads.stages.get(event.deal_id)
        plan = plan_deal_event(
            event.property_name,
            stage,
            superseded=event.row_id in superseded,
            deal_found=not event.needs_deal_read or event.deal_id in reads.stages,
        )
        if plan.close_as is not None:
            contacts = reads.contacts.get(event.deal_id, [])
            closed = close_deal_leads(
                store, subscription_id, contacts, plan.close_as, event.occurred_at
            )
            run.leads_closed[plan.close_as] += closed
            plan = closing_outcome(plan.close_as, len(contacts), closed)
        status = WebhookEventStatus.APPLIED if plan.ignored is None else WebhookEventStatus.IGNORED
        store.webhooks.settle(
            session,
            event.row_id,
            status,
            plan.outcome,
            applied_at=now if plan.ignored is None else None,
        )
        run.statuses[status] += 1
        if plan.ignored is not None:
            run.ignored[plan.ignored] += 1
