"""A rep's open load counts the leads they are working now (docs/leads.md, "Open load"): a
lead untouched for ``MORPHEUS_LEAD_STALE_DAYS`` stops counting, once, and stays open."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory


def release_stale_leads(
    session_factory: SessionFactory, *, stale_days: int, now: datetime | None = None
) -> int:
    """Release the load of every open lead (all subscriptions) created more than
    ``stale_days`` ago with no activity since then, in one statement; how many. ``0`` days
    means never (nothing is released)."""
    if stale_days <= 0:
        return 0
    at = now or datetime.now(UTC)
    with session_factory() as session:
        store = CrmStore(session)
        return store.leads.release_stale(
            session, untouched_since=at - timedelta(days=stale_days), at=at
        )
