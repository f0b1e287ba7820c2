"""Collecting the structured event lines a test writes."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any


class EventLines(logging.Handler):
    """Collects the ``morpheus.events`` JSON lines (that logger does not propagate)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []
        self._written = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        with self._written:
            self.lines.append(record.getMessage())
            self._written.notify_all()

    def wait_for(self, name: str, timeout: float = 10.0) -> dict[str, Any]:
        """The first ``name`` event, waiting for it to be written (by a server thread)."""
        with self._written:
            if not self._written.wait_for(lambda: self.events(name), timeout):
                raise AssertionError(f"no {name} event within {timeout} s")
            return self.events(name)[0]

    def events(self, name: str) -> list[dict[str, Any]]:
        parsed = [json.loads(line) for line in self.lines]
        return [event for event in parsed if event["event"] == name]
