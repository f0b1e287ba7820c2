"""Fixtures for the report tests: the report assets run with ``dg.materialize`` on the test's
own database (the row and SQL helpers are in :mod:`tests.support.reports`)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from morpheus_pipelines.assets.reports import daily_summary, weekly_metrics
from morpheus_pipelines.resources.hubspot import TargetListResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from tests.support.reports import DAY, LIST_ID, WEEK, Runner


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "morpheus-home"


@pytest.fixture
def run_daily(database_url: str, home: Path) -> Runner:
    def run(partition_key: str = DAY, *, url: str | None = None) -> dg.ExecuteInProcessResult:
        return dg.materialize(
            [daily_summary],
            partition_key=partition_key,
            resources={
                "warehouse": WarehouseResource(database_url=url or database_url, home=str(home)),
                "target_list": TargetListResource(list_id=LIST_ID),
                "ownership": OwnershipResource(),  # MORPHEUS_SUBSCRIPTION_ID unset
            },
        )

    return run


@pytest.fixture
def run_weekly(database_url: str, home: Path) -> Runner:
    def run(week_key: str = WEEK, *, url: str | None = None) -> dg.ExecuteInProcessResult:
        return dg.materialize(
            [weekly_metrics],
            partition_key=week_key,
            resources={
                "warehouse": WarehouseResource(database_url=url or database_url, home=str(home))
            },
        )

    return run
