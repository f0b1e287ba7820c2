"""A lead from a sender that cannot post our JSON (an ad platform's webhook), made exactly as
``POST /v1/leads`` makes one: routed, owned and stored in one transaction before the answer
(docs/senders.md).

The sender's own lead id is the submission id, and the fingerprint covers only the source and
that id: a platform redelivers the same lead with a different envelope (another delivery time,
a retry counter), which is the same lead, never a key reused for something else.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from morpheus_pipelines.crm.api.dependencies import Answer
from morpheus_pipelines.crm.api.directory import OwnerDirectory
from morpheus_pipelines.crm.api.leads import create_lead
from morpheus_pipelines.crm.api.schemas import ContactIn, LeadIn
from morpheus_pipelines.crm.rules.lead_intake import idempotency_key, request_fingerprint
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.platform.text.contact_data import (
    InvalidContactData,
    Phone,
    normalise_email_address,
    normalise_phone_number,
)


def sender_lead(
    session: Session,
    directory: OwnerDirectory,
    subscription_id: uuid.UUID,
    *,
    source: str,
    submission_id: str,
    contact: ContactIn,
    campaign_ids: list[str],
    payload: dict[str, Any],
    now: datetime,
) -> Answer:
    """``201`` a new lead with its owner, ``200`` the lead this delivery already made."""
    lead = LeadIn(
        subscription_id=subscription_id,
        source=source,
        source_submission_id=submission_id,
        campaign_ids=campaign_ids,
        contact=contact,
        payload=payload,
    )
    return create_lead(session, directory, lead, _identity(source, submission_id), now=now)


def sender_test_lead(
    session: Session,
    subscription_id: uuid.UUID,
    *,
    source: str,
    submission_id: str,
    contact: ContactIn,
    payload: dict[str, Any],
    now: datetime,
) -> Answer:
    """A sender's test delivery, stored as a closed test lead that no rep ever gets."""
    key = idempotency_key(source, submission_id)
    phone = normalise_phone_number(contact.phone)
    lead_id = uuid.uuid4()
    answer = {
        "lead_id": str(lead_id),
        "owner": None,
        "pool": None,
        "owner_is_fallback": False,
        "owner_state": "waiting",
        "is_test": True,
        "created_at": now.isoformat(),
    }
    row = {
        "id": lead_id,
        "subscriptionId": subscription_id,
        "idempotencyKey": key,
        "requestFingerprint": request_fingerprint(_identity(source, submission_id)),
        "source": source,
        "sourceSubmissionId": submission_id,
        "campaignIds": [],
        "email": contact.email,
        # The contact's phone was normalised already (``sender_contact``); read again only to
        # keep its extension in its own column, as for every other lead.
        "phone": phone.e164 if phone else None,
        "phoneExtension": phone.extension if phone else None,
        "firstName": contact.first_name,
        "lastName": contact.last_name,
        "payload": payload,
        "createdAt": now,
        "response": answer,
    }
    store = CrmStore(session)
    stored = store.leads.insert_test_lead(session, row)
    if stored is not None:
        return Answer(201, stored)
    earlier = store.leads.get_by_key(session, subscription_id, key)
    return Answer(200, dict(earlier.response) if earlier else answer)


def sender_contact(
    session: Session,
    subscription_id: uuid.UUID,
    *,
    email: str | None,
    phone: str | None,
    first_name: str | None,
    last_name: str | None,
) -> tuple[ContactIn, dict[str, str]]:
    """The contact a sender delivered, normalised as every path stores it, and the values
    that could not be (field → as given). A platform's lead is never refused for one odd
    answer: it would be lost with it. The lead is stored without that field and the value is
    kept in its payload."""
    rejected: dict[str, str] = {}
    try:
        stored_email = normalise_email_address(email)
    except InvalidContactData:
        stored_email, rejected["email"] = None, str(email)
    region = CrmStore.subscriptions.default_region(session, subscription_id) if phone else None
    try:
        stored_phone = normalise_phone_number(phone, region)
    except InvalidContactData:
        stored_phone, rejected["phone"] = None, str(phone)
    contact = ContactIn(
        email=stored_email,
        phone=None if stored_phone is None else _with_extension(stored_phone),
        first_name=(first_name or None) and first_name[:200],
        last_name=(last_name or None) and last_name[:200],
    )
    return contact, rejected


def _with_extension(phone: Phone) -> str:
    return phone.e164 if phone.extension is None else f"{phone.e164} ext. {phone.extension}"


def _identity(source: str, submission_id: str) -> dict[str, Any]:
    return {"source": source, "source_submission_id": submission_id}
