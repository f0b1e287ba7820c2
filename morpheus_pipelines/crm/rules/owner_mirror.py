"""Turning HubSpot's owner list into the reps a subscription should have (docs/ownership.md,
"The sales-rep mirror"). Plain Python over the API's JSON."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MirroredOwner:
    email: str  # trimmed, lower-cased: the match key with sales_reps.email
    hubspot_owner_id: str
    first_name: str | None
    last_name: str | None
    active: bool


@dataclass(frozen=True)
class OwnerList:
    owners: dict[str, MirroredOwner]  # by email
    without_email: int  # owners that cannot be matched to a rep (API users, teams)
    duplicates: int  # further owners with an email already seen (active wins)
    not_human: int  # owners that stand for automation (the AI dialer), never a rep


def _text(value: Any) -> str | None:
    return str(value).strip() or None if value is not None else None


def owner_list(
    active: Iterable[Mapping[str, Any]],
    archived: Iterable[Mapping[str, Any]],
    *,
    not_human: frozenset[str] = frozenset(),
) -> OwnerList:
    """One owner per email. An email that is both active and archived (a user removed and
    invited again) is active with the active owner's id; within one kind the first wins.
    Owners whose id is in ``not_human`` (the AI dialer's owner) never become reps: the
    rotation would hand people's follow-ups to a machine."""
    owners: dict[str, MirroredOwner] = {}
    without_email = duplicates = machines = 0
    for is_active, page in ((True, active), (False, archived)):
        for raw in page:
            email = (_text(raw.get("email")) or "").lower()
            owner_id = _text(raw.get("id"))
            if owner_id in not_human:
                machines += 1
                continue
            if not email or not owner_id:
                without_email += 1
                continue
            if email in owners:
                duplicates += 1
                continue
            owners[email] = MirroredOwner(
                email,
                owner_id,
                _text(raw.get("firstName")),
                _text(raw.get("lastName")),
                active=is_active and not raw.get("archived", False),
            )
    return OwnerList(owners, without_email, duplicates, machines)
