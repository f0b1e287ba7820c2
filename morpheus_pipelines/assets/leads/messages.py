"""``outbound_message_delivery``: the queued messages sent, WhatsApp through the Cloud API and
email through SMTP, each at most once (docs/messages.md), and its check."""

from datetime import UTC, datetime

import dagster as dg

from morpheus_pipelines.assets.leads.intake import ACTIVITIES, LEADS
from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.crm.rules.message_sending import delivery_health
from morpheus_pipelines.crm.steps.message_sending import (
    deliver_messages,
    message_backlog,
    message_status_counts,
)
from morpheus_pipelines.resources.messaging import MessageSendersResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

DELIVERY_KEY = dg.AssetKey("outbound_message_delivery")
DELIVERY_CHECK = "messages_fail_only_for_the_leads_reasons"


@dg.asset(
    deps=[LEADS, ACTIVITIES],
    key=DELIVERY_KEY,
    group_name="leads",
    retry_policy=EXTERNAL_SERVICE_RETRY,
    kinds={"whatsapp", "email"},
    metadata=tables_written("outbound_messages", "activities"),
    check_specs=[
        dg.AssetCheckSpec(
            name=DELIVERY_CHECK,
            asset=DELIVERY_KEY,
            description="No message failed in the last day for a reason other than the "
            "lead's own (a closed WhatsApp window and an opt-out are expected, shown apart), "
            "and none has waited more than an hour. Once the cause is mended, "
            "`morpheus message retry` queues the failed ones again.",
            blocking=False,
        )
    ],
    tags={"domain": "leads"},
)
def outbound_message_delivery(
    context: dg.AssetExecutionContext,
    message_senders: MessageSendersResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """The due rows of `outbound_messages`, every subscription's: each marked `sending` and
    committed before the provider is called, a free-form WhatsApp message re-checked against
    the 24-hour window and an email against the opt-out; then `sent` (with the provider's id,
    and an outbound activity on the lead's timeline), back to `queued` with a back-off when
    certainly not sent, or `failed` with the provider's reason. A message whose answer was
    lost is failed `send_outcome_unknown`, never sent twice. Launched by
    `outbound_messages_sensor` when messages are due."""
    with message_senders.get_senders() as senders:
        report = deliver_messages(warehouse.session, senders)
    for channel, problem in report.stopped.items():
        context.log.warning(f"{channel} unavailable, its messages wait: {problem}")
    now = datetime.now(UTC)
    backlog = message_backlog(warehouse.session, now=now)
    passed, health = delivery_health(backlog.failures, backlog.oldest_waiting_at, now)
    metadata = report.as_metadata() | {
        "waiting": message_status_counts(backlog),
        "due": backlog.due,
        "dagster/row_count": sum(report.sent.values()),
    }
    check = dg.AssetCheckResult(
        check_name=DELIVERY_CHECK,
        passed=passed,
        severity=dg.AssetCheckSeverity.WARN,
        metadata=as_metadata(
            health
            | {"waiting": message_status_counts(backlog), "not_configured": report.not_configured}
        ),
    )
    return dg.MaterializeResult(metadata=as_metadata(metadata), check_results=[check])


outbound_messages_job = dg.define_asset_job(
    name="outbound_messages_job",
    selection=dg.AssetSelection.assets(outbound_message_delivery),
    description="Send the due queued messages (WhatsApp and email).",
)
