"""Incremental routing and scoring give exactly what a full recomputation gives
(docs/pipeline.md, "Incremental routing"; docs/scoring.md, "Incremental scoring").

Two warehouses live through the same randomised days: tenants appear, change, move between
buckets and retire; the HubSpot snapshot gains, loses and changes companies (and sometimes is
unavailable); the Sales list, the forced ids and the scoring model change. One warehouse
routes and scores incrementally, the other recomputes everything every day; after every day
their decision records, bucket tables and score snapshots must be identical.
(tests/tenants/test_incremental_routing.py shows the comparison failing when the incremental
path ignores what changed.)
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.incremental import (
    COMPANY_DOMAINS,
    EMAILS,
    FIRST_DAY,
    FORCEABLE,
    NAMES,
    SALES,
    TENANT_IDS,
)

tenant_day = st.fixed_dictionaries(
    {
        "selected": st.sampled_from([True, True, True, False]),
        "custom_id": st.sampled_from([None, "ACC-1", "ACC-2"]),
        "name": st.sampled_from(NAMES),
        "email": st.sampled_from(EMAILS),
        "sales_owner_email": st.sampled_from([None, "rep1@corp.example", " REP2@corp.example"]),
        "plan": st.sampled_from(["team", "enterprise", "free"]),
        # Days before the end of the day scored: around both edges of the recency slope.
        "inactive_days": st.sampled_from([None, -0.5, 3, 6.9, 7.1, 20, 29.5, 59.9, 60.1, 200]),
        "signed_up_today": st.booleans(),
        "website": st.sampled_from([None, "https://www.alpha.com.sg", "beta.co.jp", "gamma.io"]),
        "country": st.sampled_from(["SG", "JP", None]),
        "employees": st.sampled_from([None, 5, 500]),
    }
)
company_day = st.fixed_dictionaries(
    {
        "listed": st.booleans(),
        "portal_id": st.sampled_from([None, "t3", "t4"]),
        "account_id": st.sampled_from([None, "ACC-1"]),
        "domain": st.sampled_from([None, *COMPANY_DOMAINS]),
        "name": st.sampled_from(["Alpha", "Beta", "Other"]),
    }
)
settings_of_a_day = {
    "snapshot_status": st.sampled_from(["fresh", "fresh", "stale", "unavailable"]),
    "sales": st.sets(st.sampled_from(SALES)),
    "forced": st.sets(st.sampled_from(FORCEABLE), max_size=2),
    "other_model": st.sampled_from([False, False, True]),
}
a_day = st.fixed_dictionaries(
    {
        "tenants": st.lists(tenant_day, min_size=len(TENANT_IDS), max_size=len(TENANT_IDS)),
        "companies": st.lists(company_day, min_size=4, max_size=4),
        **settings_of_a_day,
    }
)


def kept_mostly(values: st.SearchStrategy) -> st.SearchStrategy:
    """``None`` (keep yesterday's value) three times in four."""
    return st.one_of(st.none(), st.none(), st.none(), values)


# A later day: each tenant, company and setting either kept from the day before or redrawn.
next_day = st.fixed_dictionaries(
    {
        "tenants": st.lists(
            kept_mostly(tenant_day), min_size=len(TENANT_IDS), max_size=len(TENANT_IDS)
        ),
        "companies": st.lists(kept_mostly(company_day), min_size=4, max_size=4),
        **{key: kept_mostly(values) for key, values in settings_of_a_day.items()},
    }
)


def following(day: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """``day`` with ``change`` applied (``None`` keeps a value)."""
    merged = {key: day[key] if new is None else new for key, new in change.items()}
    for key in ("tenants", "companies"):
        merged[key] = [
            old if new is None else new for old, new in zip(day[key], change[key], strict=True)
        ]
    return merged


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(first=a_day, changes=st.lists(next_day, min_size=1, max_size=3))
def test_incremental_days_equal_a_full_recomputation(warehouses, first, changes) -> None:
    incremental, full = warehouses()
    days = [first]
    for change in changes:
        days.append(following(days[-1], change))
    for n, day in enumerate(days):
        partition_key = (FIRST_DAY + timedelta(days=n)).isoformat()
        incremental.live_through(partition_key, day)
        full.live_through(partition_key, day)
        assert incremental.state(partition_key) == full.state(partition_key), partition_key


# A step after the first day: the next day with changes, the next day whose routing stops
# once it has begun the day, a backfill of an older day (run against the source as it is
# now), or a re-run of the newest day.
a_step = st.one_of(
    st.tuples(st.just("next"), next_day),
    st.tuples(st.just("stopped"), next_day),
    st.tuples(st.just("backfill"), st.integers(min_value=1, max_value=3)),
    st.tuples(st.just("rerun"), st.none()),
)


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(first=a_day, steps=st.lists(a_step, min_size=2, max_size=5))
def test_backfills_and_reruns_answer_every_day_as_a_full_recomputation(
    warehouses, first, steps
) -> None:
    """The carry across backfills of older days, re-runs and runs that stopped: after every
    step, every day run so far reads the same in both warehouses."""
    incremental, full = warehouses()
    day, newest = first, 0
    keys = [FIRST_DAY.isoformat()]
    for warehouse in (incremental, full):
        warehouse.live_through(keys[0], day)
    for kind, value in steps:
        if kind in ("next", "stopped"):
            day, newest = following(day, value), newest + 1
            keys.append((FIRST_DAY + timedelta(days=newest)).isoformat())
            partition_key = keys[-1]
        elif kind == "backfill":
            partition_key = keys[max(newest - value, 0)]
        else:
            partition_key = keys[-1]
        for warehouse in (incremental, full):
            if kind == "stopped":
                warehouse.routing_stops_after_its_plan(partition_key, day)
            else:
                warehouse.live_through(partition_key, day)
        for key in keys:
            assert incremental.state(key) == full.state(key), (kind, partition_key, key)
