"""The deal worker and the reconciliation through Dagster, on the real warehouse and the
emulator (docs/hubspot-webhooks.md): the sensor asks for a run while deal events wait, the
asset applies them and reports what it did, the check turns red when one waits too long, and
the reconciliation's schedule runs only for a subscription that receives webhooks."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest
from sqlalchemy import update

from morpheus_pipelines.assets.leads.deal_events import (
    PENDING_CHECK,
    deal_events_check_job,
    deal_events_not_stuck,
    hubspot_deal_events,
    hubspot_deal_events_job,
)
from morpheus_pipelines.assets.leads.reconciliation import (
    hubspot_reconciliation,
    hubspot_reconciliation_job,
    hubspot_reconciliation_schedule,
)
from morpheus_pipelines.crm.models import HubSpotWebhookEvent, Subscription
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.deal_events import pending_deal_events, run_key
from tests.support.deals import TOKEN, DealDesk, deal_desk

DEAL = 9001


@pytest.fixture
def hubspot() -> Iterator[HubSpotEmulator]:
    with HubSpotEmulator({"token": TOKEN}) as emulator:
        yield emulator
    assert emulator.errors == []


@pytest.fixture
def desk(database_url: str, hubspot: HubSpotEmulator) -> Iterator[DealDesk]:
    with deal_desk(database_url, hubspot) as running:
        yield running


def _resources(desk: DealDesk, subscription: str | None = None) -> dict:
    return {
        "warehouse": WarehouseResource(database_url=desk.url),
        "hubspot": HubSpotResource(
            base_url=desk.hubspot.base_url,
            private_app_token=TOKEN,
            request_timeout=2.0,
            retry_count=1,
            max_backoff_seconds=0.01,
        ),
        "ownership": OwnershipResource(
            subscription_id=str(desk.portal.subscription_id) if subscription is None else ""
        ),
    }


def _definitions(desk: DealDesk) -> dg.Definitions:
    return dg.Definitions(
        assets=[hubspot_deal_events, hubspot_reconciliation],
        asset_checks=[deal_events_not_stuck],
        jobs=[hubspot_deal_events_job, deal_events_check_job, hubspot_reconciliation_job],
        schedules=[hubspot_reconciliation_schedule],
        resources=_resources(desk),
    )


def _run(desk: DealDesk, job: str) -> dg.ExecuteInProcessResult:
    return _definitions(desk).resolve_job_def(job).execute_in_process(raise_on_error=False)


def _metadata(result: dg.ExecuteInProcessResult, key: str) -> dict:
    [event] = [
        e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == key
    ]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def _closed_won(desk: DealDesk) -> dict:
    desk.hubspot.add_deal(DEAL, contact_ids=[501])
    at = datetime.now(UTC) + timedelta(seconds=1)
    desk.hubspot.set_deal_stage(DEAL, "closedwon", modified_at=at)
    return desk.sender.property_change(
        DEAL, "dealstage", "closedwon", object_type="deal", occurred_at=at
    )


def _sensor(desk: DealDesk, **options: str | None) -> dg.SensorResult | dg.SkipReason:
    context = dg.build_sensor_context(resources=_resources(desk, **options))
    return pending_deal_events(context)


def test_the_sensor_asks_for_a_run_and_the_asset_applies_the_events(desk: DealDesk) -> None:
    lead = desk.lead(501)
    assert isinstance(_sensor(desk), dg.SkipReason)
    desk.send(_closed_won(desk))

    ticked = _sensor(desk)
    result = _run(desk, "hubspot_deal_events_job")

    assert isinstance(ticked, dg.SensorResult)
    [request] = ticked.run_requests
    assert request.tags["pending"] == "1"
    assert result.success
    metadata = _metadata(result, "hubspot_deal_events")
    assert (metadata["events_applied"], metadata["leads_closed"]) == (1, 1)
    assert metadata["events_still_pending"] == 0
    assert desk.leads()[lead].status == "won"
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {PENDING_CHECK: True}
    assert isinstance(_sensor(desk), dg.SkipReason)  # nothing waits any more


def test_the_sensor_does_nothing_without_a_subscription(desk: DealDesk) -> None:
    desk.send(_closed_won(desk))
    skipped = _sensor(desk, subscription="")
    assert isinstance(skipped, dg.SkipReason)
    assert "MORPHEUS_SUBSCRIPTION_ID" in skipped.skip_message


def test_a_failed_run_is_asked_again_only_after_the_retry_slot() -> None:
    now = datetime(2026, 12, 1, 9, 0, 30, tzinfo=UTC)
    assert run_key("s", 7, now) == run_key("s", 7, now + timedelta(minutes=4))
    assert run_key("s", 7, now) != run_key("s", 7, now + timedelta(minutes=5))
    assert run_key("s", 7, now) != run_key("s", 8, now)  # a new event: a run at once


def test_hubspot_failing_materialises_with_the_error_and_leaves_the_events_pending(
    desk: DealDesk,
) -> None:
    desk.lead(501)
    desk.send(_closed_won(desk))
    desk.hubspot.fail(503, endpoint="associations_batch_read", times=2)

    result = _run(desk, "hubspot_deal_events_job")

    assert result.success  # the check, not a failed run, says it
    metadata = _metadata(result, "hubspot_deal_events")
    assert "503" in metadata["hubspot_error"]
    assert (metadata["events_applied"], metadata["events_still_pending"]) == (0, 1)


def test_the_check_turns_red_when_a_deal_event_waits_too_long(desk: DealDesk) -> None:
    desk.send(_closed_won(desk))
    fresh = _run(desk, "deal_events_check_job")
    with get_session(desk.url) as session:
        session.execute(
            update(HubSpotWebhookEvent).values(receivedAt=datetime.now(UTC) - timedelta(minutes=16))
        )

    stuck = _run(desk, "deal_events_check_job")

    [fresh_check] = fresh.get_asset_check_evaluations()
    [stuck_check] = stuck.get_asset_check_evaluations()
    assert fresh_check.passed
    assert not stuck_check.passed
    assert stuck_check.severity == dg.AssetCheckSeverity.ERROR
    assert "pending for 16 min" in stuck_check.description
    assert stuck.get_asset_materialization_events() == []  # the check alone materialises nothing


def test_the_reconciliation_is_scheduled_only_for_a_subscription_receiving_webhooks(
    desk: DealDesk,
) -> None:
    def tick(subscription: str | None = None) -> dg.RunRequest | dg.SkipReason:
        context = dg.build_schedule_context(resources=_resources(desk, subscription))
        return hubspot_reconciliation_schedule(context)

    assert isinstance(tick(), dg.RunRequest)  # the desk's subscription answers for a portal
    assert isinstance(tick(""), dg.SkipReason)
    with get_session(desk.url) as session:
        session.get(Subscription, desk.portal.subscription_id).hubspotPortalId = None
    skipped = tick()
    assert isinstance(skipped, dg.SkipReason)
    assert "portal" in skipped.skip_message


def test_the_reconciliation_asset_reports_its_windows_and_changes(desk: DealDesk) -> None:
    lead = desk.lead(501)
    _closed_won(desk)  # HubSpot has the closed deal; no webhook was sent

    result = _run(desk, "hubspot_reconciliation_job")

    assert result.success
    metadata = _metadata(result, "hubspot_reconciliation")
    assert metadata["changes"]["leads_closed_won"] == 1
    assert metadata["dagster/row_count"] == 1
    assert metadata["deals_cursor"] is not None
    assert desk.leads()[lead].status == "won"
