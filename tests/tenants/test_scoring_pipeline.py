"""002 §12 "Scoring": both buckets, the P0 override, the allowlist boundary, the history."""

from __future__ import annotations

from tests.support.pipeline import Pipeline, load_source
from tests.support.tenants import PARTITION
from tests.tenants.test_routing_pipeline import base_tenants


def _routed_and_scored(pipeline: Pipeline):
    load_source(pipeline.database_url, base_tenants())
    assert pipeline.snapshot().success
    assert pipeline.route(PARTITION).success
    return pipeline.score(PARTITION)


def test_both_buckets_scored_and_p0_only_for_targets(pipeline: Pipeline) -> None:
    result = _routed_and_scored(pipeline)
    assert result.success
    rows = {
        r[0]: r[1:]
        for r in pipeline.query(
            "SELECT tenant_id, tenant_bucket, priority, priority_reason, calculated_priority, "
            "total_score, contributions, score_model_version FROM apac_tenant_score_snapshots "
            "WHERE partition_key = :p",
            p=PARTITION,
        )
    }
    # a HubSpot target keeps its calculated priority on record, and is P0 finally
    bucket, priority, reason, calculated, total, contributions, version = rows["t-portal"]
    assert (bucket, priority, reason) == ("active", "P0", "hubspot_target_account")
    assert calculated in ("P1", "P2", "P3")
    assert abs(sum(contributions.values()) - float(total)) < 0.011
    assert version
    # Sales-owned tenants are scored with the same model, never forced to P0
    assert rows["t-sales"][:2] == ("sales_owned", rows["t-sales"][3])
    assert rows["t-sales"][2] == "score"
    # forced ids are not scored and keep P0
    assert "t-forced-1" not in rows
    assert pipeline.query(
        "SELECT priority, total_score FROM apac_sales_owned_tenants WHERE tenant_id = 't-forced-1'"
    ) == [("P0", None)]
    # the bucket rows carry the final priority
    assert pipeline.query(
        "SELECT priority, previous_priority, priority_changed_partition FROM apac_active_tenants "
        "WHERE tenant_id = 't-portal'"
    ) == [("P0", None, PARTITION)]
    assert pipeline.query(
        "SELECT count(*) FROM apac_active_tenants WHERE priority = 'P0' AND NOT hubspot_target"
    ) == [(0,)]
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"routing_messages_allowlisted": True}


def test_rescoring_is_idempotent(pipeline: Pipeline) -> None:
    _routed_and_scored(pipeline)
    tables = ["apac_active_tenants", "apac_sales_owned_tenants", "apac_tenant_score_snapshots"]
    before = {t: pipeline.table_hash(t) for t in tables}
    assert pipeline.score(PARTITION).success
    assert {t: pipeline.table_hash(t) for t in tables} == before


def test_invalid_routing_message_is_rejected_and_reported(pipeline: Pipeline) -> None:
    _routed_and_scored(pipeline)
    pipeline.query(
        # Another override is another number, as a version written for it draws.
        "UPDATE apac_routing_decision_versions SET priority_override = 'P1', "
        "priority_reason = 'vip', version_number = nextval('apac_tenant_version_numbers') "
        "WHERE tenant_id = 't-default' RETURNING 1"
    )
    # Its score of the first run is still stored: a rejected tenant's is removed from the day.
    assert pipeline.query(
        "SELECT count(*) FROM apac_tenant_score_snapshots WHERE tenant_id = 't-default'"
    ) == [(1,)]
    result = pipeline.score(PARTITION)
    assert result.success
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert checks["routing_messages_allowlisted"].passed is False
    assert pipeline.query(
        "SELECT count(*) FROM apac_tenant_score_snapshots WHERE tenant_id = 't-default'"
    ) == [(0,)]
    assert pipeline.query("SELECT count(*) FROM apac_tenant_score_snapshots")[0][0] > 5
