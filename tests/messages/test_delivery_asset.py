"""``outbound_message_delivery`` materialised as deployed, with its resource over a real SMTP
server and the Meta Graph emulator, and ``outbound_messages_sensor`` (docs/messages.md)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest

from morpheus_pipelines.assets.leads.messages import DELIVERY_CHECK, outbound_message_delivery
from morpheus_pipelines.devtools.emulators import MetaGraphEmulator
from morpheus_pipelines.resources.messaging import MessageSendersResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.outbound_messages import outbound_messages_sensor
from tests.support.messages import (
    FROM,
    META_TOKEN,
    PHONE,
    SENDER_NUMBER,
    Messaging,
    SmtpTestServer,
)


@pytest.fixture
def meta() -> Iterator[MetaGraphEmulator]:
    with MetaGraphEmulator(token=META_TOKEN) as emulator:
        yield emulator


def _materialize(url: str, senders: MessageSendersResource) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [outbound_message_delivery],
        resources={"message_senders": senders, "warehouse": WarehouseResource(database_url=url)},
        raise_on_error=False,
    )


def _configured(meta: MetaGraphEmulator, smtp_server: SmtpTestServer) -> MessageSendersResource:
    return MessageSendersResource(
        graph_base_url=meta.base_url,
        access_token=META_TOKEN,
        smtp_url=smtp_server.url,
        email_from=FROM,
    )


def test_the_delivery_sends_both_channels_and_its_check_tells_expected_from_not(
    messaging: Messaging, meta: MetaGraphEmulator, smtp_server: SmtpTestServer
) -> None:
    now = datetime.now(UTC)
    email_lead = messaging.lead(email="ana@customer.example")
    messaging.queue(email_lead, "email", at=now, body="Hello")
    open_lead = messaging.lead(phone=PHONE)
    messaging.inbound_whatsapp(open_lead, now - timedelta(hours=1))
    meta.record_inbound(SENDER_NUMBER, PHONE, now - timedelta(hours=1))
    messaging.queue(open_lead, "whatsapp", at=now, body="Hi")
    closing = messaging.lead(phone="+6598765432")
    messaging.inbound_whatsapp(closing, now - timedelta(hours=25))
    messaging.queue(closing, "whatsapp", at=now - timedelta(hours=2), body="Too late")

    result = _materialize(messaging.url, _configured(meta, smtp_server))

    assert result.success
    [materialization] = result.asset_materializations_for_node("outbound_message_delivery")
    metadata = {key: value.value for key, value in materialization.metadata.items()}
    assert metadata["sent"] == {"email": 1, "whatsapp": 1}
    assert metadata["failed"] == {"whatsapp": {"whatsapp_window_closed": 1}}
    assert metadata["dagster/row_count"] == 2
    [check] = result.get_asset_check_evaluations()
    assert check.check_name == DELIVERY_CHECK and check.passed  # the lead's own reason
    assert check.metadata["failed_for_the_leads_reasons"].value == {
        "whatsapp:whatsapp_window_closed": 1
    }

    messaging.queue(open_lead, "whatsapp", at=datetime.now(UTC), template="no_such_template")
    [again] = _materialize(
        messaging.url, _configured(meta, smtp_server)
    ).get_asset_check_evaluations()
    assert not again.passed
    assert again.metadata["failed_for_our_reasons"].value == {"whatsapp:template_missing": 1}


def test_a_channel_not_configured_waits_visibly(
    messaging: Messaging, smtp_server: SmtpTestServer
) -> None:
    lead = messaging.lead(email="ana@customer.example", phone=PHONE)
    messaging.inbound_whatsapp(lead, datetime.now(UTC) - timedelta(hours=3))
    messaging.queue(lead, "whatsapp", at=datetime.now(UTC) - timedelta(hours=2), body="Hi")
    senders = MessageSendersResource(smtp_url=smtp_server.url, email_from=FROM)

    result = _materialize(messaging.url, senders)

    [materialization] = result.asset_materializations_for_node("outbound_message_delivery")
    assert materialization.metadata["not_configured"].value == {"whatsapp": "META_ACCESS_TOKEN"}
    assert materialization.metadata["waiting"].value == {"whatsapp": 1}
    [check] = result.get_asset_check_evaluations()
    assert not check.passed and check.metadata["oldest_waiting_minutes"].value >= 119
    assert "hunter" not in repr(MessageSendersResource(smtp_url="smtp://u:hunter22@h"))


def test_the_sensor_asks_for_a_drain_only_when_messages_are_due(messaging: Messaging) -> None:
    resources = {"warehouse": WarehouseResource(database_url=messaging.url)}
    instance = dg.DagsterInstance.ephemeral()

    idle = outbound_messages_sensor(dg.build_sensor_context(resources=resources, instance=instance))
    assert isinstance(idle, dg.SkipReason)

    lead = messaging.lead(email="ana@customer.example")
    messaging.queue(lead, "email", at=datetime.now(UTC) - timedelta(seconds=1), body="Hi")
    due = outbound_messages_sensor(dg.build_sensor_context(resources=resources, instance=instance))

    assert isinstance(due, dg.SensorResult) and len(due.run_requests) == 1
