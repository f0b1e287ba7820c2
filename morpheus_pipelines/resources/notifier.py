"""Alerts: always a structured log line; also an HTTP POST when a webhook is configured."""

import logging
from typing import Any

import dagster as dg
import requests

from morpheus_pipelines.platform.observability.events import log_event


class NotifierResource(dg.ConfigurableResource):
    """Sends alerts to the `morpheus.events` log and, when `MORPHEUS_ALERT_WEBHOOK_URL` is
    set, as a JSON POST to that URL (Slack-compatible `text` field plus structured fields)."""

    webhook_url: str = ""
    timeout_seconds: float = 5.0

    def notify(self, alert: str, summary: str, **fields: Any) -> bool:
        """Log the alert, POST it when configured; returns whether the POST succeeded (or
        True when there is no webhook). A failing webhook never raises."""
        log_event("alert", level=logging.WARNING, alert=alert, summary=summary, **fields)
        if not self.webhook_url:
            return True
        try:
            response = requests.post(
                self.webhook_url,
                json={"text": f"[morpheus] {summary}", "alert": alert, **fields},
                timeout=self.timeout_seconds,
            )
            response.raise_for_status()
        except requests.RequestException as exc:
            log_event(
                "alert_delivery_failed",
                level=logging.ERROR,
                alert=alert,
                error=type(exc).__name__,
            )
            return False
        return True
