"""Backfills and re-runs of older partitions never move live state backwards; tenants that
stop being selected are retired; re-runs leave no orphans (docs/partitions.md)."""

from __future__ import annotations

from datetime import datetime

import pytest

from morpheus_pipelines.assets.tenants.schedules import DAILY_ASSETS
from tests.support.pipeline import Pipeline, load_source, tenant

D, D1, D2 = "2026-11-25", "2026-11-26", "2026-11-27"
LIVE_TABLES = ("apac_active_tenants", "apac_sales_owned_tenants")
# Written on every run, whatever it changed.
VOLATILE = ("run_id", "updated_at", "decided_at", "scored_at")


def _cst(text: str) -> datetime:
    return datetime.fromisoformat(text + "+08:00")


def busy_tenants() -> list[dict]:
    """Tenants that were active on the newest day: a P1 score needs full recency credit."""
    recent = _cst(f"{D2}T10:00:00")
    return [
        tenant(
            f"t-busy-{n}",
            plan="enterprise",
            seats=500,
            active_users_30d=500,
            last_active_at=recent,
        )
        for n in range(3)
    ] + [tenant("t-quiet", plan="free", seats=1, active_users_30d=0), tenant("t-portal")]


def live_state(pipeline: Pipeline) -> dict[str, str]:
    return {t: pipeline.table_hash(t) for t in LIVE_TABLES}


def priorities(pipeline: Pipeline) -> dict[str, str]:
    return dict(pipeline.query("SELECT tenant_id, priority FROM apac_active_tenants"))


def process(pipeline: Pipeline, *days: str) -> None:
    for day in days:
        assert pipeline.materialize(DAILY_ASSETS, day).success


@pytest.fixture
def three_days(pipeline: Pipeline) -> Pipeline:
    load_source(pipeline.database_url, busy_tenants())
    process(pipeline, D, D1, D2)
    assert set(priorities(pipeline).values()) >= {"P0", "P1"}
    return pipeline


def test_single_partition_backfill_leaves_live_buckets_identical(three_days: Pipeline) -> None:
    pipeline = three_days
    before = live_state(pipeline)
    busy = {k: v for k, v in priorities(pipeline).items() if k.startswith("t-busy")}
    assert set(busy.values()) == {"P1"}
    summary_before = pipeline.table_hash("apac_daily_summary_tenants")

    result = pipeline.materialize(DAILY_ASSETS, D)

    assert result.success
    assert live_state(pipeline) == before
    # the partition's own rows were re-selected and re-scored by this run
    assert pipeline.query(
        "SELECT run_id FROM apac_candidate_selections WHERE partition_key = :p", p=D
    ) == [(result.run_id,)]
    assert pipeline.query(
        "SELECT count(*) FROM apac_tenant_score_snapshots WHERE partition_key = :p", p=D
    ) == [(len(busy_tenants()),)]
    # the day's stored Daily Summary is kept: the Active table no longer shows that day
    assert pipeline.table_hash("apac_daily_summary_tenants") == summary_before
    scores = result.asset_materializations_for_node("tenant_scores")[0].metadata
    assert scores["history_only_partitions"].value == [D]


def test_range_backfill_leaves_live_buckets_identical_and_checks_every_day(
    three_days: Pipeline,
) -> None:
    pipeline = three_days
    before = live_state(pipeline)
    result = pipeline.materialize(
        ["tenant_candidates", "enriched_tenants", "routed_tenants", "tenant_scores"],
        partition_range=(D, D1),
    )
    assert result.success
    assert live_state(pipeline) == before

    routed = result.asset_materializations_for_node("routed_tenants")[0].metadata
    assert set(routed["partitions"].value) == {D, D1}
    assert not any(day["live"] for day in routed["partitions"].value.values())
    evaluations = result.get_asset_check_evaluations()
    disjoint = next(e for e in evaluations if e.check_name == "every_candidate_routed_once")
    assert disjoint.metadata["violations_by_partition"].value == {D: 0, D1: 0}


def test_range_check_fails_when_any_day_of_the_range_fails(three_days: Pipeline) -> None:
    pipeline = three_days
    # A decision of the first day that matches no candidate: only a per-day check sees it.
    pipeline.execute(
        "INSERT INTO apac_tenant_candidate_versions (valid_from, valid_to, tenant_id, "
        f"source_type, run_id, forced_sales_owned) SELECT '{D}', min(partition_key), "
        "'t-ghost', 'active', 'x', false FROM apac_tenant_candidate_days "
        f"WHERE partition_key > '{D}'"
    )
    pipeline.execute(
        "CREATE FUNCTION keep_ghost() RETURNS trigger AS $$ BEGIN "
        "IF OLD.tenant_id = 't-ghost' THEN RETURN NULL; END IF; RETURN OLD; END $$ "
        "LANGUAGE plpgsql; CREATE TRIGGER keep_ghost "
        "BEFORE DELETE ON apac_tenant_candidate_versions "
        "FOR EACH ROW EXECUTE FUNCTION keep_ghost(); "
        "CREATE FUNCTION no_ghost_decision() RETURNS trigger AS $$ BEGIN "
        "IF NEW.tenant_id = 't-ghost' THEN RETURN NULL; END IF; RETURN NEW; END $$ "
        "LANGUAGE plpgsql; CREATE TRIGGER no_ghost_decision BEFORE INSERT "
        "ON apac_routing_decision_versions FOR EACH ROW EXECUTE FUNCTION no_ghost_decision();"
    )
    result = pipeline.materialize(["routed_tenants"], partition_range=(D, D2))
    check = next(
        e
        for e in result.get_asset_check_evaluations()
        if e.check_name == "every_candidate_routed_once"
    )
    assert not check.passed
    assert check.metadata["violations_by_partition"].value == {D: 1, D1: 0, D2: 0}


def test_a_tenant_that_stops_being_selected_is_retired_and_comes_back(
    pipeline: Pipeline,
) -> None:
    rows = busy_tenants()
    load_source(pipeline.database_url, rows)
    process(pipeline, D)
    pipeline.query(
        "UPDATE apac_active_tenants SET track_step = 'called' WHERE tenant_id = 't-busy-0' "
        "RETURNING 1"
    )
    p1_before = pipeline.query(
        "SELECT metric, dimension, value FROM apac_daily_summary_metrics "
        "WHERE partition_key = :p AND metric = 'active_tenants'",
        p=D,
    )

    # the tenant starts closing: no longer an active candidate
    rows[0]["status"] = "closing"
    load_source(pipeline.database_url, rows)
    process(pipeline, D1)
    row = pipeline.query(
        "SELECT retired_at IS NOT NULL, track_step, priority FROM apac_active_tenants "
        "WHERE tenant_id = 't-busy-0'"
    )
    assert row == [(True, "called", "P1")]  # kept, with its tracking fields, not deleted
    assert pipeline.query(
        "SELECT routing_rule, tenant_bucket FROM apac_routing_decisions "
        "WHERE partition_key = :p AND tenant_id = 't-busy-0'",
        p=D1,
    ) == [("retired", "active")]
    # not scored, not counted
    assert pipeline.query(
        "SELECT count(*) FROM apac_tenant_score_snapshots WHERE partition_key = :p "
        "AND tenant_id = 't-busy-0'",
        p=D1,
    ) == [(0,)]
    counts = dict(
        pipeline.query(
            "SELECT metric || ':' || dimension, value FROM apac_daily_summary_metrics "
            "WHERE partition_key = :p AND metric IN ('active_tenants', 'retired_active')",
            p=D1,
        )
    )
    assert counts["active_tenants:all"] == p1_before[0][2] - 1
    assert counts["retired_active:all"] == 1

    # selected again: no longer retired
    rows[0]["status"] = "paid"
    load_source(pipeline.database_url, rows)
    process(pipeline, D2)
    assert pipeline.query(
        "SELECT retired_at, track_step FROM apac_active_tenants WHERE tenant_id = 't-busy-0'"
    ) == [(None, "called")]


def test_one_day_retires_what_leaves_either_bucket(pipeline: Pipeline) -> None:
    """Both buckets' rows are looked up in one pass: a tenant leaving each is retired in its
    own table, with a retirement decision naming that bucket; the others are untouched."""
    rows = [*busy_tenants(), tenant("t-owned", sales_owner_email="bob@morpheus.example")]
    load_source(pipeline.database_url, rows)
    process(pipeline, D)
    assert pipeline.query(
        "SELECT count(*) FROM apac_sales_owned_tenants WHERE tenant_id = 't-owned'"
    ) == [(1,)]
    leaving = {"t-busy-0", "t-owned"}
    for row in rows:
        if row["id"] in leaving:
            row["status"] = "closing"
    load_source(pipeline.database_url, rows)
    process(pipeline, D1)
    retired = pipeline.query(
        "SELECT tenant_id, 'active' FROM apac_active_tenants WHERE retired_at IS NOT NULL "
        "UNION ALL SELECT tenant_id, 'sales_owned' FROM apac_sales_owned_tenants "
        "WHERE retired_at IS NOT NULL ORDER BY 1"
    )
    assert retired == [("t-busy-0", "active"), ("t-owned", "sales_owned")]
    assert (
        pipeline.query(
            "SELECT tenant_id, tenant_bucket FROM apac_routing_decisions "
            "WHERE partition_key = :p AND routing_rule = 'retired' ORDER BY 1",
            p=D1,
        )
        == retired
    )


def test_a_retirement_is_a_decision_of_its_day_only(pipeline: Pipeline) -> None:
    """The day after a retirement holds the day before's decisions until routing writes what
    changed; the retired tenant, no longer a candidate, is not one of them."""
    rows = busy_tenants()
    load_source(pipeline.database_url, rows)
    process(pipeline, D)
    rows[0]["status"] = "closing"
    load_source(pipeline.database_url, rows)
    process(pipeline, D1, D2)
    decisions = pipeline.query(
        "SELECT partition_key, routing_rule FROM apac_routing_decisions "
        "WHERE tenant_id = 't-busy-0' ORDER BY 1"
    )
    assert decisions == [(D, "default_active"), (D1, "retired")]


def test_the_newest_day_run_again_retires_what_its_earlier_run_routed(
    pipeline: Pipeline,
) -> None:
    """A tenant the newest day's first run routed, gone from the source when the same day
    runs again: retired, although its bucket row was written for this very day. Only the
    rows this run wrote for this partition are known to be selected, and left unexamined."""
    rows = busy_tenants()
    load_source(pipeline.database_url, rows)
    process(pipeline, D)
    assert pipeline.bucket_of("t-quiet") == "active"

    load_source(pipeline.database_url, [r for r in rows if r["id"] != "t-quiet"])
    result = pipeline.materialize(DAILY_ASSETS, D)

    assert result.success
    assert pipeline.query(
        "SELECT retired_at IS NOT NULL, partition_key, run_id FROM apac_active_tenants "
        "WHERE tenant_id = 't-quiet'"
    ) == [(True, D, result.run_id)]
    assert pipeline.query(
        "SELECT routing_rule FROM apac_routing_decisions WHERE partition_key = :p "
        "AND tenant_id = 't-quiet'",
        p=D,
    ) == [("retired",)]
    assert pipeline.query(
        "SELECT count(*) FROM apac_active_tenants WHERE retired_at IS NOT NULL"
    ) == [(1,)]


def test_one_run_over_two_days_retires_the_first_day_s_signup_on_the_second(
    pipeline: Pipeline,
) -> None:
    """A range backfill routes both days in one run: a tenant that is a candidate of the
    first day only (that day's signup) is retired by the second, although the run itself
    wrote its bucket row, for the first day."""
    signup_day = datetime.fromisoformat(f"{D}T12:00:00+08:00")
    rows = [tenant("t-old"), tenant("t-signup", status="free_trial", created_at=signup_day)]
    load_source(pipeline.database_url, rows)

    result = pipeline.materialize(DAILY_ASSETS, partition_range=(D, D1))

    assert result.success
    assert pipeline.query(
        "SELECT retired_at IS NOT NULL, partition_key, run_id FROM apac_active_tenants "
        "WHERE tenant_id = 't-signup'"
    ) == [(True, D1, result.run_id)]


def test_a_limited_selection_retires_nobody(pipeline: Pipeline) -> None:
    load_source(pipeline.database_url, busy_tenants())
    process(pipeline, D)
    result = pipeline.materialize(
        ["tenant_candidates", "enriched_tenants", "routed_tenants"],
        D1,
        run_config={"ops": {"tenant_candidates": {"config": {"limit": 2}}}},
    )
    assert result.success
    assert pipeline.query(
        "SELECT count(*) FROM apac_tenant_candidates WHERE partition_key = :p", p=D1
    ) == [(2,)]
    assert pipeline.query(
        "SELECT count(*) FROM apac_active_tenants WHERE retired_at IS NOT NULL"
    ) == [(0,)]


def test_a_rerun_after_the_source_changed_leaves_no_orphans(pipeline: Pipeline) -> None:
    rows = busy_tenants()
    load_source(pipeline.database_url, rows)
    process(pipeline, D, D1)
    # t-quiet is deleted from the source; the older day is re-run (a backfill)
    load_source(pipeline.database_url, [r for r in rows if r["id"] != "t-quiet"])
    result = pipeline.materialize(DAILY_ASSETS, D)
    assert result.success
    for table in ("apac_enriched_tenants", "apac_routing_decisions", "apac_tenant_score_snapshots"):
        assert pipeline.query(
            f"SELECT count(*) FROM {table} WHERE partition_key = :p AND tenant_id = 't-quiet'",
            p=D,
        ) == [(0,)], table
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks["every_candidate_routed_once"]
    # the live buckets still hold it until the newest day runs again, which retires it
    assert pipeline.bucket_of("t-quiet") == "active"
    assert pipeline.materialize(DAILY_ASSETS, D1).success
    assert pipeline.query(
        "SELECT routing_rule FROM apac_routing_decisions WHERE partition_key = :p "
        "AND tenant_id = 't-quiet'",
        p=D1,
    ) == [("retired",)]
    assert pipeline.query(
        "SELECT count(*) FROM apac_tenant_score_snapshots WHERE partition_key = :p "
        "AND tenant_id = 't-quiet'",
        p=D1,
    ) == [(0,)]


def test_fresh_means_this_runs_sync(pipeline: Pipeline) -> None:
    load_source(pipeline.database_url, busy_tenants())
    assert pipeline.materialize(DAILY_ASSETS, D).success
    assert pipeline.query(
        "SELECT DISTINCT snapshot_status FROM apac_routing_decisions WHERE partition_key = :p",
        p=D,
    ) == [("fresh",)]
    # routing alone, a run later: the snapshot it uses was not refreshed by this run
    assert pipeline.route(D1).success
    assert pipeline.query(
        "SELECT DISTINCT snapshot_status FROM apac_routing_decisions WHERE partition_key = :p",
        p=D1,
    ) == [("stale",)]
