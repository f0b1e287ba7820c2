"""The watermarks of the incremental HubSpot reads, kept in ``configs``: read one, and move it
only after a complete read (so a failed run is redone whole by the next)."""

from __future__ import annotations

import uuid
from datetime import datetime

from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory


def read_watermark(session_factory: SessionFactory, key: str) -> datetime | None:
    with session_factory() as session:
        stored = CrmStore(session).configs.get_value(session, key)
    return datetime.fromisoformat(stored) if stored else None


def move_watermark(
    session_factory: SessionFactory,
    key: str,
    previous: datetime | None,
    newest: datetime | None,
    subscription_id: uuid.UUID,
) -> datetime | None:
    """Store ``newest`` when it moved; returns ``newest``."""
    if newest is not None and newest != previous:
        with session_factory() as session:
            CrmStore(session).configs.set_value(session, key, newest.isoformat(), subscription_id)
    return newest
