"""The first-touch SLA (docs/ownership.md, "First-touch SLA"): every open lead whose pool has
an SLA must be touched by its owner (an outbound call, email or message by that person) by
its deadline. A sweep records the touches, and re-routes each lead that is past its deadline
untouched once, to the next assignable rep of its pool (never the same rep, never a lead
whose owner a person chose), with its HubSpot contact owner queued in the same transaction.
Chunked: one transaction per chunk of ≤ 100 leads."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from morpheus_pipelines.crm.rules.first_touch import SlaLine, sla_lines
from morpheus_pipelines.crm.rules.hubspot_outbox import OutboxKind, lead_owner_intent
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.observability.events import log_event

CHUNK = 100
# The SLA report's window: leads whose deadline fell in the last seven days.
REPORT_DAYS = 7


@dataclass
class FirstTouchRun:
    """What one sweep did, and the report after it."""

    counts: Counter[str] = field(default_factory=Counter)
    report: list[SlaLine] = field(default_factory=list)
    window: str = ""


def sweep_first_touch(
    session_factory: SessionFactory, *, now: datetime | None = None
) -> FirstTouchRun:
    """Record the touches, then the misses with their one re-route; then read the report."""
    now = now or datetime.now(UTC)
    run = FirstTouchRun()
    with session_factory() as session:
        met, late = CrmStore(session).first_touch.record_touches(session, now=now)
    run.counts.update({"met": met, "touched_late": late})
    while True:
        with session_factory() as session:
            store = CrmStore(session)
            missed = store.first_touch.take_missed(session, now=now, limit=CHUNK)
            for lead in missed:
                run.counts[_record_miss(store, lead, now)] += 1
        if len(missed) < CHUNK:
            break
    since = now - timedelta(days=REPORT_DAYS)
    with session_factory() as session:
        rows = CrmStore(session).first_touch.sla_rows(session, since=since, until=now)
    run.report = sla_lines(
        (
            row.pool,
            None if row.sales_rep_id is None else f"rep {row.sales_rep_id}",
            row.due,
            row.met,
            row.missed,
        )
        for row in rows
    )
    run.window = f"{since:%Y-%m-%d %H:%M} – {now:%Y-%m-%d %H:%M} UTC"
    return run


def _record_miss(store: CrmStore, lead, now: datetime) -> str:
    """The miss, and the re-route when allowed and someone else is assignable; the outcome."""
    session = store.session
    new_owner = None
    if not lead.owner_set_by_hand:
        new_owner = store.first_touch.claim_other_owner(session, lead)
    store.first_touch.record_miss(session, lead, now=now, new_owner=new_owner)
    if new_owner is not None:
        store.outbox.enqueue(
            session,
            lead.subscription_id,
            OutboxKind.CONTACT_OWNER,
            lead_owner_intent(lead.lead_id, new_owner.hubspot_owner_id),
            {"hubspot_owner_id": new_owner.hubspot_owner_id},
            lead_id=lead.lead_id,
        )
    outcome = (
        "missed_set_by_hand"
        if lead.owner_set_by_hand
        else "missed_rerouted"
        if new_owner is not None
        else "missed_nobody_else_assignable"
    )
    log_event(
        "first_touch_missed",
        level=logging.WARNING,
        lead_id=str(lead.lead_id),
        subscription_id=str(lead.subscription_id),
        missed_by_sales_rep_id=lead.owner_sales_rep_id,
        new_sales_rep_id=None if new_owner is None else new_owner.sales_rep_id,
        outcome=outcome,
    )
    return outcome


def first_touch_due(session_factory: SessionFactory, *, now: datetime | None = None) -> bool:
    """Whether a sweep has anything to do: a pending lead that is past due or touched."""
    now = now or datetime.now(UTC)
    with session_factory() as session:
        return CrmStore(session).first_touch.any_due(session, now=now)
