"""Every asset check can fail on some real input (a check that cannot fail is a defect).

Routing and scoring checks: the pipeline runs clean, then one defect is planted in the tables
(what a bug, a manual edit or a concurrent writer could leave) and the check's figure turns
non-zero. Snapshot validation rules: one fetched list per rule that breaks exactly it.
``snapshot_refresh_succeeded`` fails in tests/tenants/test_routing_pipeline.py (a 503),
``forced_ids_in_source`` there too, ``snapshot_freshness`` in tests/test_freshness.py and
``produced_by_deadline`` in tests/reports/test_daily_summary_deadline.py.
"""

from __future__ import annotations

import pytest

from morpheus_pipelines.assets.tenants.routing import ROUTING_CHECKS
from morpheus_pipelines.assets.tenants.schedules import DAILY_ASSETS
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.tenants.rules.snapshot_validation import (
    COMPLETE,
    VALIDATION_RULES,
    FetchedList,
    validate,
)
from morpheus_pipelines.tenants.store import RoutingDecisionRepository
from tests.support.pipeline import Pipeline, load_source, tenant
from tests.support.tenants import PARTITION

FORCED = "t-forced-1"

# check -> SQL that plants one defect in a correctly routed partition
DEFECTS = {
    "buckets_disjoint": (
        "INSERT INTO apac_sales_owned_tenants (tenant_id, hubspot_target, updated_at) "
        "VALUES ('t-a', false, now())"
    ),
    "every_candidate_routed_once": (
        "DELETE FROM apac_routing_decision_versions WHERE tenant_id = 't-a' "
        f"AND valid_from <= '{PARTITION}' AND (valid_to IS NULL OR valid_to > '{PARTITION}')"
    ),
    "decisions_match_buckets": "UPDATE apac_active_tenants SET retired_at = now() "
    "WHERE tenant_id = 't-b'",
    "forced_ids_sales_owned": f"DELETE FROM apac_sales_owned_tenants WHERE tenant_id = '{FORCED}'",
}


@pytest.fixture
def routed(pipeline: Pipeline) -> Pipeline:
    load_source(
        pipeline.database_url, [tenant("t-a"), tenant("t-b"), tenant(FORCED, status="closing")]
    )
    assert pipeline.materialize(DAILY_ASSETS, PARTITION).success
    return pipeline


def figures(pipeline: Pipeline) -> dict[str, int]:
    with get_session(pipeline.database_url) as session:
        return RoutingDecisionRepository().check_figures(
            session,
            partition_key=PARTITION,
            forced_ids=frozenset({FORCED, "t-forced-2", "t-forced-3"}),
            live=True,
        )


def test_every_routing_check_has_a_planted_defect() -> None:
    assert set(DEFECTS) == set(ROUTING_CHECKS)


@pytest.mark.parametrize("check", sorted(DEFECTS))
def test_routing_check_fails_on_its_defect(routed: Pipeline, check: str) -> None:
    assert figures(routed) == dict.fromkeys(ROUTING_CHECKS, 0)
    routed.execute(DEFECTS[check])
    observed = figures(routed)
    assert observed[check] >= 1, observed


def test_a_decision_without_its_candidate_is_not_routed_once(routed: Pipeline) -> None:
    """The other direction of ``every_candidate_routed_once``: a decision whose tenant is not
    a candidate of the partition, unless it records the tenant's retirement."""
    routed.execute(
        "DELETE FROM apac_tenant_candidate_versions WHERE tenant_id = 't-b' "
        f"AND valid_from <= '{PARTITION}' AND (valid_to IS NULL OR valid_to > '{PARTITION}')"
    )
    assert figures(routed)["every_candidate_routed_once"] == 1
    routed.execute(
        "UPDATE apac_routing_decision_versions SET routing_rule = 'retired' WHERE tenant_id = "
        f"'t-b' AND valid_from <= '{PARTITION}' AND (valid_to IS NULL OR valid_to > '{PARTITION}')"
    )
    assert figures(routed)["every_candidate_routed_once"] == 0


def test_routing_check_fails_in_the_asset(routed: Pipeline) -> None:
    """The figures reach the asset check: a row planted in the other bucket, then the
    partition is re-routed. Routing deletes the tenant from the bucket it does not belong to,
    so the defect must survive the run: a trigger keeps re-inserting it."""
    routed.execute(
        "CREATE FUNCTION plant() RETURNS trigger AS $$ BEGIN "
        "INSERT INTO apac_sales_owned_tenants (tenant_id, hubspot_target, updated_at) "
        "VALUES ('t-a', false, now()) ON CONFLICT DO NOTHING; RETURN NULL; END $$ "
        "LANGUAGE plpgsql; CREATE TRIGGER plant AFTER INSERT ON apac_routing_decision_versions "
        "FOR EACH STATEMENT EXECUTE FUNCTION plant();"
    )
    result = routed.materialize(["routed_tenants"], PARTITION)
    evaluations = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert not evaluations["buckets_disjoint"].passed
    assert evaluations["buckets_disjoint"].metadata["violations"].value >= 1


def test_allowlist_check_fails_on_an_override_routing_never_sends(routed: Pipeline) -> None:
    routed.execute(
        "UPDATE apac_routing_decision_versions SET priority_override = 'P1', "
        "version_number = nextval('apac_tenant_version_numbers') WHERE tenant_id = "
        f"'t-a' AND valid_from <= '{PARTITION}' AND (valid_to IS NULL OR valid_to > '{PARTITION}')"
    )
    result = routed.score(PARTITION)
    (check,) = result.get_asset_check_evaluations()
    assert check.check_name == "routing_messages_allowlisted" and not check.passed


def _valid_list() -> FetchedList:
    return FetchedList(
        list_id="19544",
        processing_status=COMPLETE,
        list_size=2,
        pages_fetched=1,
        pagination_complete=True,
        member_ids=["1", "2"],
        companies={"1": {}, "2": {}},
        batches=1,
    )


def _break(rule: str) -> FetchedList:
    fetched = _valid_list()
    if rule == "list_processing_complete":
        fetched.processing_status = "PROCESSING"
    elif rule == "every_membership_page_fetched":
        fetched.pagination_complete = False
    elif rule == "company_ids_unique":
        fetched.member_ids = ["1", "1", "2"]
        fetched.list_size = 2
    elif rule == "membership_count_matches_list_size":
        fetched.list_size = 3
    elif rule == "every_member_has_company":
        fetched.companies = {"1": {}}
    elif rule == "no_failed_company_batch":
        fetched.failed_batches = 1
    return fetched


def test_a_valid_list_passes_every_rule() -> None:
    assert all(r.passed for r in validate(_valid_list()))


@pytest.mark.parametrize("rule", sorted(VALIDATION_RULES))
def test_each_snapshot_rule_fails_on_its_input(rule: str) -> None:
    results = {r.rule: r.passed for r in validate(_break(rule))}
    assert results[rule] is False, results
