"""HubSpot answers that mean a setting is wrong fail the snapshot asset, naming the variable;
an outage (429, 5xx, timeouts) keeps the asset green and routing going. The real asset, the
emulator over HTTP, the real warehouse."""

from __future__ import annotations

from typing import Any

import dagster as dg
import pytest

from morpheus_pipelines.assets.hubspot.snapshot import REFRESH_CHECK, hubspot_target_accounts
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.resources import HubSpotResource, TargetListResource, WarehouseResource
from tests.support.hubspot import LIST_ID, TOKEN


def _materialise(
    emulator: HubSpotEmulator, database_url: str, *, list_id: str = LIST_ID, token: str = TOKEN
) -> dg.ExecuteInProcessResult:
    resources: dict[str, Any] = {
        "hubspot": HubSpotResource(
            base_url=emulator.base_url,
            private_app_token=token,
            request_timeout=1.0,
            retry_count=1,
            requests_per_10s=1000,
            max_backoff_seconds=0.0,
        ),
        "target_list": TargetListResource(list_id=list_id),
        "warehouse": WarehouseResource(database_url=database_url),
    }
    return dg.materialize([hubspot_target_accounts], resources=resources, raise_on_error=False)


def _failure(result: dg.ExecuteInProcessResult) -> dg.Failure | str:
    (event,) = [e for e in result.all_events if e.is_step_failure]
    return event.step_failure_data.error.message


def _recorded_failure(database_url: str) -> tuple[str, str]:
    from sqlalchemy import create_engine, text

    engine = create_engine(database_url)
    with engine.connect() as connection:
        row = connection.execute(
            text("SELECT last_attempt_status, last_error FROM apac_hubspot_target_sync_state")
        ).one()
    engine.dispose()
    return row[0], row[1]


@pytest.mark.parametrize(
    ("inject", "status"),
    [
        (lambda e: e.unauthorized(endpoint="list", times=None), 401),
        (lambda e: e.fail(403, endpoint="memberships", times=None), 403),
    ],
    ids=["401", "403"],
)
def test_a_refused_token_fails_the_asset_naming_the_token_variable(
    emulator: HubSpotEmulator, database_url: str, inject, status: int
) -> None:
    inject(emulator)
    result = _materialise(emulator, database_url)

    assert not result.success
    message = _failure(result)
    assert "HUBSPOT_PRIVATE_APP_TOKEN" in message and f"HTTP {status}" in message
    assert TOKEN not in message
    # The attempt is still recorded, so the snapshot's health says it failed.
    assert _recorded_failure(database_url)[0] == "failed"


def test_a_wrong_token_fails_the_asset_naming_the_token_variable(
    emulator: HubSpotEmulator, database_url: str
) -> None:
    result = _materialise(emulator, database_url, token="pat-na1-not-the-token")
    assert not result.success
    assert "HUBSPOT_PRIVATE_APP_TOKEN" in _failure(result)


def test_an_unknown_list_fails_the_asset_naming_the_list_variable(
    emulator: HubSpotEmulator, database_url: str
) -> None:
    result = _materialise(emulator, database_url, list_id="404404")
    assert not result.success
    message = _failure(result)
    assert "HUBSPOT_TARGET_LIST_ID" in message and "404404" in message
    assert emulator.log.count("list") == 1  # a configuration error is not retried


@pytest.mark.parametrize(
    "inject",
    [
        lambda e: e.fail(503, times=None),
        lambda e: e.rate_limit("TEN_SECONDLY_ROLLING", retry_after=0, times=None),
        lambda e: e.slow(2.5, endpoint="list", times=None),
    ],
    ids=["503", "429", "timeout"],
)
def test_an_outage_keeps_the_asset_green_and_the_checks_red(
    emulator: HubSpotEmulator, database_url: str, inject
) -> None:
    inject(emulator)
    result = _materialise(emulator, database_url)

    assert result.success, "HubSpot being down must not fail the run: routing carries on"
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks[REFRESH_CHECK] is False
    (materialisation,) = result.asset_materializations_for_node("hubspot_target_accounts")
    assert materialisation.metadata["snapshot_status"].value == "unavailable"
    assert _recorded_failure(database_url)[0] == "failed"
