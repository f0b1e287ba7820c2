"""Who receives the reports (docs/reports.md, "Delivery"): the managers in
``MORPHEUS_REPORT_RECIPIENTS`` by email through ``MORPHEUS_SMTP_URL``, and a Slack channel
through ``MORPHEUS_SLACK_WEBHOOK_URL``. Given only to the delivery assets. The SMTP URL, the
webhook URL and the addresses are never shown (the addresses are masked in logs)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import dagster as dg
from pydantic import Field

from morpheus_pipelines.platform.clients.slack import SlackWebhook
from morpheus_pipelines.platform.clients.smtp import SmtpSender, SmtpServer
from morpheus_pipelines.platform.text.normalise import normalise_email

if TYPE_CHECKING:
    from morpheus_pipelines.tenants.steps.report_delivery import ReportSenders


def parse_recipients(value: str) -> tuple[str, ...]:
    """Comma-separated addresses, trimmed and lower-cased, each once; raises ``ValueError``
    naming the variable (never the address) for one that is not an email."""
    recipients: list[str] = []
    for index, raw in enumerate(part.strip() for part in value.split(",")):
        if not raw:
            continue
        email = normalise_email(raw)
        if email is None or not email.partition("@")[0] or "." not in email.partition("@")[2]:
            raise ValueError(f"MORPHEUS_REPORT_RECIPIENTS: entry {index + 1} is not an email")
        if email not in recipients:
            recipients.append(email)
    return tuple(recipients)


class ReportDeliveryResource(dg.ConfigurableResource):
    """The Daily Summary and Weekly Metrics readers and how to reach them."""

    recipients: str = Field(default="", repr=False)
    smtp_url: str = Field(default="", repr=False)
    email_from: str = ""
    slack_webhook_url: str = Field(default="", repr=False)
    request_timeout: float = 20.0

    @contextlib.contextmanager
    def get_senders(self) -> Iterator[ReportSenders]:
        """The senders, connections closed afterwards; a channel missing a setting is named
        in ``not_configured``."""
        # The delivery step brings pandas: imported by the run, not by the code location.
        from morpheus_pipelines.tenants.steps.report_delivery import ReportSenders

        recipients = parse_recipients(self.recipients)
        missing: dict[str, str] = {}
        with contextlib.ExitStack() as stack:
            email = None
            if not recipients:
                missing["email"] = "MORPHEUS_REPORT_RECIPIENTS"
            elif not self.smtp_url:
                missing["email"] = "MORPHEUS_SMTP_URL"
            elif not self.email_from:
                missing["email"] = "MORPHEUS_EMAIL_FROM"
            else:
                server = SmtpServer.from_url(self.smtp_url)
                email = stack.enter_context(
                    SmtpSender(server, self.email_from, timeout=self.request_timeout)
                )
            slack = None
            if self.slack_webhook_url:
                slack = SlackWebhook(self.slack_webhook_url, timeout=self.request_timeout)
            else:
                missing["slack"] = "MORPHEUS_SLACK_WEBHOOK_URL"
            yield ReportSenders(recipients, email, slack, missing)
