"""Collecting the structured event lines a test writes."""

from __future__ import annotations

import json
import logging
from typing import Any


class EventLines(logging.Handler):
    """Collects the ``morpheus.events`` JSON lines (that logger does not propagate)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def events(self, name: str) -> list[dict[str, Any]]:
        parsed = [json.loads(line) for line in self.lines]
        return [event for event in parsed if event["event"] == name]
