"""When a delivery runs: the delivery assets' own automation condition, evaluated tick by tick
as ``report_delivery_sensor`` evaluates it in the daemon. The newest partition's report sets
off its delivery once; a backfilled older day sets off none (docs/reports.md, "Delivery")."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import dagster as dg

from morpheus_pipelines.assets.reports import daily_summary, daily_summary_delivery, weekly_metrics
from morpheus_pipelines.definitions import defs

CST = ZoneInfo("Asia/Shanghai")
TODAY = datetime(2026, 11, 19, 9, 0, tzinfo=CST)
NEWEST = "2026-11-18"  # the newest complete CST day at TODAY
OLDER = "2026-11-10"


def _materialised(instance: dg.DagsterInstance, asset: dg.AssetsDefinition, key: str) -> None:
    instance.report_runless_asset_event(dg.AssetMaterialization(asset.key, partition=key))


class Ticks:
    """Successive evaluations of the sensor's conditions, each carrying the last cursor."""

    def __init__(self, instance: dg.DagsterInstance) -> None:
        sensor = defs.resolve_sensor_def("report_delivery_sensor")
        assert isinstance(sensor, dg.AutomationConditionSensorDefinition)
        self.selection = sensor.asset_selection
        self.instance = instance
        self.cursor = None
        self.at = TODAY

    def requested(self) -> set[tuple[str, str]]:
        self.at += timedelta(minutes=1)
        result = dg.evaluate_automation_conditions(
            defs=defs,
            instance=self.instance,
            asset_selection=self.selection,
            evaluation_time=self.at,
            cursor=self.cursor,
        )
        self.cursor = result.cursor
        return {
            (key.to_user_string(), partition)
            for key, subset in _requested_subsets(result).items()
            for partition in subset
        }


def _requested_subsets(result) -> dict[dg.AssetKey, list[str]]:
    return {
        r.key: list(r.true_subset.expensively_compute_partition_keys())
        for r in result.results
        if r.true_subset.size
    }


def test_the_newest_report_sets_off_its_delivery_once_and_a_backfill_none() -> None:
    with dg.instance_for_test() as instance:
        ticks = Ticks(instance)
        assert ticks.requested() == set()  # no report yet: nothing to deliver

        _materialised(instance, daily_summary, NEWEST)
        assert ticks.requested() == {("daily_summary_delivery", NEWEST)}

        _materialised(instance, daily_summary_delivery, NEWEST)
        assert ticks.requested() == set()  # delivered: not requested again

        _materialised(instance, daily_summary, OLDER)  # a backfill of an older day
        assert ticks.requested() == set()

        _materialised(instance, daily_summary, NEWEST)  # the newest day re-run
        assert ticks.requested() == {("daily_summary_delivery", NEWEST)}


def test_the_weekly_metrics_of_the_newest_week_set_off_its_delivery() -> None:
    with dg.instance_for_test() as instance:
        ticks = Ticks(instance)
        week = "2026-11-09"  # the newest complete week (Monday) at TODAY
        _materialised(instance, weekly_metrics, "2026-11-02")
        assert ticks.requested() == set()

        _materialised(instance, weekly_metrics, week)
        assert ticks.requested() == {("weekly_metrics_delivery", week)}
