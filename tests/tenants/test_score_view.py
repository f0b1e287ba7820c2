"""A stored score answers every later day as the Python scorer scores that day (docs/scoring.md,
"How scores are stored"): scores written through the repository as the pipeline writes them,
then read through the view ``apac_tenant_score_snapshots`` on later days, whose recency points
it moves with the arithmetic and the recorded numbers of the version's model. Run on the real
server over generated tenants."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timedelta

import numpy as np
import pandas as pd
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.platform.store.day_versions import finish_day
from morpheus_pipelines.tenants.rules.routing import PRIORITY_OVERRIDE, PRIORITY_REASON
from morpheus_pipelines.tenants.rules.scoring import INPUT_COLUMNS, score_tenants
from morpheus_pipelines.tenants.rules.scoring_model import ScoringModel
from morpheus_pipelines.tenants.steps.scoring import as_of, record_model, stored_scores
from morpheus_pipelines.tenants.steps.scoring_model import load_model
from morpheus_pipelines.tenants.store.day_tables import SCORE_VERSIONS
from morpheus_pipelines.tenants.store.store import TenantStore

MODEL = load_model()
SCORED = "2026-11-20"
DAY = 86_400 * 1_000_000  # microseconds
# The generated inputs: every scoring input but the id, the bucket and the reason that
# follows from the override.
ROW_KEYS = tuple(
    c for c in INPUT_COLUMNS if c not in ("tenant_id", "tenant_bucket", "priority_reason")
)


def later(days: int) -> str:
    return (datetime.fromisoformat(SCORED) + timedelta(days=days)).date().isoformat()


def tenants(rows: list[dict]) -> pd.DataFrame:
    """Scoring input of the generated rows, ids in the database's order."""
    frame = pd.DataFrame(rows, columns=list(ROW_KEYS))
    frame.insert(0, "tenant_id", [f"t{n:05d}" for n in range(len(frame))])
    frame["tenant_bucket"] = "active"
    overridden = frame["priority_override"].notna()
    frame["priority_override"] = frame["priority_override"].astype(object).where(overridden, None)
    frame["priority_reason"] = pd.Series(PRIORITY_REASON, index=frame.index).where(overridden, None)
    frame["last_active_at"] = pd.to_datetime(frame["last_active_at"], utc=True)
    return frame


def known(values) -> st.SearchStrategy:
    return st.sampled_from([*values, None, "Unknown-Value"])


ROWS = st.lists(
    st.fixed_dictionaries(
        {
            "plan": known(MODEL.plan_scores),
            "seats": st.one_of(st.none(), st.integers(0, 5_000)),
            "active_users_30d": st.one_of(st.none(), st.integers(0, 5_000)),
            # From well past any credit to a little after the day scored.
            "last_active_at": st.one_of(
                st.none(),
                st.integers(-3 * DAY, 100 * DAY).map(
                    lambda us: as_of(SCORED) - timedelta(microseconds=us)
                ),
            ),
            "employee_count": st.one_of(st.none(), st.integers(0, 20_000)),
            "country": known(MODEL.country_scores),
            "industry": known(MODEL.industry_scores),
            "priority_override": st.sampled_from([None, PRIORITY_OVERRIDE]),
        }
    ),
    min_size=1,
    max_size=40,
)


def start_over(database_url: str) -> None:
    with get_session(database_url) as session:
        session.execute(
            text("TRUNCATE apac_tenant_score_versions, apac_tenant_score_days, apac_scoring_models")
        )


def scored(frame: pd.DataFrame, model: ScoringModel = MODEL) -> pd.DataFrame:
    """``frame`` scored for :data:`SCORED`, as the pipeline stores the scores."""
    return stored_scores(
        score_tenants(frame, model=model, as_of=as_of(SCORED)),
        frame.assign(candidate_version=1, answer_version=None, decision_version=1),
        partition_key=SCORED,
        model=model,
        moves_on_read=model.total_never_capped,
    )


def write(database_url: str, frame: pd.DataFrame, model: ScoringModel = MODEL) -> pd.DataFrame:
    """Score ``frame`` for :data:`SCORED` and store the scores as the pipeline does; the
    stored frame."""
    stored = scored(frame, model)
    with get_session(database_url) as session:
        store = TenantStore(session)
        record_model(store, model, partition_key=SCORED, run_id="run-1")
        store.scores.write_scores(session, stored, partition_key=SCORED, run_id="run-1", live=False)
        finish_day(session, SCORE_VERSIONS, day=SCORED)
    return stored


def answered(database_url: str, day: str) -> list[tuple]:
    """The day's scores as the view answers them, the day written with nothing changed."""
    with get_session(database_url) as session:
        finish_day(session, SCORE_VERSIONS, day=day)
    with psycopg.connect(libpq_url(database_url)) as conn:
        return conn.execute(
            "SELECT tenant_id, total_score, calculated_priority, priority, priority_reason, "
            "contributions::text FROM apac_tenant_score_snapshots WHERE partition_key = %s "
            "ORDER BY tenant_id",
            (day,),
        ).fetchall()


def numbers_as_text(contributions: str) -> dict[str, str]:
    """The JSON object with its numbers as written: ``15.0`` and ``15`` differ."""
    return json.loads(contributions, parse_float=str, parse_int=str)


def as_rows(scores: pd.DataFrame) -> list[tuple]:
    """Python's scores in the view's shape, numbers as text."""
    return [
        (
            row.tenant_id,
            f"{row.total_score:.2f}",
            row.calculated_priority,
            row.priority,
            row.priority_reason,
            numbers_as_text(row.contributions),
        )
        for row in scores.itertuples(index=False)
    ]


def view_rows(rows: list[tuple]) -> list[tuple]:
    return [(t, f"{total:.2f}", c, p, r, numbers_as_text(j)) for t, total, c, p, r, j in rows]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=ROWS, gap_days=st.integers(0, 10))
def test_a_stored_score_answers_a_later_day_as_the_python_scorer_scores_it(
    database_url: str, rows: list[dict], gap_days: int
) -> None:
    start_over(database_url)
    frame = tenants(rows)
    stored = write(database_url, frame)
    day = later(gap_days)
    view = view_rows(answered(database_url, day))
    assert [row[0] for row in view] == list(frame["tenant_id"])
    python_then = as_rows(score_tenants(frame, model=MODEL, as_of=as_of(SCORED)))
    python_on_the_day = as_rows(score_tenants(frame, model=MODEL, as_of=as_of(day)))
    moves = stored["recency_key"].isna().to_list()
    for answer, then, now, moved in zip(view, python_then, python_on_the_day, moves, strict=True):
        # A version that moves its recency is the day's score; any other answers as stored
        # (scoring lists its tenant to score again on any later day).
        assert answer == (now if moved else then)
    # Only activity after the day scored is stored as it was scored.
    after = frame["last_active_at"] > pd.Timestamp(as_of(SCORED))
    assert [not m for m in moves] == after.to_list()


def test_every_moment_of_the_slope_gets_the_python_score(database_url: str) -> None:
    """Every 193 seconds over the 65 days before the day scored, with microseconds: about
    29,000 values across both ends of the slope and every rounding step of its points, read
    one and nine days later."""
    moments = [
        as_of(SCORED) - timedelta(seconds=193 * n, microseconds=n % 1_000_000)
        for n in range(29_000)
    ]
    frame = tenants([{**dict.fromkeys(ROW_KEYS), "last_active_at": m} for m in moments])
    stored = write(database_url, frame)
    assert stored["recency_key"].isna().all()
    for gap in (1, 9):
        day = later(gap)
        expected = as_rows(score_tenants(frame, model=MODEL, as_of=as_of(day)))
        assert view_rows(answered(database_url, day)) == expected


def test_the_comparison_catches_a_model_recorded_with_another_weight(database_url: str) -> None:
    """The comparison can fail: the view reads the recency weight the model was recorded with,
    and one point less moves a tenant on the slope to other cents."""
    on_the_slope = as_of(SCORED) - timedelta(
        days=(MODEL.recency_full_credit_days + MODEL.recency_zero_credit_days) / 2
    )
    frame = tenants([{**dict.fromkeys(ROW_KEYS), "last_active_at": on_the_slope}])
    write(database_url, frame)
    day = later(1)
    expected = as_rows(score_tenants(frame, model=MODEL, as_of=as_of(day)))
    assert view_rows(answered(database_url, day)) == expected
    with get_session(database_url) as session:
        session.execute(
            text(
                "UPDATE apac_scoring_models SET document = jsonb_set(document, "
                "'{weights,recency}', to_jsonb((document -> 'weights' ->> 'recency')::numeric - 1))"
            )
        )
    assert view_rows(answered(database_url, day)) != expected


def test_a_model_whose_total_can_be_capped_stores_every_score_as_scored() -> None:
    weights = dict(MODEL.weights, recency=MODEL.weights["recency"] + 0.01)
    capped = dataclasses.replace(MODEL, weights=weights)
    assert MODEL.total_never_capped and not capped.total_never_capped
    frame = tenants([{**dict.fromkeys(ROW_KEYS), "last_active_at": as_of(SCORED)}])
    stored = scored(frame, capped)
    assert stored["recency_key"].to_list() == [f"{SCORED} {stored['total_score'].iloc[0]:.2f}"]


def test_the_server_rounds_halves_to_even_as_numpy_does(database_url: str) -> None:
    """``round(float8)`` is C's ``rint``, as ``np.rint``: an exact half-cent rounds the same
    way on both sides (a half-up rounding would give 1, 3, 3, 5 here)."""
    halves = [0.5, 1.5, 2.5, 3.5, 4.5, 1234.5]
    with psycopg.connect(libpq_url(database_url)) as conn:
        (rounded,) = conn.execute(
            "SELECT array_agg(round(x)) FROM unnest(%s::float8[]) x", (halves,)
        ).fetchone()
    assert rounded == [float(x) for x in np.rint(halves)] == [0, 2, 2, 4, 4, 1234]


@pytest.mark.parametrize("gap", [0, 3])
def test_an_overridden_tenant_keeps_its_priority_as_its_score_moves(
    database_url: str, gap: int
) -> None:
    on_the_slope = as_of(SCORED) - timedelta(days=MODEL.recency_full_credit_days + 1)
    frame = tenants(
        [
            {**dict.fromkeys(ROW_KEYS), "last_active_at": on_the_slope, "plan": "enterprise"},
            {
                **dict.fromkeys(ROW_KEYS),
                "last_active_at": on_the_slope,
                "priority_override": PRIORITY_OVERRIDE,
            },
        ]
    )
    write(database_url, frame)
    view = answered(database_url, later(gap))
    assert view[1][3] == PRIORITY_OVERRIDE and view[1][4] == PRIORITY_REASON
    expected = as_rows(score_tenants(frame, model=MODEL, as_of=as_of(later(gap))))
    assert view_rows(view) == expected
