"""Reading a sender's JSON defensively: a value of the wrong type is absent, never an error,
so one odd field cannot lose the rest of a delivery; and the two ways a webhook delivery is
refused as a whole. Shared by the HubSpot, ad-platform and messaging webhooks. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any


class SignatureRefused(Exception):
    """A delivery whose signature (or, for HubSpot, timestamp) does not hold; ``reason`` is
    what the 401 answer and the log line say (never the expected signature)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class InvalidDelivery(ValueError):
    """A signed body that is not a delivery we can read; ``field`` names where (``body``,
    ``[3].occurredAt``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def text_value(value: Any) -> str | None:
    """Ids arrive as strings or numbers; anything else, blank text or text holding NUL (which
    the database cannot store) is absent."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip() and "\x00" not in value:
        return value.strip()
    return None


def epoch_value(value: Any) -> datetime | None:
    """Epoch seconds, as a number or its text, as an aware UTC time."""
    text = text_value(value)
    if text is None or not text.isdigit() or len(text) > 12:
        return None
    return datetime.fromtimestamp(int(text), UTC)


def mapping_value(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def list_value(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
