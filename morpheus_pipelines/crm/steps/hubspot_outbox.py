"""Draining the HubSpot outbox (docs/hubspot-outbox.md): the due rows of each kind, in batches
of at most 100, each batch one HubSpot batch call, each answer settled row by row.

Every write is an upsert keyed by a unique property (the contact's email, else its
``morpheus_lead_key``; a task's or a call's ``morpheus_intent_key``), and list changes add and
remove named records, so a batch retried after an answer that never arrived writes nothing
twice. Rows are read from their subjects when they are sent, not when they were queued: a
lead whose owner changed before its contact was written is written with the new owner.

What happens on failure:

* HubSpot refused some inputs (a 207, a 400): those rows count a failed attempt with
  HubSpot's reason and wait their back-off; the rest of the batch is settled as done.
* HubSpot is unavailable (429, 5xx, timeouts, after the client's own retries): the batch's
  rows count a failed attempt and the drain stops, leaving the other rows untouched; HubSpot
  is not asked again until the next drain.
* A row whose subject has no HubSpot id yet (a task for a contact whose lead's contact is not
  written) waits a minute without counting an attempt.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from morpheus_pipelines.crm.reports.hubspot_outbox import outbox_note
from morpheus_pipelines.crm.repositories.hubspot_outbox import OutboxEntry
from morpheus_pipelines.crm.rules.hubspot_outbox import (
    BATCH_SIZE,
    DRAIN_ORDER,
    OutboxBacklog,
    OutboxKind,
)
from morpheus_pipelines.crm.steps.hubspot_outbox_senders import OutboxSenders, Sent, Unavailable
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import (
    HubSpotClient,
    HubSpotError,
)
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.report_notes import OperationsNote

WAIT_FOR_DEPENDENCY = timedelta(minutes=1)


@dataclass
class DrainReport:
    """What one drain did, by kind: rows written, failed, postponed; whether it stopped
    because HubSpot was unavailable."""

    written: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    postponed: Counter[str] = field(default_factory=Counter)
    dead: int = 0
    requests: int = 0
    stopped: str | None = None

    def as_metadata(self) -> dict[str, Any]:
        return {
            "written": sum(self.written.values()),
            "failed": sum(self.failed.values()),
            "postponed": sum(self.postponed.values()),
            "dead_now": self.dead,
            "hubspot_requests": self.requests,
            "written_by_kind": dict(self.written),
            "stopped": self.stopped,
        }


def drain_outbox(
    session_factory: SessionFactory,
    client: HubSpotClient,
    subscription_id: uuid.UUID,
    *,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    max_rows: int = 10_000,
) -> DrainReport:
    """Send up to ``max_rows`` due rows, kind by kind in ``DRAIN_ORDER``; each batch is
    claimed, sent and settled in its own transactions."""
    report = DrainReport()
    try:
        _prepare_portal(session_factory, client, subscription_id)
    except HubSpotError as exc:
        # Nothing can be keyed without the properties: stop before claiming a row.
        report.stopped = f"the portal's key properties could not be ensured: {exc}"
        log_event("hubspot_outbox_unprepared", level=logging.ERROR, problem=str(exc))
        return report
    senders = OutboxSenders(client)
    budget = max_rows
    for kind in DRAIN_ORDER:
        while budget > 0:
            with session_factory() as session:
                store = CrmStore(session)
                entries = store.outbox.claim_due(
                    session, subscription_id, kind, now=now(), limit=min(BATCH_SIZE, budget)
                )
                subjects = _subjects(store, kind, entries)
            if not entries:
                break
            budget -= len(entries)
            requests_before = client.stats.requests
            try:
                sent = senders.send(kind, entries, subjects)
            except Unavailable as exc:
                report.requests += client.stats.requests - requests_before
                _stop(session_factory, report, kind, entries, exc, now())
                return report
            report.requests += client.stats.requests - requests_before
            _settle_batch(
                session_factory, report, subscription_id, kind, entries, subjects, sent, now()
            )
    return report


def _stop(
    session_factory: SessionFactory,
    report: DrainReport,
    kind: OutboxKind,
    entries: Sequence[OutboxEntry],
    exc: Unavailable,
    now: datetime,
) -> None:
    """HubSpot is unavailable: the batch counts a failed attempt, the drain stops."""
    with session_factory() as session:
        reasons = {entry.id: str(exc) for entry in entries}
        report.dead += CrmStore(session).outbox.mark_failed(session, entries, reasons, now=now)
    report.failed[kind.value] += len(entries)
    report.stopped = str(exc)
    log_event(
        "hubspot_outbox_unavailable",
        level=logging.WARNING,
        kind=kind.value,
        rows=len(entries),
        problem=str(exc),
    )


def _settle_batch(
    session_factory: SessionFactory,
    report: DrainReport,
    subscription_id: uuid.UUID,
    kind: OutboxKind,
    entries: Sequence[OutboxEntry],
    subjects: dict[int, dict[str, Any]],
    sent: Sent,
    now: datetime,
) -> None:
    """One transaction: the ids HubSpot gave, the rows done, failed and waiting."""
    with session_factory() as session:
        store = CrmStore(session)
        _record_answers(store, kind, entries, subjects, sent, subscription_id)
        store.outbox.mark_done(session, sent.done, now=now)
        failed = [entry for entry in entries if entry.id in sent.failed]
        report.dead += store.outbox.mark_failed(session, failed, sent.failed, now=now)
        store.outbox.postpone(session, sent.waiting, until=now + WAIT_FOR_DEPENDENCY)
    report.written[kind.value] += len(sent.done)
    report.failed[kind.value] += len(sent.failed)
    report.postponed[kind.value] += len(sent.waiting)


def _prepare_portal(
    session_factory: SessionFactory, client: HubSpotClient, subscription_id: uuid.UUID
) -> None:
    """Create the unique properties the upserts are keyed by, once per subscription (the
    configs row says it was done; deleting it makes the next drain check again)."""
    key = f"hubspot_key_properties:{subscription_id}"
    with session_factory() as session:
        if CrmStore(session).configs.get_value(session, key):
            return
    created = client.ensure_unique_key_properties()
    with session_factory() as session:
        CrmStore(session).configs.set_value(
            session, key, datetime.now(UTC).isoformat(), subscription_id
        )
    log_event("hubspot_key_properties_ensured", created=sorted(k for k, v in created.items() if v))


def outbox_backlog(
    session_factory: SessionFactory, subscription_id: uuid.UUID, *, now: datetime | None = None
) -> OutboxBacklog:
    """The outbox at a glance: pending, due and dead rows, and rows done in the last day."""
    moment = now or datetime.now(UTC)
    with session_factory() as session:
        return CrmStore(session).outbox.backlog(
            session, subscription_id, now=moment, since=moment - timedelta(days=1)
        )


def outbox_operations_note(
    session_factory: SessionFactory, subscription_id: uuid.UUID, now: datetime
) -> OperationsNote:
    """The Daily Summary's note on the outbox: dead rows (an error), rows waiting too long
    (a warning), or what was written in the last day."""
    backlog = outbox_backlog(session_factory, subscription_id, now=now)
    return outbox_note(
        backlog.pending,
        backlog.dead,
        backlog.done_since,
        backlog.oldest_pending_at,
        backlog.dead_reasons,
        now,
    )


__all__ = [
    "DrainReport",
    "OutboxBacklog",
    "drain_outbox",
    "outbox_backlog",
    "outbox_operations_note",
]


# -- what each kind sends ---------------------------------------------------------------------


def _subjects(
    store: CrmStore, kind: OutboxKind, entries: Sequence[OutboxEntry]
) -> dict[int, dict[str, Any]]:
    """The current state of each entry's subject (the lead, task, activity or rep), by row."""
    if not entries:
        return {}
    return store.outbox.subjects(store.session, kind, entries)


def _record_answers(
    store: CrmStore,
    kind: OutboxKind,
    entries: Sequence[OutboxEntry],
    subjects: dict[int, dict[str, Any]],
    sent: Sent,
    subscription_id: uuid.UUID,
) -> None:
    """Store the ids HubSpot gave in the rows they belong to."""
    answers = [
        (entry, subjects[entry.id], sent.done[entry.id])
        for entry in entries
        if sent.done.get(entry.id) is not None
    ]
    store.outbox.record_answers(store.session, subscription_id, kind, answers)
