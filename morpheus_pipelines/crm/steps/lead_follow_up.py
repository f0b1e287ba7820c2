"""The slow path after a lead is created (docs/leads.md, "After creation"): enrichment,
scores and duplicates. Intake never waits for any of it; only a duplicate of an earlier open
lead changes who owns the lead (to that lead's owner). Chunked: one transaction per chunk of
≤ 100 leads."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from morpheus_pipelines.crm.models import Contact
from morpheus_pipelines.crm.repositories.lead_follow_up import EarlierLead, LeadToFollow
from morpheus_pipelines.crm.rules.hubspot_outbox import OutboxKind, lead_owner_intent
from morpheus_pipelines.crm.rules.lead_intake import lead_score
from morpheus_pipelines.crm.rules.lead_status import DuplicateMatch, EnrichmentStatus
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.domain_intelligence import (
    DomainIntelligenceClient,
    DomainIntelligenceError,
)
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.text.email_domain_class import is_personal_domain
from morpheus_pipelines.platform.text.normalise import email_domain

CHUNK = 100


def enrich_leads(
    session_factory: SessionFactory, client: DomainIntelligenceClient | None
) -> Counter[str]:
    """Every lead not yet enriched (or last found ``unavailable``): its email domain asked of
    Domain Intelligence. No service configured, or a batch that failed: ``unavailable``, asked
    again next run. Personal and missing emails are not sent."""
    counts: Counter[str] = Counter()
    started = datetime.now(UTC)
    while True:
        with session_factory() as session:
            store = CrmStore(session)
            leads = store.lead_follow_up.awaiting_enrichment(
                session, limit=CHUNK, tried_before=started
            )
            if not leads:
                return counts
            rows = _enrichment_rows(leads, client)
            store.lead_follow_up.save_enrichments(session, rows)
        counts.update(row["status"].value for row in rows)


def _enrichment_rows(
    leads: list[LeadToFollow], client: DomainIntelligenceClient | None
) -> list[dict]:
    rows, asked = [], {}
    for lead in leads:
        domain = email_domain(lead.email) if lead.email else None
        row = {
            "leadId": lead.lead_id,
            "emailDomain": domain,
            "status": EnrichmentStatus.NO_EMAIL,
            "companyName": None,
            "officialWebsite": None,
            "industry": None,
            "employeeCount": None,
            "country": None,
        }
        if domain and is_personal_domain(domain):
            row["status"] = EnrichmentStatus.PERSONAL_EMAIL
        elif domain:
            row["status"] = EnrichmentStatus.UNAVAILABLE
            asked[str(lead.lead_id)] = row
        rows.append(row)
    if asked and client is not None:
        try:
            results = client.enrich_batch(
                [
                    {"tenant_id": key, "name": None, "email_domain": row["emailDomain"]}
                    for key, row in asked.items()
                ]
            )
        except DomainIntelligenceError:
            results = []  # stays "unavailable": asked again next run
        for result in results:
            row = asked.get(result.get("tenant_id"))
            if row is None:
                continue
            found = result.get("company_name") or result.get("official_website")
            row.update(
                status=EnrichmentStatus.ENRICHED if found else EnrichmentStatus.NOT_FOUND,
                companyName=result.get("company_name"),
                officialWebsite=result.get("official_website"),
                industry=result.get("industry"),
                employeeCount=result.get("employee_count"),
                country=result.get("country"),
            )
    return rows


def score_leads(session_factory: SessionFactory) -> Counter[str]:
    """Every enriched lead without a score or scored before its latest enrichment."""
    counts: Counter[str] = Counter()
    while True:
        with session_factory() as session:
            store = CrmStore(session)
            pending = store.lead_follow_up.awaiting_score(session, limit=CHUNK)
            if not pending:
                return counts
            rows = []
            for lead_id, phone, campaigns, status, employees in pending:
                score, reasons = lead_score(
                    enrichment_status=status,
                    employee_count=employees,
                    has_phone=phone is not None,
                    campaigns=campaigns or 0,
                )
                rows.append({"leadId": lead_id, "score": score, "reasons": reasons})
                counts["scored"] += 1
            store.lead_follow_up.save_scores(session, rows)


def find_duplicates(session_factory: SessionFactory) -> Counter[str]:
    """Every lead not yet checked, matched against the subscription's earlier open leads
    (normalised email or E.164 phone) and the CRM's contacts (``ContactRepository.
    find_existing``: email, then phone). A duplicate of an earlier open lead takes that lead's
    owner (through the outbox to HubSpot, the load charge moved between the reps) and its form
    joins that lead's timeline; every match is recorded, none is dropped."""
    counts: Counter[str] = Counter()
    while True:
        with session_factory() as session:
            store = CrmStore(session)
            leads = store.lead_follow_up.awaiting_duplicate_check(session, limit=CHUNK)
            if not leads:
                return counts
            rows = []
            for lead in leads:
                contact = store.contacts.find_existing(
                    session, email=lead.email, phone=lead.phone, hubspot_contact_id=None
                )
                earlier = store.lead_follow_up.earlier_open_lead(session, lead.lead_id)
                if earlier is not None:
                    _join_earlier_lead(store, lead, earlier)
                    counts["duplicate_of_open_lead"] += 1
                matched = (
                    DuplicateMatch(earlier.matched_on)
                    if earlier is not None
                    else _matched_on(lead, contact)
                )
                rows.append(
                    {
                        "leadId": lead.lead_id,
                        "contactId": contact.id if contact is not None else None,
                        "duplicateOfLeadId": earlier.lead_id if earlier is not None else None,
                        "matchedOn": matched,
                    }
                )
                counts[matched.value] += 1
            store.lead_follow_up.save_duplicates(session, rows)


def _join_earlier_lead(store: CrmStore, lead: LeadToFollow, earlier: EarlierLead) -> None:
    """One owner and one timeline for one person: the duplicate takes the earlier lead's
    owner (HubSpot told through the outbox, in this transaction) and its form is shown on the
    earlier lead's timeline. An earlier lead still waiting for an owner gives none."""
    session = store.session
    if earlier.owner_hubspot_owner_id is not None:
        handed = store.lead_follow_up.take_earlier_owner(session, lead.lead_id, earlier.lead_id)
        if handed.changed:
            store.outbox.enqueue(
                session,
                earlier.subscription_id,
                OutboxKind.CONTACT_OWNER,
                lead_owner_intent(lead.lead_id, earlier.owner_hubspot_owner_id),
                {"hubspot_owner_id": earlier.owner_hubspot_owner_id},
                lead_id=lead.lead_id,
            )
            log_event(
                "lead_duplicate_owner_kept",
                lead_id=str(lead.lead_id),
                duplicate_of=str(earlier.lead_id),
                previous_sales_rep_id=handed.previous_sales_rep_id,
                sales_rep_id=earlier.owner_sales_rep_id,
            )
    store.lead_follow_up.show_form_on(session, lead.lead_id, earlier.lead_id)


def _matched_on(lead: LeadToFollow, contact: Contact | None) -> DuplicateMatch:
    if contact is None:
        return DuplicateMatch.NONE
    if lead.email and contact.email == lead.email:
        return DuplicateMatch.EMAIL
    return DuplicateMatch.PHONE


def backlog(session_factory: SessionFactory) -> dict:
    with session_factory() as session:
        return CrmStore(session).lead_follow_up.backlog(session)
