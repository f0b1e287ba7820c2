"""Retrieving a lead's contact from its sender after the lead was created (docs/senders.md,
"Meta"): how often and how long to try, and the answers read as the lead's contact columns.

Pure: no HTTP, no database.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from morpheus_pipelines.crm.rules.meta_webhooks import LeadAnswers
from morpheus_pipelines.platform.text.contact_data import (
    InvalidContactData,
    normalise_email_address,
    normalise_phone_number,
)

# Minutes between attempts double from one to an hour: eight attempts span about two hours
# (1+2+4+8+16+32+60), longer than the Graph API's usual incidents, within the hours a rep
# would still call a lead.
MAX_ATTEMPTS = 8
FIRST_RETRY = timedelta(minutes=1)
LONGEST_RETRY = timedelta(hours=1)


def next_attempt_at(attempts_so_far: int, now: datetime) -> datetime | None:
    """When to try again after ``attempts_so_far`` failed attempts (this one included), or
    ``None`` when that was the last."""
    if attempts_so_far >= MAX_ATTEMPTS:
        return None
    return now + min(FIRST_RETRY * 2 ** (attempts_so_far - 1), LONGEST_RETRY)


def contact_columns(answers: LeadAnswers, region: str | None) -> dict[str, Any]:
    """The lead's contact columns from its answers, normalised as intake stores them. An
    answer that does not read as an email or a phone fills nothing and is kept, as given, with
    the other answers (recorded, not lost)."""
    other: dict[str, Any] = dict(answers.other)
    email = phone = extension = None
    try:
        email = normalise_email_address(answers.email)
    except InvalidContactData:
        other["email"] = [answers.email]
    try:
        parsed = normalise_phone_number(answers.phone, region)
    except InvalidContactData:
        other["phone_number"] = [answers.phone]
    else:
        phone, extension = (parsed.e164, parsed.extension) if parsed else (None, None)
    return {
        "email": email,
        "phone": phone,
        "phoneExtension": extension,
        "firstName": answers.first_name,
        "lastName": answers.last_name,
        "answers": other,
    }
