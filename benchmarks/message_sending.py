"""Sending queued messages: free-form WhatsApp messages through the Meta Graph emulator (in
its own process, over HTTP) and emails through a real SMTP server (aiosmtpd, in this process),
by the sending step on the embedded Postgres, with the send-time checks on the path: every
WhatsApp message is re-checked against the lead's 24-hour window (one in ten has closed since
it was queued and is failed unsent), every email against the newsletter opt-out. Prints
messages sent per second, one message at a time (the step sends sequentially: each is marked
``sending`` and committed before its call, and its answer recorded in its own transaction).

    uv run python benchmarks/message_sending.py [--whatsapp 2000] [--email 1000] 2>/dev/null

(stderr holds one event line per refused message.)
"""

from __future__ import annotations

import argparse
import socket
import time
import uuid
from datetime import UTC, datetime
from functools import partial

from _common import emulator_process, scratch_database
from aiosmtpd.controller import Controller
from end_to_end import python_yardstick
from sqlalchemy import func, select, text

from morpheus_pipelines.crm.models import OutboundMessage, Subscription
from morpheus_pipelines.crm.steps.message_sending import (
    MessageSenders,
    NotConfigured,
    deliver_messages,
)
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.clients.smtp import SmtpSender, SmtpServer
from morpheus_pipelines.platform.clients.whatsapp import WhatsAppClient

TOKEN = "meta-benchmark-token"
NUMBER = "100000000000101"
CLOSED_EVERY = 10  # one lead in ten wrote 25 h ago: its window closed after queueing

_SEED = """
WITH lead AS (
    INSERT INTO leads (id, "subscriptionId", "idempotencyKey", "requestFingerprint", source,
                       "sourceSubmissionId", phone, email, "ownerHubspotOwnerId", response)
    SELECT gen_random_uuid(), :sub, :channel || n, 'f', 'web-form', 's' || n,
           '+6590' || lpad(n::text, 6, '0'), 'person' || n || '@customer.example', '101', '{}'
    FROM generate_series(1, :rows) AS n
    RETURNING id, "subscriptionId", "sourceSubmissionId"
), inbound AS (
    INSERT INTO activities ("subscriptionId", "externalId", type, direction, "leadId",
                            "occurredAt")
    SELECT "subscriptionId", 'in:' || id, 'WHATSAPP', 'inbound', id,
           CASE WHEN substr("sourceSubmissionId", 2)::int % :closed_every = 0
                THEN :now - interval '25 hours' ELSE :now - interval '1 hour' END
    FROM lead WHERE :channel = 'WHATSAPP'
)
INSERT INTO outbound_messages ("subscriptionId", "leadId", channel, kind, body, "createdAt",
                               "nextAttemptAt")
SELECT "subscriptionId", id, CAST(:channel AS activity_type), 'free_form', 'Hello from Acme',
       :now, :now
FROM lead
"""


def seed(url: str, channel: str, rows: int, now: datetime) -> None:
    subscription_id = uuid.uuid4()
    with get_session(url) as session:
        session.add(
            Subscription(id=subscription_id, name="Benchmark", whatsappPhoneNumberId=NUMBER)
        )
        session.flush()
        session.execute(
            text(_SEED),
            {
                "sub": subscription_id,
                "rows": rows,
                "channel": channel,
                "now": now,
                "closed_every": CLOSED_EVERY,
            },
        )


def statuses(url: str) -> dict[str, int]:
    with get_session(url) as session:
        rows = session.execute(
            select(OutboundMessage.failureReason, OutboundMessage.status, func.count()).group_by(
                OutboundMessage.failureReason, OutboundMessage.status
            )
        )
        return {f"{status}:{reason}" if reason else status: n for reason, status, n in rows}


def run(url: str, channel: str, rows: int, senders: MessageSenders) -> None:
    now = datetime.now(UTC)
    seed(url, channel, rows, now)
    started = time.perf_counter()
    report = deliver_messages(partial(get_session, url), senders, now=lambda: now)
    wall = time.perf_counter() - started
    sent = sum(report.sent.values())
    print(
        f"{channel.lower():<8} {rows} queued: {sent} sent, failed {report.as_metadata()['failed']}"
        f" in {wall:.2f} s: {sent / wall:.0f} messages sent/s, {rows / wall:.0f} messages "
        f"handled/s; statuses {statuses(url)}"
    )


class _Accepting:
    accepted = 0

    async def handle_DATA(self, server, session, envelope) -> str:
        self.accepted += 1
        return "250 OK"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--whatsapp", type=int, default=2_000)
    parser.add_argument("--email", type=int, default=1_000)
    args = parser.parse_args()
    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    inbound = [
        {"phone_number_id": NUMBER, "wa_id": f"6590{n:06d}"}
        for n in range(1, args.whatsapp + 1)
        if n % CLOSED_EVERY
    ]
    with (
        scratch_database() as url,
        emulator_process("meta", {"token": TOKEN, "inbound": inbound}) as base,
        WhatsAppClient(TOKEN, base_url=base) as client,
    ):
        run(url, "WHATSAPP", args.whatsapp, MessageSenders(client, NotConfigured("-")))
    handler = _Accepting()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        server = SmtpServer.from_url(f"smtp://127.0.0.1:{controller.port}")
        with scratch_database() as url, SmtpSender(server, "sales@acme.example") as smtp:
            run(url, "EMAIL", args.email, MessageSenders(NotConfigured("-"), smtp))
    finally:
        controller.stop()
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")


if __name__ == "__main__":
    main()
