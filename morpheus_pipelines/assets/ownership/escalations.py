"""``follow_up_escalations``: stale follow-up tasks escalated (docs/ownership.md,
"Escalation")."""

from datetime import UTC, datetime

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.crm.steps.follow_up_escalation import escalate_stale_tasks
from morpheus_pipelines.resources.notifier import NotifierResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.asset(
    deps=["reengagement_assignments", "hubspot_task_completions"],
    group_name="ownership",
    kinds={"slack"},
    metadata=tables_written("follow_up_tasks"),
    tags={"domain": "ownership"},
)
def follow_up_escalations(
    ownership: OwnershipResource, notifier: NotifierResource, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """PENDING follow-up tasks a day or more past due: a message naming the rep and the
    contact goes to the alert webhook (and the event log, emails masked), and the task's
    `escalationStage` advances: stage k once the task is k days overdue, never past stage 3."""
    subscription_id = ownership.subscription()
    run = escalate_stale_tasks(
        warehouse.session,
        subscription_id,
        lambda text, fields: notifier.notify("follow_up_escalation", text, **fields),
        now=datetime.now(UTC),
    )
    return dg.MaterializeResult(
        metadata=as_metadata(
            {
                "subscription_id": str(subscription_id),
                "stale_tasks": run.stale,
                "escalated": run.escalated,
                "escalated_by_stage": {str(k): v for k, v in sorted(run.by_stage.items())},
                "already_escalated_today": run.not_yet_due,
                "awaiting_hand_over": run.awaiting_hand_over,
                "undelivered": run.undelivered,
            }
        )
    )
