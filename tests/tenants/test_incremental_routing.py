"""What a quiet day does, and what each kind of change invalidates (docs/pipeline.md,
"Incremental routing"; docs/scoring.md, "Incremental scoring")."""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.tenants.rules import routing_plan
from morpheus_pipelines.tenants.rules.routing import PRIORITY_REASON
from morpheus_pipelines.tenants.rules.scoring import score_tenants
from morpheus_pipelines.tenants.steps.scoring import RoutingUnfinished, as_of, score_partition
from morpheus_pipelines.tenants.store.store import TenantStore
from tests.support.heap import frozen_at_collections
from tests.support.incremental import (
    BETA_LISTED,
    FIRST_DAY,
    MODEL,
    OTHER_MODEL,
    TENANT_IDS,
    quiet_day,
    quiet_tenant,
)

DAY_1, DAY_2, DAY_3 = ((FIRST_DAY + timedelta(days=n)).isoformat() for n in range(3))


def live_days(incremental, full, day, *partition_keys):
    """Both warehouses through ``day`` on each of ``partition_keys``, equal after each; the
    incremental side's results of the last one."""
    for partition_key in partition_keys:
        result = incremental.live_through(partition_key, day)
        full.live_through(partition_key, day)
        assert incremental.state(partition_key) == full.state(partition_key), partition_key
    return result


def live_both(warehouses, *days):
    """Both warehouses through ``days``, one a day from the first; the incremental side's
    results of the last one."""
    incremental, full = warehouses()
    for n, day in enumerate(days):
        result = live_days(incremental, full, day, (FIRST_DAY + timedelta(days=n)).isoformat())
    return result


def test_a_quiet_day_copies_every_decision_and_score(warehouses) -> None:
    routing, scoring = live_both(warehouses, quiet_day(), quiet_day())
    assert routing.carried == len(TENANT_IDS)
    assert routing.totals.tenants == 0
    assert scoring.carried == len(TENANT_IDS)
    assert scoring.scored == 0
    assert routing.plan == f"changes since {DAY_1}"


def test_the_first_day_and_a_backfill_route_everyone(warehouses) -> None:
    routing, scoring = live_both(warehouses, quiet_day())
    assert (routing.carried, routing.totals.tenants) == (0, len(TENANT_IDS))
    assert routing.plan == "no earlier live routing to start from"
    assert scoring.carried == 0

    incremental, full = warehouses()
    for partition_key in (DAY_1, DAY_2, DAY_1):  # the last one: a backfill of DAY_1
        routing, _ = incremental.live_through(partition_key, quiet_day())
        full.live_through(partition_key, quiet_day())
        assert incremental.state(partition_key) == full.state(partition_key)
    assert (routing.live, routing.carried) == (False, 0)
    assert routing.plan == "a newer partition owns the live buckets"
    # The backfill is history: the next re-run of DAY_2 does not start from it.
    routing, _ = incremental.live_through(DAY_2, quiet_day())
    full.live_through(DAY_2, quiet_day())
    assert incremental.state(DAY_2) == full.state(DAY_2)
    assert routing.plan == "no earlier live routing to start from"


def test_a_snapshot_change_reroutes_only_the_tenants_whose_keys_it_touches(warehouses) -> None:
    day_1 = quiet_day()
    day_1["tenants"][4] = quiet_tenant(email="it@beta.co.jp")
    day_1["tenants"][5] = quiet_tenant(email="ops@beta.co.jp", name="Gamma")
    day_2 = quiet_day(tenants=day_1["tenants"])
    # Beta is listed today: the two tenants with its domain become target accounts.
    day_2["companies"][1] = BETA_LISTED
    routing, _ = live_both(warehouses, day_1, day_2)
    assert routing.totals.tenants == 2
    assert routing.carried == len(TENANT_IDS) - 2
    assert routing.summary["by_rule"]["hubspot_target_account"] == 2


def test_a_sales_list_or_forced_ids_change_reroutes_their_tenants_only(warehouses) -> None:
    day_1 = quiet_day()
    day_1["tenants"][2] = quiet_tenant(
        email="ops@t2.example.com", sales_owner_email="rep1@corp.example"
    )
    day_2 = quiet_day(tenants=day_1["tenants"], sales={"rep1@corp.example"})
    day_3 = quiet_day(tenants=day_1["tenants"], sales={"rep1@corp.example"}, forced={"t6"})
    routing, _ = live_both(warehouses, day_1, day_2)
    assert (routing.totals.tenants, routing.summary["by_rule"]["apac_sales_owner"]) == (1, 1)
    routing, _ = live_both(warehouses, day_1, day_2, day_3)
    assert routing.totals.tenants == 1
    assert routing.summary["by_rule"]["forced_sales_owned"] == 1


def test_a_model_change_rescores_everyone_once(warehouses) -> None:
    quiet, other = quiet_day(), quiet_day(other_model=True)
    _, scoring = live_both(warehouses, quiet, other)
    assert (scoring.scored, scoring.carried) == (len(TENANT_IDS), 0)
    _, scoring = live_both(warehouses, quiet, other, other)
    assert (scoring.scored, scoring.carried) == (0, len(TENANT_IDS))


def test_tenants_whose_recency_moves_get_their_points_moved_on_read(warehouses) -> None:
    day = quiet_day()
    # 20 days inactive: on the slope, one more day costs points. 200 days: no credit either
    # day. 1 day: full credit either day.
    for n, days in ((0, 20), (1, 200), (2, 1)):
        day["tenants"][n] = quiet_tenant(email=f"ops@t{n}.example.com", inactive_days=days)
    # The same timestamps a day later: only the tenant on the slope loses points; no score is
    # written, the day reads it with its recency points moved, and its bucket row follows
    # (equal to the full recomputation: live_both).
    _, scoring = live_both(warehouses, day, day)
    assert (scoring.scored, scoring.carried) == (0, len(TENANT_IDS))
    assert "snapshots" not in scoring.rows_written
    assert (scoring.rows_written["active"], scoring.rows_written["sales_owned"]) == (1, 0)


def test_a_day_scored_behind_routing_reaches_the_buckets_with_the_live_day(warehouses) -> None:
    """A catch-up routes two days, then scores both: the first is not live (routing has a
    newer day), so its new score of a changed tenant reaches the bucket row only when the
    live day is scored, which stores nothing new for that tenant. It finds the row among
    those routing wrote since the last live scoring (equal to the full recomputation)."""
    changed = quiet_day()
    changed["tenants"][0] = quiet_tenant(email="ops@t0.example.com", plan="enterprise")
    incremental, full = warehouses()
    scored = {}
    for warehouse in (incremental, full):
        warehouse.live_through(DAY_1, quiet_day())
        warehouse.route(DAY_2, changed)
        warehouse.route(DAY_3, changed)
        assert not warehouse.score(DAY_2, changed).live
        scored[warehouse] = warehouse.score(DAY_3, changed)
    assert incremental.state(DAY_3) == full.state(DAY_3)
    live = scored[incremental]
    assert (live.scored, live.rows_written["active"]) == (0, 1)


@pytest.mark.parametrize("one_run", [False, True])
def test_a_model_change_scored_behind_routing_reaches_the_buckets(warehouses, one_run) -> None:
    """Routing runs ahead: the first day after the last live scoring is scored with another
    model while not live, so it writes everyone's new score without touching a bucket row,
    and the live day after it stores nothing new. The live day compares the scores other runs
    wrote since the last live scoring (or, scored in one run with the day before, as a
    backfill of the range is, those written before it began): equal to the full
    recomputation."""
    day = quiet_day()
    # 45 days inactive: some recency credit with the model, none with the other one, and
    # outside the range whose recency may move between the two live days.
    day["tenants"][0] = quiet_tenant(email="ops@t0.example.com", inactive_days=45)
    incremental, full = warehouses()
    for warehouse in (incremental, full):
        warehouse.live_through(DAY_1, day)
        warehouse.route(DAY_2, day)
        warehouse.route(DAY_3, day)
        warehouse.model = OTHER_MODEL
        run_id = "run-catch-up" if one_run else None
        assert not warehouse.score(DAY_2, day, run_id=run_id).live
        warehouse.score(DAY_3, day, run_id=run_id)
    assert incremental.state(DAY_3) == full.state(DAY_3)


def test_a_move_across_a_threshold_records_the_priority_change(warehouses) -> None:
    """Nine tenants 37.0-38.6 days inactive: with 38.86 points from their other signals, those
    that lose their P2 overnight (37.4-38.2 days: 45 points need 38.3 days or fewer) get
    ``previous_priority`` P2 and the day in ``priority_changed_partition``, as when scored in
    Python (equal to the full recomputation: live_both)."""
    day = quiet_day()
    for n in range(len(TENANT_IDS)):
        day["tenants"][n] = quiet_tenant(email=f"ops@t{n}.example.com", inactive_days=37 + n / 5)
    incremental, full = warehouses()
    _, scoring = live_days(incremental, full, day, DAY_1, DAY_2)
    assert (scoring.scored, scoring.carried) == (0, len(TENANT_IDS))
    with incremental.session() as session:
        changed = session.execute(
            text(
                "SELECT tenant_id FROM apac_active_tenants WHERE priority_changed_partition = :p "
                "AND previous_priority = 'P2' AND priority = 'P3' ORDER BY tenant_id"
            ),
            {"p": DAY_2},
        ).scalars()
        assert list(changed) == ["t2", "t3", "t4", "t5", "t6"]


def test_without_the_move_on_read_every_tenant_is_scored_in_python(warehouses) -> None:
    day = quiet_day()
    day["tenants"][0] = quiet_tenant(email="ops@t0.example.com", inactive_days=20)
    incremental, full = warehouses()
    incremental.shift_recency = False
    _, scoring = live_days(incremental, full, day, DAY_1, DAY_2)
    assert (scoring.scored, scoring.carried) == (len(TENANT_IDS), 0)
    with incremental.session() as session:
        moving = session.execute(
            text("SELECT count(*) FROM apac_tenant_score_versions WHERE recency_key IS NULL")
        ).scalar_one()
    assert moving == 0


def test_a_target_account_on_the_slope_keeps_p0_when_its_points_move(warehouses) -> None:
    """The override survives the move: P0 from the copied score, the calculated priority
    from the moved total (equal to the full recomputation: live_both)."""
    day = quiet_day()
    day["companies"][1] = BETA_LISTED
    day["tenants"][4] = quiet_tenant(email="it@beta.co.jp", inactive_days=20)
    incremental, full = warehouses()
    _, scoring = live_days(incremental, full, day, DAY_1, DAY_2)
    assert (scoring.scored, scoring.carried) == (0, len(TENANT_IDS))
    with incremental.session() as session:
        rows = session.execute(
            text(
                "SELECT partition_key, priority, priority_reason, total_score "
                "FROM apac_tenant_score_snapshots WHERE tenant_id = 't4' ORDER BY partition_key"
            )
        ).all()
    assert [(r.priority, r.priority_reason) for r in rows] == [("P0", PRIORITY_REASON)] * 2
    assert rows[1].total_score < rows[0].total_score


def test_the_movers_bucket_rows_are_updated_by_index_probes(warehouses) -> None:
    """The day's movers are a minority of the bucket rows: their update probes the table's key
    once per mover instead of hashing every row (docs/decisions/0069). A statement trigger
    records the planner's settings under which each update of the Active table ran."""
    day = quiet_day()
    day["tenants"][0] = quiet_tenant(email="ops@t0.example.com", inactive_days=20)
    incremental, _ = warehouses()
    incremental.live_through(DAY_1, day)
    with incremental.session() as session:
        session.execute(text("CREATE TABLE update_plans (query text, joins text)"))
        session.execute(
            text(
                "CREATE FUNCTION record_update_plan() RETURNS trigger LANGUAGE plpgsql AS $$ "
                "BEGIN INSERT INTO update_plans VALUES (current_query(), "
                "current_setting('enable_hashjoin') || ' ' "
                "|| current_setting('enable_mergejoin')); "
                "RETURN NULL; END $$"
            )
        )
        session.execute(
            text(
                "CREATE TRIGGER record_update_plan AFTER UPDATE ON apac_active_tenants "
                "FOR EACH STATEMENT EXECUTE FUNCTION record_update_plan()"
            )
        )
    incremental.live_through(DAY_2, day)
    with incremental.session() as session:
        plans = session.execute(text("SELECT query, joins FROM update_plans")).all()
    assert [joins for query, joins in plans if "_moved_scores" in query] == ["off off"]


def test_a_capped_model_scores_recency_moves_in_python(warehouses) -> None:
    """Weights adding up to 100.01 (within the loader's tolerance) can reach the cap, where
    moving one signal's points is not exact: every tenant is scored in Python every day."""
    capped = dataclasses.replace(
        MODEL, version="test-capped", weights={**MODEL.weights, "recency": 15.01}
    )
    assert not capped.total_never_capped
    day = quiet_day()
    day["tenants"][0] = quiet_tenant(email="ops@t0.example.com", inactive_days=20)
    incremental, full = warehouses()
    incremental.model = full.model = capped
    _, scoring = live_days(incremental, full, day, DAY_1, DAY_2)
    assert (scoring.scored, scoring.carried) == (len(TENANT_IDS), 0)


def test_a_backfill_moves_recency_in_its_own_snapshots_only(warehouses) -> None:
    """A re-run of an older day (a newer one owns the live buckets) copies its movers' moved
    scores into its own snapshots and leaves the bucket rows to the newer day."""
    day = quiet_day()
    day["tenants"][0] = quiet_tenant(email="ops@t0.example.com", inactive_days=20)
    incremental, full = warehouses()
    _, scoring = live_days(incremental, full, day, DAY_1, DAY_2, DAY_3, DAY_2)
    assert (scoring.live, scoring.scored, scoring.carried) == (False, 0, len(TENANT_IDS))
    assert "update_buckets" not in scoring.phases


def test_activity_in_the_future_is_scored_in_python(warehouses) -> None:
    """A ``last_active_at`` after the moment scored may be corrupt: its recency is the Python
    model's to judge, never moved in SQL. 1.5 days ahead of the first day's end: beyond the
    day's tolerance then, half a day ahead of the second day's end."""
    day = quiet_day()
    day["tenants"][0] = quiet_tenant(email="ops@t0.example.com", inactive_days=-1.5)
    _, scoring = live_both(warehouses, day, day)
    assert (scoring.scored, scoring.carried) == (1, len(TENANT_IDS) - 1)


def test_a_score_stored_as_scored_is_stored_again_when_a_later_read_judges_it_anew(
    warehouses,
) -> None:
    """Activity after the day's end is judged against when the candidates were read: 1.5
    days ahead of a read at the day's end is beyond the tolerance, of a read two days later
    it is real. Scored again after the later read, with the same input versions, the new
    total is stored: a score stored as scored names its total in ``recency_key``."""
    day = quiet_day()
    day["tenants"][0] = quiet_tenant(email="ops@t0.example.com", inactive_days=-1.5)
    incremental, _ = warehouses()
    incremental.route(DAY_1, day)

    def scored_after_a_read(days_after_the_day: int, run_id: str) -> tuple[float, float]:
        read_at = as_of(DAY_1) + timedelta(days=days_after_the_day)
        with incremental.session() as session:
            session.execute(
                text(
                    "UPDATE apac_candidate_selections SET selected_at = :at "
                    "WHERE partition_key = :p"
                ),
                {"at": read_at, "p": DAY_1},
            )
            chunk = TenantStore(session).scores.read_scoring_input(
                session, partition_key=DAY_1, after=None, limit=100, tenant_ids=["t0"]
            )
        incremental.score(DAY_1, day, run_id=run_id)
        expected = score_tenants(chunk, model=MODEL, as_of=as_of(DAY_1), observed_at=read_at)
        return stored_total(incremental, DAY_1, "t0"), float(expected["total_score"].iloc[0])

    stored, expected = scored_after_a_read(0, "read-at-the-day-s-end")
    assert stored == expected
    later, expected_later = scored_after_a_read(2, "read-two-days-later")
    assert later == expected_later and later != stored


def stored_total(warehouse, partition_key: str, tenant_id: str) -> float:
    with warehouse.session() as session:
        return float(
            session.execute(
                text(
                    "SELECT total_score FROM apac_tenant_score_snapshots "
                    "WHERE partition_key = :p AND tenant_id = :t"
                ),
                {"p": partition_key, "t": tenant_id},
            ).scalar_one()
        )


def test_the_allowlists_still_reject_on_the_incremental_path(warehouses) -> None:
    """A routing message outside the allowlists (docs/pipeline.md) is rejected, never
    scored, even when every other tenant's score is copied."""
    incremental, _ = warehouses()
    incremental.live_through(DAY_1, quiet_day())
    day_2 = quiet_day()
    incremental.live_through(DAY_2, day_2)
    with incremental.session() as session:
        session.execute(
            text(
                # Another override is another number, as a version written for it draws.
                "UPDATE apac_routing_decision_versions SET priority_override = 'P1', "
                "version_number = nextval('apac_tenant_version_numbers') "
                "WHERE tenant_id = 't3' AND valid_from <= :p "
                "AND (valid_to IS NULL OR valid_to > :p)"
            ),
            {"p": DAY_2},
        )
    scoring = score_partition(
        incremental.session, partition_key=DAY_2, run_id="rescore", model=MODEL, batch_size=3
    )
    assert scoring.rejected == 1
    assert scoring.rejection_reasons == {"priority_override_not_allowlisted": 1}
    assert scoring.carried == len(TENANT_IDS) - 1


def test_ignoring_what_changed_in_the_rules_inputs_would_be_caught(warehouses, monkeypatch) -> None:
    """The comparison can fail: an incremental path that carried every unchanged tenant
    without looking at the snapshot's changed keys keeps two target accounts Active-default."""
    day_1 = quiet_day()
    day_1["tenants"][4] = quiet_tenant(email="it@beta.co.jp")
    day_2 = quiet_day(tenants=day_1["tenants"])
    day_2["companies"][1] = BETA_LISTED
    incremental, full = warehouses()
    for partition_key, day in ((DAY_1, day_1), (DAY_2, day_2)):
        if partition_key == DAY_2:
            monkeypatch.setattr(
                routing_plan, "changed_keys", lambda before, after: {"portal_key": frozenset()}
            )
        incremental.live_through(partition_key, day)
        full.live_through(partition_key, day)
    assert incremental.state(DAY_2)["decisions"] != full.state(DAY_2)["decisions"]


def test_an_answer_that_changes_alone_reroutes_its_tenant(warehouses) -> None:
    """A tenant whose candidate is the day before's but whose enrichment answer changed (the
    service found its website) is decided again, not carried: its routing inputs changed."""
    day_2 = quiet_day()
    day_2["tenants"][4] = quiet_tenant(email="ops@t4.example.com", website="alpha.com.sg")
    routing, _ = live_both(warehouses, quiet_day(), day_2)
    assert routing.carried == len(TENANT_IDS) - 1
    assert routing.summary["by_match_method"] == {"official_website": 1}


def test_scoring_refuses_a_day_whose_routing_has_not_finished(warehouses) -> None:
    """A routing run that stopped half-way leaves its day answering no decisions; scoring it
    then would remove every score of the day, so it refuses and writes nothing."""
    incremental, _ = warehouses()
    incremental.live_through(DAY_1, quiet_day())

    def scores() -> int:
        with incremental.session() as session:
            return session.scalar(
                text("SELECT count(*) FROM apac_tenant_score_snapshots WHERE partition_key = :p"),
                {"p": DAY_1},
            )

    before = scores()
    with incremental.session() as session:
        session.execute(
            text("UPDATE apac_routing_decision_days SET complete = false WHERE partition_key = :p"),
            {"p": DAY_1},
        )
    with pytest.raises(RoutingUnfinished, match="has not finished"):
        score_partition(
            incremental.session, partition_key=DAY_1, run_id="rescore", model=MODEL, batch_size=3
        )
    assert scores() == before > 0


def test_a_rerun_rewrites_what_the_day_holds_for_a_carried_tenant(warehouses) -> None:
    """A new day holds the day before's decision of every tenant, so its carry writes only
    the moves; a re-run cannot assume that: whatever the day holds for a carried tenant is
    compared with the base day's decision and rewritten."""
    incremental, full = warehouses()
    for warehouse in (incremental, full):
        warehouse.live_through(DAY_1, quiet_day())
        warehouse.live_through(DAY_2, quiet_day())
    # The day's version of t3 replaced by one only this day has (as a fault would leave it).
    with incremental.session() as session:
        session.execute(
            text(
                "INSERT INTO apac_routing_decision_versions SELECT tenant_id, :p, valid_to, "
                "run_id, source_type, tenant_bucket, routing_rule, hubspot_company_id, "
                "hubspot_match_method, ambiguous_match, ambiguous_key, name_hint_company_id, "
                "email_domain_class, sales_owned_match, 'P1', priority_reason, moved, "
                "moved_from, rejection_reason, decided_at, :p FROM apac_routing_decision_versions "
                "WHERE tenant_id = 't3' AND valid_to IS NULL"
            ),
            {"p": DAY_2},
        )
        session.execute(
            text(
                "UPDATE apac_routing_decision_versions SET valid_to = :p "
                "WHERE tenant_id = 't3' AND valid_from < :p AND valid_to IS NULL"
            ),
            {"p": DAY_2},
        )
    assert incremental.state(DAY_2) != full.state(DAY_2)
    routing, _ = incremental.live_through(DAY_2, quiet_day())
    assert routing.carried == len(TENANT_IDS)
    assert incremental.state(DAY_2) == full.state(DAY_2)


def test_a_rerun_after_a_change_was_undone_routes_back(warehouses) -> None:
    """Re-running a day whose first run moved a tenant, after the change was undone: the
    copy must not trust the decision of the day before, because the first run rewrote the
    bucket row (the routing inputs record which run last wrote it)."""
    day_1 = quiet_day()
    day_1["tenants"][4] = quiet_tenant(email="it@beta.co.jp")
    day_1["tenants"][5] = quiet_tenant(email="ops@t5.example.com", selected=False)
    changed = quiet_day(tenants=[dict(t) for t in day_1["tenants"]])
    changed["companies"][1] = BETA_LISTED
    changed["tenants"][3] = quiet_tenant(email="ops@t3.example.com", selected=False)
    changed["tenants"][5] = quiet_tenant(email="ops@t5.example.com")
    incremental, full = warehouses()
    for partition_key, day in ((DAY_1, day_1), (DAY_2, changed), (DAY_2, day_1)):
        incremental.live_through(partition_key, day)
        full.live_through(partition_key, day)
        assert incremental.state(partition_key) == full.state(partition_key), partition_key
    routing, _ = incremental.live_through(DAY_3, day_1)
    full.live_through(DAY_3, day_1)
    assert incremental.state(DAY_3) == full.state(DAY_3)
    assert routing.carried == len(TENANT_IDS) - 1  # t5 is not selected


def test_a_backfill_before_a_stopped_day_leaves_that_day_no_earlier_move_or_retirement(
    warehouses,
) -> None:
    """A move and a retirement are decisions of their day only. When the newest day's routing
    stopped after beginning the day, a backfill of the day before it ends the versions it
    changes and lets them continue from the stopped day; the stopped day's re-run must not
    take the move or retirement those continuations carry for its own (the same day routed
    without that history records neither)."""
    day_0 = quiet_day()
    day_1 = quiet_day(tenants=list(day_0["tenants"]), sales={"rep1@corp.example"})
    # t2 moves to Sales-owned on DAY_1; t5 leaves the selection and is retired that day.
    day_1["tenants"][2] = quiet_tenant(
        email="ops@t2.example.com", sales_owner_email="rep1@corp.example"
    )
    day_1["tenants"][5] = quiet_tenant(email="ops@t5.example.com", selected=False)
    day_3 = (FIRST_DAY + timedelta(days=3)).isoformat()
    stopped, reference = warehouses()
    for warehouse in (stopped, reference):
        warehouse.live_through(DAY_1, day_0)
        warehouse.live_through(DAY_2, day_1)
    # The reference routes the newest day straight through, then backfills the one before.
    reference.live_through(day_3, day_1)
    reference.live_through(DAY_3, day_1)
    stopped.routing_stops_after_its_plan(day_3, day_1)
    stopped.live_through(DAY_3, day_1)
    routing, _ = stopped.live_through(day_3, day_1)
    assert stopped.state(day_3) == reference.state(day_3)
    assert routing.summary["totals"]["moved"] == 0
    assert "retired" not in routing.summary["by_rule"]


def test_an_answer_written_again_for_the_base_day_reroutes_its_tenant(warehouses) -> None:
    """Enrichment run again for a day after that day was routed replaces the day's answer
    with one that starts on the same day: the next day's carry must see that routing never
    read it (the routing inputs name the version numbers they were decided from, and the
    answer written again has a new one), not take a version as old as the base day for one
    routing saw."""
    day_2 = quiet_day()
    day_2["tenants"][4] = quiet_tenant(email="ops@t4.example.com", website="alpha.com.sg")
    incremental, full = warehouses()
    for warehouse in (incremental, full):
        warehouse.live_through(DAY_1, quiet_day())
        # The first day's answers again, now with t4's website found.
        warehouse.enrich(DAY_1, day_2)
    routing, _ = incremental.live_through(DAY_2, day_2)
    full.live_through(DAY_2, day_2)
    assert incremental.state(DAY_2) == full.state(DAY_2)
    assert routing.carried == len(TENANT_IDS) - 1
    assert routing.summary["by_match_method"] == {"official_website": 1}


def test_an_answer_asked_again_that_says_the_same_carries_its_tenant(warehouses) -> None:
    """Enrichment asks the service again once an answer is old: the same answer then is a
    new version (a new ``enriched_at``), but routing reads nothing of that, so the tenant is
    carried, not decided again (its answer keeps its number)."""
    day_2 = quiet_day(answered_at="2026-11-21T08:00:00+00:00")
    routing, _ = live_both(warehouses, quiet_day(), day_2)
    assert routing.carried == len(TENANT_IDS)
    assert routing.totals.tenants == 0


def test_the_carry_lists_the_day_s_tenants_without_a_probe_per_tenant(warehouses) -> None:
    """The carry joins whole days on the tenant and a version number, which the planner
    estimates at one row; planned as it would be, it probes the answers' and decisions'
    indexes once per tenant (docs/performance.md, "A quiet day"). Every plan of the day, as
    the server's auto_explain reports it to the client."""
    incremental, _ = warehouses()
    incremental.live_through(DAY_1, quiet_day())
    incremental.live_through(DAY_2, quiet_day())
    plans: list[str] = []

    @contextmanager
    def explained() -> Iterator[Session]:
        with get_session(incremental.url) as session:
            connection = session.connection().connection.driver_connection

            def collect(notice) -> None:
                plans.append(notice.message_primary)

            connection.add_notice_handler(collect)
            try:
                # Loading the module and setting its threshold take a superuser, which the
                # embedded server's test databases are owned by.
                session.execute(text("LOAD 'auto_explain'"))
                session.execute(
                    text(
                        "SELECT set_config('auto_explain.log_min_duration', '0', true), "
                        "set_config('auto_explain.log_level', 'notice', true)"
                    )
                )
                yield session
            finally:
                connection.remove_notice_handler(collect)

    incremental.session = explained
    routing, _ = incremental.live_through(DAY_3, quiet_day())
    assert routing.carried == len(TENANT_IDS)
    (carry,) = [plan for plan in plans if 'CREATE TEMP TABLE "routing_carried"' in plan]
    assert "Nested Loop" not in carry


def test_a_day_is_routed_with_the_process_heap_frozen_and_given_back(warehouses) -> None:
    """Routing's collections walk what routing makes, not the whole process
    (platform/heap.py): the heap is frozen at collections while it runs (the day's selection,
    answers and scoring around it are not), and given back after."""
    incremental, _ = warehouses()
    with frozen_at_collections() as frozen:
        incremental.live_through(DAY_1, quiet_day())
    assert any(frozen)
    assert not all(frozen)
    assert gc.get_freeze_count() == 0
