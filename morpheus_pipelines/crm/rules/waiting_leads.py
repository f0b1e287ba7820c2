"""Leads waiting for an owner (docs/leads.md, "Who owns a lead"): when the check is red and
what its summary says. Pure: the counts come from the caller."""

from __future__ import annotations

from datetime import datetime


def waiting_age_minutes(oldest_created_at: datetime | None, now: datetime) -> int | None:
    """How long the oldest waiting lead has waited, in whole minutes (``None``: none waits)."""
    if oldest_created_at is None:
        return None
    return max(0, int((now - oldest_created_at).total_seconds() // 60))


def waiting_health(
    waiting: int, oldest_created_at: datetime | None, now: datetime
) -> tuple[bool, str]:
    """``(passed, summary)``: red while any open lead has no owner, since nobody is told
    about it until someone becomes assignable."""
    if not waiting:
        return True, "every open lead has an owner"
    age = waiting_age_minutes(oldest_created_at, now)
    return False, (
        f"{waiting} open lead(s) wait for an owner, the oldest for {age} min: nobody in their "
        "pool, no pool fallback rep and no subscription fallback rep is assignable"
    )
