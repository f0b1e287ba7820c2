"""The carry's SQL moves a tenant's recency points exactly as the Python model scores them
(docs/scoring.md, "Incremental scoring"): the same cents for every ``last_active_at``, the same
JSON number in ``contributions``, the same calculated priority for every total."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from datetime import datetime, timedelta

import numpy as np
import pandas as pd
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import sql

from morpheus_pipelines.db.embedded import EmbeddedPostgres
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.tenants.rules.scoring import score_tenants
from morpheus_pipelines.tenants.steps.scoring import as_of, recency_shift
from morpheus_pipelines.tenants.steps.scoring_model import load_model
from morpheus_pipelines.tenants.store.scoring_sql import RecencyShift

MODEL = load_model()
PARTITION = "2026-11-30"
AS_OF = as_of(PARTITION)


@pytest.fixture(scope="module")
def server(pg_server: EmbeddedPostgres) -> Iterator[psycopg.Connection]:
    with psycopg.connect(libpq_url(pg_server.status().url("postgres")), autocommit=True) as conn:
        yield conn


def python_cents(moments: list[datetime]) -> list[int]:
    """The recency points, in cents, that the Python model gives at ``AS_OF``."""
    frame = pd.DataFrame(
        {
            "tenant_id": [f"t{n}" for n in range(len(moments))],
            "tenant_bucket": "active",
            "plan": None,
            "seats": None,
            "active_users_30d": None,
            "last_active_at": pd.to_datetime(moments, utc=True),
            "employee_count": None,
            "country": None,
            "industry": None,
            "priority_override": None,
            "priority_reason": None,
        }
    )
    scores = score_tenants(frame, model=MODEL, as_of=AS_OF)
    return [round(json.loads(c)["recency"] * 100) for c in scores["contributions"]]


def sql_cents(
    server: psycopg.Connection, shift: RecencyShift, moments: list[datetime]
) -> list[int]:
    query = sql.SQL(
        "SELECT {} FROM unnest(%s::timestamptz[]) WITH ORDINALITY AS m(v, n) ORDER BY n"
    )
    rows = server.execute(query.format(shift.cents("m.v")), (moments,)).fetchall()
    return [cents for (cents,) in rows]


def test_every_second_of_the_slope_gets_the_python_cents(server) -> None:
    """Every 97 seconds from 65 days before the scored moment up to it, with microseconds:
    about 58,000 values across both ends of the slope and every rounding step."""
    shift = recency_shift(MODEL, PARTITION)
    moments = [AS_OF - timedelta(seconds=97 * n, microseconds=n % 1_000_000) for n in range(58_000)]
    assert sql_cents(server, shift, moments) == python_cents(moments)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    offsets=st.lists(
        st.integers(min_value=0, max_value=70 * 86_400 * 1_000_000), min_size=1, max_size=50
    )
)
def test_any_moment_before_the_scored_one_gets_the_python_cents(server, offsets) -> None:
    shift = recency_shift(MODEL, PARTITION)
    moments = [AS_OF - timedelta(microseconds=offset) for offset in offsets]
    assert sql_cents(server, shift, moments) == python_cents(moments)


def test_the_cents_would_differ_with_a_day_of_another_length(server) -> None:
    """The comparison can fail: the same formula over a day one second longer."""
    shift = recency_shift(MODEL, PARTITION)
    moments = [AS_OF - timedelta(seconds=97 * n) for n in range(20_000)]
    wrong = sql.SQL(shift.cents("m.v").as_string(server).replace("86400.0", "86401.0"))
    query = sql.SQL(
        "SELECT {} FROM unnest(%s::timestamptz[]) WITH ORDINALITY AS m(v, n) ORDER BY n"
    )
    rows = [c for (c,) in server.execute(query.format(wrong), (moments,)).fetchall()]
    assert rows != python_cents(moments)


def test_the_server_rounds_halves_to_even_as_numpy_does(server) -> None:
    """``round(float8)`` is C's ``rint``, as ``np.rint``: an exact half-cent rounds the same
    way on both sides (a half-up rounding would give 1, 3, 3, 5 here)."""
    halves = [0.5, 1.5, 2.5, 3.5, 4.5, 1234.5]
    (rounded,) = server.execute(
        "SELECT array_agg(round(x)) FROM unnest(%s::float8[]) x", (halves,)
    ).fetchone()
    assert rounded == [float(x) for x in np.rint(halves)] == [0, 2, 2, 4, 4, 1234]


def test_points_are_the_json_numbers_python_writes(server) -> None:
    rows = server.execute(
        sql.SQL("SELECT k, to_jsonb({})::text FROM generate_series(0, 10000) k ORDER BY k").format(
            RecencyShift.json_points(sql.SQL("k"))
        )
    ).fetchall()
    assert [text for _, text in rows] == [json.dumps(k / 100) for k, _ in rows]


def test_every_total_gets_the_priority_of_the_thresholds(server) -> None:
    shift = recency_shift(MODEL, PARTITION)
    rows = server.execute(
        sql.SQL("SELECT k, {} FROM generate_series(0, 10000) k ORDER BY k").format(
            shift.calculated_priority(sql.SQL("k"))
        )
    ).fetchall()
    (p1, high), (p2, low) = MODEL.thresholds

    def expected(total: float) -> str:
        return p1 if total >= high else p2 if total >= low else shift.lowest

    assert [priority for _, priority in rows] == [expected(k / 100) for k, _ in rows]
    assert {priority for _, priority in rows} == {"P1", "P2", "P3"}


def test_only_a_model_whose_total_is_never_capped_shifts() -> None:
    assert MODEL.total_never_capped
    weights = dict(MODEL.weights, recency=MODEL.weights["recency"] + 0.01)
    assert not dataclasses.replace(MODEL, weights=weights).total_never_capped
