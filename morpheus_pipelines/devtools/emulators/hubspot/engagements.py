"""Engagements (calls, emails, meetings, notes): the store behind
``POST /crm/v3/objects/{calls|emails|meetings|notes}/search`` and
``POST /crm/v4/associations/{type}/contacts/batch/read``, which :mod:`.objects` serves for
every type."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .portal import Portal, hubspot_stamp

ENGAGEMENT_TYPES = ("calls", "emails", "meetings", "notes")


class EngagementEndpoints(Portal):
    """The engagements and the test method that stores one."""

    _engagements: dict[str, dict[str, dict[str, Any]]]

    def set_engagement(
        self,
        object_type: str,
        engagement_id: str | int,
        properties: dict[str, Any],
        *,
        contact_ids: list[str | int] = (),
        modified_at: datetime | None = None,
    ) -> None:
        """Create or replace one engagement, modified at ``modified_at`` (now by default)."""
        if object_type not in ENGAGEMENT_TYPES:
            raise ValueError(f"object type must be one of {ENGAGEMENT_TYPES}")
        stamp = hubspot_stamp(modified_at)
        with self._lock:
            store = self._engagements.setdefault(object_type, {})
            created = store.get(str(engagement_id), {}).get("createdAt", stamp)
            store[str(engagement_id)] = {
                "properties": {str(k): v for k, v in properties.items()}
                | {"hs_lastmodifieddate": stamp},
                "createdAt": created,
                "contactIds": [str(c) for c in contact_ids],
            }
