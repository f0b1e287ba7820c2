"""What lead intake decides without the database (docs/leads.md): the idempotency key, the
request fingerprint, contact normalisation, and which routing rule wins."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from morpheus_pipelines.crm.rules.lead_status import EnrichmentStatus
from morpheus_pipelines.platform.text.contact_data import (
    InvalidContactData,
    Phone,
    normalise_email_address,
    normalise_phone_number,
)


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


def normalise_email(value: str | None, field: str = "contact.email") -> str | None:
    """The stored form of an address (:mod:`~morpheus_pipelines.platform.text.contact_data`),
    ``None`` for empty; :class:`InvalidContact` naming ``field`` when it is not one."""
    try:
        return normalise_email_address(value)
    except InvalidContactData as refused:
        raise InvalidContact(field, f"{field}: {refused}") from None


def normalise_phone(
    value: str | None, default_region: str | None = None, field: str = "contact.phone"
) -> Phone | None:
    """The number in E.164 with its extension apart, ``None`` for empty; a national number is
    read in ``default_region`` (the subscription's); :class:`InvalidContact` naming ``field``
    when it cannot be read or is not a valid number."""
    try:
        return normalise_phone_number(value, default_region)
    except InvalidContactData as refused:
        raise InvalidContact(field, f"{field}: {refused}") from None


def needs_region(value: str | None) -> bool:
    """Whether reading ``value`` depends on a default region: a number written without its
    country code. Lets a caller look the region up only for those."""
    text = (value or "").strip()
    return bool(text) and not text.startswith(("+", "00"))


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
