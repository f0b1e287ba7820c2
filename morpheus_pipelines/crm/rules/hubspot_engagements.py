"""HubSpot engagements as timeline activities (docs/leads.md, "The HubSpot engagement
sync"): which properties are read and what each becomes."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

ENGAGEMENT_PROPERTIES: dict[str, tuple[str, ...]] = {
    "calls": (
        "hs_timestamp",
        "hs_call_title",
        "hs_call_body",
        "hs_call_status",
        "hs_call_direction",
        "hubspot_owner_id",
    ),
    "emails": (
        "hs_timestamp",
        "hs_email_subject",
        "hs_email_text",
        "hs_email_status",
        "hs_email_direction",
        "hubspot_owner_id",
    ),
    "meetings": (
        "hs_timestamp",
        "hs_meeting_title",
        "hs_meeting_body",
        "hs_meeting_outcome",
        "hubspot_owner_id",
    ),
    "notes": ("hs_timestamp", "hs_note_body", "hubspot_owner_id"),
}
_TYPES = {"calls": "CALL", "emails": "EMAIL", "meetings": "MEETING", "notes": "NOTE"}
_FIELDS = {  # object type → (subject, body, status, direction) property
    "calls": ("hs_call_title", "hs_call_body", "hs_call_status", "hs_call_direction"),
    "emails": ("hs_email_subject", "hs_email_text", "hs_email_status", "hs_email_direction"),
    "meetings": ("hs_meeting_title", "hs_meeting_body", "hs_meeting_outcome", None),
    "notes": (None, "hs_note_body", None, None),
}
_DIRECTIONS = {
    "INBOUND": "inbound",
    "OUTBOUND": "outbound",
    "INCOMING_EMAIL": "inbound",
    "EMAIL": "outbound",
    "FORWARDED_EMAIL": "outbound",
}


def hubspot_time(value: Any) -> datetime | None:
    """A HubSpot timestamp (epoch milliseconds or ISO 8601) in UTC; ``None`` if absent or
    unreadable."""
    if value in (None, ""):
        return None
    text = str(value)
    try:
        if text.isdigit():
            return datetime.fromtimestamp(int(text) / 1000, tz=UTC)
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def engagement_activity(object_type: str, properties: Mapping[str, Any]) -> dict[str, Any]:
    """The activity columns of one engagement (``occurredAt`` from ``hs_timestamp``, falling
    back to the last modification; the owner in ``metadata``)."""
    subject, body, status, direction = _FIELDS[object_type]
    occurred_at = hubspot_time(properties.get("hs_timestamp")) or hubspot_time(
        properties.get("hs_lastmodifieddate")
    )
    metadata: dict[str, Any] = {"source": "hubspot", "hubspot_object_type": object_type}
    if properties.get("hubspot_owner_id"):
        metadata["hubspot_owner_id"] = str(properties["hubspot_owner_id"])
    return {
        "type": _TYPES[object_type],
        "subject": properties.get(subject) if subject else None,
        "body": properties.get(body) if body else None,
        "status": properties.get(status) if status else None,
        "direction": _DIRECTIONS.get(str(properties.get(direction) or "")) if direction else None,
        "occurredAt": occurred_at,
        "metadata": metadata,
    }
