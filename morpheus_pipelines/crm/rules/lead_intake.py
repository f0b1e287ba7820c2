"""What lead intake decides without the database (docs/leads.md): the idempotency key, the
request fingerprint, contact normalisation, and which routing rule wins."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from morpheus_pipelines.crm.rules.lead_status import EnrichmentStatus

_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]{2,}$")
_PHONE_NOISE = re.compile(r"[\s\-().]")
_E164 = re.compile(r"^\+[1-9][0-9]{6,14}$")


class InvalidContact(ValueError):
    """A contact field that cannot be stored; ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def idempotency_key(source: str, source_submission_id: str, header: str | None = None) -> str:
    """``<source>:<source_submission_id>`` unless the caller sent an ``Idempotency-Key``."""
    return header.strip() if header and header.strip() else f"{source}:{source_submission_id}"


def request_fingerprint(body: Mapping[str, Any]) -> str:
    """The same submission gives the same fingerprint whatever the key order or spacing; a
    different body under the same key is the caller's mistake (422)."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def normalise_email(value: str | None) -> str | None:
    """Trimmed and lower-cased; ``None`` for empty; :class:`InvalidContact` when it is not an
    address (``Ana@Example.COM `` → ``ana@example.com``)."""
    if value is None or not value.strip():
        return None
    email = value.strip().lower()
    if email.startswith("mailto:"):
        email = email[len("mailto:") :]
    if not _EMAIL.match(email):
        raise InvalidContact("contact.email", "contact.email is not an email address")
    return email


def normalise_phone(value: str | None) -> str | None:
    """E.164: spaces, dashes, dots and brackets dropped, a leading ``00`` read as ``+``
    (``(+65) 9123-4567`` → ``+6591234567``); a number without a country code is refused
    rather than guessed."""
    if value is None or not value.strip():
        return None
    phone = _PHONE_NOISE.sub("", value.strip())
    if phone.startswith("00"):
        phone = "+" + phone[2:]
    if not _E164.match(phone):
        raise InvalidContact(
            "contact.phone",
            "contact.phone must be an international number with its country code (+65...)",
        )
    return phone


@dataclass(frozen=True)
class PoolRule:
    """``routing_pool_rules``: a source and/or a campaign id mapped to a pool."""

    rule_id: int
    pool_id: int
    source: str | None
    campaign_id: str | None
    priority: int = 0


def choose_pool(
    rules: Sequence[PoolRule], source: str, campaign_ids: Iterable[str], default_pool: int | None
) -> tuple[int | None, int | None]:
    """``(pool id, rule id)`` of the most specific matching rule: source and campaign beats
    campaign alone beats source alone; then the higher ``priority``, then the lower rule id
    (stable). No match: the subscription's default pool and no rule. Unknown campaign ids
    simply match nothing."""
    campaigns = set(campaign_ids)
    best: tuple[tuple[int, int, int], PoolRule] | None = None
    for rule in rules:
        if rule.source is not None and rule.source != source:
            continue
        if rule.campaign_id is not None and rule.campaign_id not in campaigns:
            continue
        if rule.source is None and rule.campaign_id is None:
            continue  # a rule must say something; the default pool is the catch-all
        specificity = (2 if rule.campaign_id is not None else 0) + (
            1 if rule.source is not None else 0
        )
        rank = (specificity, rule.priority, -rule.rule_id)
        if best is None or rank > best[0]:
            best = (rank, rule)
    if best is None:
        return default_pool, None
    return best[1].pool_id, best[1].rule_id


def lead_score(
    *, enrichment_status: str, employee_count: int | None, has_phone: bool, campaigns: int
) -> tuple[int, list[str]]:
    """A first, explainable score (0–100) for the follow-up order: every point has a reason a
    sales manager can read. The owner never depends on it."""
    score, reasons = 0, []
    if enrichment_status == EnrichmentStatus.ENRICHED:
        score, reasons = (
            score + 40,
            [*reasons, "company email domain known to Domain Intelligence (+40)"],
        )
    elif enrichment_status == EnrichmentStatus.NOT_FOUND:
        score, reasons = score + 20, [*reasons, "company email domain (+20)"]
    if employee_count is not None and employee_count >= 50:
        score, reasons = score + 25, [*reasons, "50 or more employees (+25)"]
    if has_phone:
        score, reasons = score + 20, [*reasons, "reachable by phone (+20)"]
    if campaigns:
        score, reasons = score + 15, [*reasons, "came from a campaign (+15)"]
    return min(score, 100), reasons
