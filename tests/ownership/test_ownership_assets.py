"""The ownership slice through Dagster: ``sales_reps`` → ``reengagement_assignments`` →
``follow_up_escalations`` with the real warehouse, the emulator and a webhook, plus the
sensor that starts the job."""

from __future__ import annotations

from collections.abc import Iterator

import dagster as dg
import pytest

from morpheus_pipelines.assets.ownership import defs as ownership_defs
from morpheus_pipelines.crm.models import ReengagementSegment
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.notifier import NotifierResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.reengagement import new_segment_members
from tests.support.ownership import TOKEN, UNASSIGNED_LIST, World
from tests.support.webhook import Receiver

S = ReengagementSegment


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def _resources(world: World, webhook: str = "", subscription: str | None = None) -> dict:
    return {
        "warehouse": WarehouseResource(database_url=world.url),
        "hubspot": HubSpotResource(
            base_url=world.hubspot.base_url,
            private_app_token=TOKEN,
            request_timeout=2.0,
            retry_count=1,
            max_backoff_seconds=0.01,
        ),
        "ownership": OwnershipResource(
            subscription_id=str(world.subscription_id if subscription is None else subscription),
            unassigned_list_id=UNASSIGNED_LIST,
        ),
        "notifier": NotifierResource(webhook_url=webhook),
    }


def _materialize(world: World, webhook: str = "") -> dg.ExecuteInProcessResult:
    assets = list(ownership_defs.assets or [])
    return dg.materialize(assets, resources=_resources(world, webhook), raise_on_error=False)


def _metadata(result: dg.ExecuteInProcessResult, key: str) -> dict:
    [event] = [
        e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == key
    ]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def test_the_slice_mirrors_reps_assigns_segments_and_reports_fairness(
    world: World, receiver: Receiver
) -> None:
    for i in range(3):
        world.hubspot.set_list(f"L{300 + i}", object_type_id="0-1")
    world.hubspot.set_owners(
        [{"id": str(300 + i), "email": f"rep{i}@acme.test"} for i in range(3)]
        + [{"id": "399", "email": "left@acme.test", "archived": True}]
    )
    contacts = [world.add_contact() for _ in range(10)]
    for contact in contacts:
        world.add_member(S.SUPPLIER, contact)

    result = _materialize(world, receiver.url)

    assert result.success
    reps = _metadata(result, "sales_reps")
    assert (reps["inserted"], reps["owners_archived"]) == (4, 1)
    assigned = _metadata(result, "reengagement_assignments")
    assert assigned["outcomes_by_segment"]["supplier"] == {"reassigned": 10}
    assert assigned["write_backs_written"] == 10
    assert sorted(assigned["fairness_assignments_per_rep"].values()) == [0, 3, 3, 4]
    assert (assigned["fairness_spread"], assigned["fairness_perfect_spread"]) == (1, 1)
    assert assigned["reps_skipped_as_inactive"] == ["left@acme.test"]
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {
        "owners_mirror_refreshed": True,
        "departed_reps_hold_no_work": True,
        "every_segment_list_read": True,  # no segment list configured: nothing to read
        "every_batch_assigned": True,
        "hubspot_write_back_complete": True,
    }
    assert all(world.hubspot_contact(c)["properties"]["hubspot_owner_id"] for c in contacts)
    # the mirror makes reps without a call list: assigned contacts are not put on the
    # unassigned list instead
    assert world.list_members(UNASSIGNED_LIST) == []

    again = _materialize(world, receiver.url)
    assert _metadata(again, "reengagement_assignments")["members_processed"] == 0
    assert len(world.tasks()) == 10


def test_an_aborted_campaign_batch_turns_its_check_red(world: World) -> None:
    world.add_member(S.CAMPAIGN_TARGET, world.add_contact())
    result = _materialize(world)
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert not checks["every_batch_assigned"].passed
    assert checks["every_batch_assigned"].severity is dg.AssetCheckSeverity.ERROR


def test_a_missing_subscription_fails_with_a_clear_message(world: World) -> None:
    resources = _resources(world, subscription="")
    result = dg.materialize(
        [a for a in ownership_defs.assets or [] if a.key.to_user_string() == "sales_reps"],
        resources=resources,
        raise_on_error=False,
    )
    assert not result.success
    [failure] = [e for e in result.all_events if e.is_step_failure]
    assert "MORPHEUS_SUBSCRIPTION_ID is not set" in str(failure.step_failure_data.error)


def test_the_sensor_requests_a_run_only_when_work_is_waiting(world: World) -> None:
    resources = _resources(world)
    context = dg.build_sensor_context(resources=resources)
    assert isinstance(new_segment_members(context), dg.SkipReason)

    world.add_member(S.SUPPLIER, world.add_contact())
    first = new_segment_members(dg.build_sensor_context(resources=resources))
    again = new_segment_members(dg.build_sensor_context(resources=resources))
    assert len(first.run_requests) == 1
    assert first.run_requests[0].run_key == again.run_requests[0].run_key  # deduplicated
