"""What the emulators' hooks receive and return: a parsed request, a response to write."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import Message
from typing import Any

__all__ = ["Request", "Response", "correlation_id", "iso_now"]


def iso_now() -> str:
    """UTC now as HubSpot formats timestamps (millisecond precision, ``Z`` suffix)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def correlation_id() -> str:
    """A fresh correlation id (HubSpot's Error schema declares ``format: uuid``)."""
    return str(uuid.uuid4())


@dataclass
class Request:
    """A parsed request handed to emulator hooks."""

    method: str
    path: str
    query: dict[str, str]
    headers: Message
    raw_body: bytes
    endpoint: str
    params: dict[str, str]
    seq: int = 0
    nth: int = 0
    page: int | None = None
    # Headers a preflight hook wants on the eventual response (e.g. rate-limit budget).
    response_headers: dict[str, str] = field(default_factory=dict)

    @property
    def json(self) -> Any:
        """The body parsed as JSON; raises ValueError when it is not JSON."""
        return json.loads(self.raw_body) if self.raw_body else None


@dataclass
class Response:
    """A response to write; ``body`` is JSON-serialised unless it is str/bytes."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json;charset=utf-8"

    def encode(self) -> bytes:
        """The body as bytes."""
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        if self.body is None:
            return b""
        return json.dumps(self.body, separators=(",", ":")).encode()
