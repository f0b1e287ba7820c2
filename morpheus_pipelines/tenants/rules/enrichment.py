"""What Domain Intelligence is asked about a tenant, and when an earlier answer still holds
(docs/pipeline.md, "Enrichment reuse").

The service is asked about a candidate's id, its cleaned name and its email domain, the domain
only when it is corporate. An answer is reused while the hash of exactly that question (the
candidate's input fingerprint, after the domain lists' version) is unchanged, the answer taught
something (``enriched`` or ``not_found``) and it is younger than the maximum age. The step
reads the stored answers; these functions decide what they are worth.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import pandas as pd

from morpheus_pipelines.platform.text.columns import (
    email_domains,
    map_unique_values,
    normalise_identifiers,
)
from morpheus_pipelines.platform.text.email_domain_class import (
    CORPORATE,
    classifier_version,
    classify_canonical_domain,
)

__all__ = [
    "ENRICHED",
    "ENRICHMENT_STATUSES",
    "MAX_NAME_LENGTH",
    "NOT_FOUND",
    "REUSABLE_STATUSES",
    "UNAVAILABLE",
    "answered_times",
    "answers_by_key",
    "asked_domain",
    "clean_name",
    "fingerprint_prefix",
    "input_fingerprints",
    "reuse_cutoff",
    "service_inputs",
]

ENRICHED = "enriched"
NOT_FOUND = "not_found"
UNAVAILABLE = "unavailable"
ENRICHMENT_STATUSES: tuple[str, ...] = (ENRICHED, NOT_FOUND, UNAVAILABLE)
# An unavailable tenant taught us nothing: it is always asked again.
REUSABLE_STATUSES: tuple[str, ...] = (ENRICHED, NOT_FOUND)

# A longer "name" is not a company name and only inflates the request.
MAX_NAME_LENGTH = 256


def clean_name(value: object) -> str | None:
    """The name as sent: trimmed and cut at :data:`MAX_NAME_LENGTH`; None when not text or
    blank."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    return text[:MAX_NAME_LENGTH] if text else None


def asked_domain(domain: str | None, domain_class: str | None) -> str | None:
    """The email domain as sent: only a corporate one. A free or disposable domain says nothing
    about the tenant's company, and a service that resolved ``gmail.com`` to Google would hand
    routing a false ``official_website`` match."""
    return domain if domain_class == CORPORATE else None


def service_inputs(
    keys: Sequence[str | None],
    names: Sequence[object],
    domains: Sequence[str | None],
    classes: Sequence[str | None],
    *,
    answered: Collection[str] = (),
) -> list[dict[str, Any]]:
    """One question per distinct normalised tenant id, in first-seen order, leaving out the
    ids without a value and those already ``answered``; the first row of a repeated id speaks
    for it."""
    inputs: list[dict[str, Any]] = []
    seen: set[str] = set()
    for key, name, domain, domain_class in zip(keys, names, domains, classes, strict=True):
        if key is None or key in seen or key in answered:
            continue
        seen.add(key)
        inputs.append(
            {
                "tenant_id": key,
                "name": clean_name(name),
                "email_domain": asked_domain(domain, domain_class),
            }
        )
    return inputs


def fingerprint_prefix() -> str:
    """What every fingerprint starts with: the domain lists' version, so an answer stored
    under other lists (whose email-domain class may differ) is never copied."""
    return f"{classifier_version()}:"


def input_fingerprints(candidates: pd.DataFrame) -> list[str]:
    """A hash of what the service is asked about each candidate (its id, its cleaned name,
    its email domain when corporate), after :func:`fingerprint_prefix`: an answer is reused
    only while this is unchanged."""
    domains = email_domains(candidates["email"])
    classes = map_unique_values(domains, classify_canonical_domain)
    keys = normalise_identifiers(candidates["tenant_id"]).tolist()
    fingerprints = []
    for key, name, domain, domain_class in zip(
        keys, candidates["name"].tolist(), domains.tolist(), classes.tolist(), strict=True
    ):
        asked = "\x1f".join(
            [str(key), clean_name(name) or "", asked_domain(domain, domain_class) or ""]
        )
        fingerprints.append(hashlib.sha1(asked.encode(), usedforsecurity=False).hexdigest())
    prefix = fingerprint_prefix()
    return [prefix + fingerprint for fingerprint in fingerprints]


def reuse_cutoff(now: datetime, max_age_days: int, *, configured: bool) -> datetime | None:
    """The time after which an answer must have been given to be reused, or None to reuse
    nothing: a maximum age of 0 asks every run, and without a service every tenant is
    ``unavailable`` anyway."""
    if max_age_days > 0 and configured:
        return now - timedelta(days=max_age_days)
    return None


def answers_by_key(
    tenant_ids: pd.Series, answers: Mapping[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Stored ``answers`` (by the tenant id as given) under the normalised id that enrichment
    compares; an id that normalises to nothing has none."""
    given = tenant_ids.tolist()
    keys = normalise_identifiers(tenant_ids).tolist()
    return {
        key: answers[tenant]
        for tenant, key in zip(given, keys, strict=True)
        if tenant in answers and key is not None
    }


def answered_times(
    tenant_ids: pd.Series,
    statuses: Iterable[str],
    earlier: Mapping[str, dict[str, Any]],
    *,
    now: datetime,
) -> list[datetime | None]:
    """When the service gave each row's answer: ``now`` for today's, the original time for a
    reused one (so it ages), None for an answer that cannot be reused (``unavailable``)."""
    keys = normalise_identifiers(tenant_ids).tolist()
    answered_at = [earlier[key]["enriched_at"] if key in earlier else now for key in keys]
    return [
        at if status in REUSABLE_STATUSES else None
        for at, status in zip(answered_at, statuses, strict=True)
    ]
