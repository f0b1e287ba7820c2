"""The message senders as a Dagster resource (settings: README, "Configuration";
docs/messages.md): the WhatsApp Cloud API and SMTP. A channel whose settings are missing is
``NotConfigured``: its messages wait, and the delivery's metadata says which setting is
missing. The token and the SMTP URL (it may carry a password) are never shown."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import dagster as dg
from pydantic import Field

from morpheus_pipelines.crm.steps.message_sending import MessageSenders, NotConfigured
from morpheus_pipelines.platform.clients.smtp import SmtpSender, SmtpServer
from morpheus_pipelines.platform.clients.whatsapp import WhatsAppClient
from morpheus_pipelines.platform.settings import DEFAULTS


class MessageSendersResource(dg.ConfigurableResource):
    """Who sends the queued messages: Meta's Cloud API for WhatsApp, an SMTP server for email.
    Given only to `outbound_message_delivery`."""

    graph_base_url: str = DEFAULTS["META_GRAPH_BASE_URL"]
    graph_api_version: str = DEFAULTS["META_GRAPH_API_VERSION"]
    access_token: str = Field(default="", repr=False)
    template_language: str = DEFAULTS["META_WHATSAPP_TEMPLATE_LANGUAGE"]
    smtp_url: str = Field(default="", repr=False)
    email_from: str = ""
    request_timeout: float = 20.0

    @contextlib.contextmanager
    def get_senders(self) -> Iterator[MessageSenders]:
        """The two senders, their connections closed afterwards."""
        with contextlib.ExitStack() as stack:
            whatsapp: WhatsAppClient | NotConfigured = NotConfigured("META_ACCESS_TOKEN")
            if self.access_token:
                whatsapp = stack.enter_context(
                    WhatsAppClient(
                        self.access_token,
                        base_url=self.graph_base_url,
                        api_version=self.graph_api_version,
                        read_timeout=self.request_timeout,
                    )
                )
            email: SmtpSender | NotConfigured = NotConfigured("MORPHEUS_SMTP_URL")
            if self.smtp_url and not self.email_from:
                email = NotConfigured("MORPHEUS_EMAIL_FROM")
            elif self.smtp_url:
                server = SmtpServer.from_url(self.smtp_url)
                email = stack.enter_context(
                    SmtpSender(server, self.email_from, timeout=self.request_timeout)
                )
            yield MessageSenders(whatsapp, email, template_language=self.template_language)
