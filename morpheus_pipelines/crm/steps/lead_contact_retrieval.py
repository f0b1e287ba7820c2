"""Lead contacts kept by their sender, fetched after the lead was created (docs/senders.md,
"Meta"): a Meta Lead Ads webhook names the lead; its answers are read from the Graph API here,
retried with back-off, and fill the lead's empty contact fields. The owner chosen when the lead
arrived is never changed: only the contact is.

The HubSpot contact of such a lead waits for this (its outbox row is postponed while the
retrieval is pending), so HubSpot gets the person's email and phone in its first write.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from morpheus_pipelines.crm.repositories.lead_contact_retrievals import RetrievalBacklog
from morpheus_pipelines.crm.rules.contact_retrieval import contact_columns, next_attempt_at
from morpheus_pipelines.crm.rules.meta_webhooks import lead_answers
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.meta_graph import GraphError
from morpheus_pipelines.platform.observability.events import log_event

BATCH = 100


class LeadReader(Protocol):
    def lead(self, leadgen_id: str) -> dict[str, Any]: ...


@dataclass
class RetrievalReport:
    completed: int = 0
    retried: int = 0
    failed: int = 0
    errors: Counter[str] = field(default_factory=Counter)

    def as_metadata(self) -> dict[str, Any]:
        return {
            "completed": self.completed,
            "retried": self.retried,
            "failed": self.failed,
            "errors": dict(self.errors.most_common(5)),
        }


def retrieve_lead_contacts(
    session_factory: SessionFactory,
    reader: LeadReader | None,
    subscription_id: uuid.UUID,
    *,
    now: datetime | None = None,
) -> RetrievalReport:
    """Every due retrieval of the subscription, a batch per transaction (the rows are locked
    while their lead is read: two runs never read one lead at once). Without a reader (the
    Graph API is not configured) nothing is attempted and the rows stay due."""
    report = RetrievalReport()
    if reader is None:
        return report
    while True:
        moment = now or datetime.now(UTC)
        with session_factory() as session:
            store = CrmStore(session)
            due = store.contact_retrievals.claim_due(
                session, subscription_id, now=moment, limit=BATCH
            )
            if not due:
                return report
            region = store.subscriptions.default_region(session, subscription_id)
            for retrieval in due:
                _retrieve(store, reader, retrieval, region, moment, report)
        if len(due) < BATCH:
            return report


def _retrieve(
    store: CrmStore,
    reader: LeadReader,
    retrieval: Any,
    region: str | None,
    now: datetime,
    report: RetrievalReport,
) -> None:
    session = store.session
    try:
        document = reader.lead(retrieval.externalId)
    except GraphError as exc:
        attempts = retrieval.attempts + 1
        retry_at = next_attempt_at(attempts, now) if exc.transient else None
        store.contact_retrievals.settle(
            session, retrieval.leadId, now=now, retry_at=retry_at, error=str(exc)
        )
        report.errors[exc.code or ("transient" if exc.transient else "refused")] += 1
        if retry_at is None:
            report.failed += 1
            log_event(
                "lead_contact_retrieval_failed",
                level=logging.WARNING,
                lead_id=str(retrieval.leadId),
                attempts=attempts,
                error=str(exc),
            )
        else:
            report.retried += 1
        return
    columns = contact_columns(lead_answers(document.get("field_data")), region)
    store.leads.complete_contact(session, retrieval.leadId, columns)
    store.contact_retrievals.settle(session, retrieval.leadId, now=now, completed=True)
    report.completed += 1
    log_event(
        "lead_contact_retrieved",
        lead_id=str(retrieval.leadId),
        contact_email=columns["email"],
        has_phone=columns["phone"] is not None,
    )


def retrieval_backlog(
    session_factory: SessionFactory, subscription_id: uuid.UUID, *, now: datetime | None = None
) -> RetrievalBacklog:
    """How many retrievals wait, are due, and failed for good."""
    with session_factory() as session:
        return CrmStore.contact_retrievals.backlog(
            session, subscription_id, now=now or datetime.now(UTC)
        )
