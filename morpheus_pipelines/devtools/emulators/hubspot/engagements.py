"""Engagements (calls, emails, meetings, notes, tasks): the store behind
``POST /crm/v3/objects/{calls|emails|meetings|notes|tasks}/search``, which :mod:`.search`
serves for every type; the contacts each one is about live in the portal's associations
(:mod:`.associations`)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from .portal import Portal, hubspot_stamp

ENGAGEMENT_TYPES = ("calls", "emails", "meetings", "notes", "tasks")


class EngagementEndpoints(Portal):
    """The engagements and the test method that stores one."""

    def set_engagement(
        self,
        object_type: str,
        engagement_id: str | int,
        properties: dict[str, Any],
        *,
        contact_ids: Iterable[str | int] = (),
        modified_at: datetime | None = None,
    ) -> None:
        """Create or replace one engagement associated with ``contact_ids``, modified at
        ``modified_at`` (now by default)."""
        if object_type not in ENGAGEMENT_TYPES:
            raise ValueError(f"object type must be one of {ENGAGEMENT_TYPES}")
        stamp = hubspot_stamp(modified_at)
        with self._lock:
            store = self._engagements.setdefault(object_type, {})
            current = store.get(str(engagement_id), {})
            store[str(engagement_id)] = {
                "properties": {str(k): v for k, v in properties.items()}
                | {"hs_lastmodifieddate": stamp},
                "createdAt": current.get("createdAt", stamp),
                "writes": current.get("writes", 0),
            }
            self.dissociate_all(object_type, str(engagement_id), "contacts")
            for contact_id in contact_ids:
                self.associate(object_type, str(engagement_id), "contacts", str(contact_id))
