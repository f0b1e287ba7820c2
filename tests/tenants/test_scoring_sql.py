"""The carry's scoring SQL (tenants/store/scoring_sql.py) equals the Python scorer on generated
tenants, run on the real server (docs/scoring.md, "Incremental scoring"): a score the window
copies is the score the later day would give, a score the shift moves is that score to the
cent, and each SQL piece equals its Python reference."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from datetime import timedelta

import pandas as pd
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import sql

from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.tenants.rules.routing import PRIORITY_OVERRIDE, PRIORITY_REASON
from morpheus_pipelines.tenants.rules.scoring import score_tenants
from morpheus_pipelines.tenants.steps.scoring import as_of
from morpheus_pipelines.tenants.steps.scoring_model import load_model
from morpheus_pipelines.tenants.store.scoring_sql import (
    SHIFTED_COLUMNS,
    RecencyShift,
    RecencyWindow,
)

MODEL = load_model()
LATER_PARTITION = "2026-11-30"
LATER = as_of(LATER_PARTITION)
DAY = 86_400 * 1_000_000  # microseconds
# Half-way down the recency slope: its points move every day.
ON_THE_SLOPE = LATER - timedelta(
    days=(MODEL.recency_full_credit_days + MODEL.recency_zero_credit_days) / 2
)
ROW_KEYS = (
    "plan",
    "seats",
    "active_users_30d",
    "last_active_at",
    "employee_count",
    "country",
    "industry",
    "priority_override",
)

# The carry's aliases over one table of generated rows: base snapshot s, decision d, candidate c.
QUERY = """
SELECT s.n, {unmoved} AS unmoved, {applies} AS applies, m.cents, {values}
FROM input s JOIN input d ON d.n = s.n JOIN input c ON c.n = s.n{lateral}
ORDER BY s.n
"""


@pytest.fixture
def server(database_url: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
        conn.execute(
            "CREATE TEMPORARY TABLE input (n int, total_score numeric(6,2), contributions jsonb, "
            "calculated_priority text, priority text, priority_override text, "
            "last_active_at timestamptz)"
        )
        yield conn


def tenants(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    frame.insert(0, "tenant_id", [f"t{n}" for n in range(len(frame))])
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
            # From well past no credit to a little in the future of the later day.
            "last_active_at": st.one_of(
                st.none(),
                st.integers(-3 * DAY, 100 * DAY).map(lambda us: LATER - timedelta(microseconds=us)),
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


def carry(
    server: psycopg.Connection, window: RecencyWindow, shift: RecencyShift, base: pd.DataFrame
) -> list[tuple]:
    """Per tenant: unmoved, applies, the new recency cents and each shifted column, as the
    carry's statement computes them from the base snapshot ``base``."""
    unmoved = window.condition("c.last_active_at")
    moved = shift.shifted()
    values = sql.SQL(", ").join(
        sql.SQL("(CASE WHEN m.cents IS NULL THEN s.{c} ELSE {moved} END)::text").format(
            c=sql.Identifier(c), moved=moved[c]
        )
        for c in SHIFTED_COLUMNS
    )
    query = sql.SQL(QUERY).format(
        unmoved=unmoved,
        applies=shift.applies("c.last_active_at", "s"),
        values=values,
        lateral=shift.lateral(unmoved, "c.last_active_at"),
    )
    server.execute("TRUNCATE input")
    with server.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO input VALUES (%s, %s, %s, %s, %s, %s, %s)",
            [
                (
                    n,
                    repr(float(row.total_score)),
                    row.contributions,
                    row.calculated_priority,
                    row.priority,
                    row.priority_override,
                    None if pd.isna(row.last_active_at) else row.last_active_at.to_pydatetime(),
                )
                for n, row in enumerate(base.itertuples(index=False))
            ],
        )
    return server.execute(query).fetchall()


def numbers_as_text(contributions: str) -> dict[str, str]:
    """The JSON object with its numbers as written: ``15.0`` and ``15`` differ."""
    return json.loads(contributions, parse_float=str, parse_int=str)


def same_score(row: tuple, expected: pd.Series) -> None:
    total, calculated, priority, contributions = row[4:]
    assert float(total) == expected["total_score"]
    assert calculated == expected["calculated_priority"]
    assert priority == expected["priority"]
    assert numbers_as_text(contributions) == numbers_as_text(expected["contributions"])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=ROWS, gap_days=st.integers(1, 10))
def test_the_carry_gives_the_python_score_of_the_later_day(server, rows, gap_days) -> None:
    frame = tenants(rows)
    earlier = LATER - timedelta(days=gap_days)
    window = RecencyWindow.for_model(MODEL, earlier=earlier, later=LATER)
    shift = RecencyShift.for_model(MODEL, as_of=LATER)
    base = score_tenants(frame, model=MODEL, as_of=earlier)
    base["priority_override"] = frame["priority_override"]
    base["last_active_at"] = frame["last_active_at"]
    later = score_tenants(frame, model=MODEL, as_of=LATER)
    result = carry(server, window, shift, base)
    assert [row[0] for row in result] == list(range(len(frame)))
    # The window is sound: what it keeps, the Python scorer scores the same both days.
    same_recency = window.reference_unmoved(frame["last_active_at"])
    assert all(same for (_, kept, *_), same in zip(result, same_recency, strict=True) if kept)
    for n, (_, is_unmoved, applies, cents, *_) in enumerate(result):
        if is_unmoved:
            assert cents is None
            same_score(result[n], later.iloc[n])
        elif applies:
            moment = frame["last_active_at"].iloc[[n]]
            assert cents == shift.reference_cents(moment)[0]
            same_score(result[n], later.iloc[n])
        else:
            # Ahead of the scoring time: the carry leaves it to the Python scorer.
            assert frame["last_active_at"].iloc[n] > LATER


def test_the_comparison_catches_a_shift_with_another_weight(server) -> None:
    """The comparison can fail: the shift of a model with a different recency weight moves
    the points of a tenant whose recency moved to other cents."""
    frame = tenants([{**dict.fromkeys(ROW_KEYS), "last_active_at": ON_THE_SLOPE}])
    earlier = LATER - timedelta(days=1)
    window = RecencyWindow.for_model(MODEL, earlier=earlier, later=LATER)
    weights = dict(MODEL.weights, recency=MODEL.weights["recency"] - 1.0)
    wrong = RecencyShift.for_model(dataclasses.replace(MODEL, weights=weights), as_of=LATER)
    base = score_tenants(frame, model=MODEL, as_of=earlier)
    base["priority_override"] = frame["priority_override"]
    base["last_active_at"] = frame["last_active_at"]
    (row,) = carry(server, window, wrong, base)
    assert not row[1] and row[2]
    with pytest.raises(AssertionError):
        same_score(row, score_tenants(frame, model=MODEL, as_of=LATER).iloc[0])


def test_each_sql_piece_equals_its_python_reference(server) -> None:
    shift = RecencyShift.for_model(MODEL, as_of=LATER)
    moments = [LATER - timedelta(seconds=4_001 * n, microseconds=n) for n in range(2_000)]
    rows = server.execute(
        sql.SQL(
            "SELECT {} FROM unnest(%s::timestamptz[]) WITH ORDINALITY AS m(v, n) ORDER BY n"
        ).format(shift.cents("m.v")),
        (moments,),
    ).fetchall()
    series = pd.Series(pd.to_datetime(moments, utc=True))
    assert [c for (c,) in rows] == list(shift.reference_cents(series))
    totals = server.execute(
        sql.SQL(
            "SELECT k, {}, to_jsonb({})::text FROM generate_series(0, 10000) k ORDER BY k"
        ).format(shift.calculated_priority(sql.SQL("k")), RecencyShift.json_points(sql.SQL("k")))
    ).fetchall()
    cents = [k for k, _, _ in totals]
    assert [p for _, p, _ in totals] == list(shift.reference_priority(cents))
    assert [text for _, _, text in totals] == [RecencyShift.reference_points(k) for k in cents]


def test_the_window_keeps_what_it_is_meant_to(server) -> None:
    """Never seen, past any credit, and full credit both days are kept; the slope is not."""
    earlier = LATER - timedelta(days=1)
    window = RecencyWindow.for_model(MODEL, earlier=earlier, later=LATER)
    moments = [
        None,
        LATER - timedelta(days=MODEL.recency_zero_credit_days + 2),
        LATER - timedelta(days=MODEL.recency_full_credit_days / 2),
        ON_THE_SLOPE,
    ]
    rows = server.execute(
        sql.SQL(
            "SELECT {} FROM unnest(%s::timestamptz[]) WITH ORDINALITY AS m(v, n) ORDER BY n"
        ).format(window.condition("m.v")),
        (moments,),
    ).fetchall()
    assert [kept for (kept,) in rows] == [True, True, True, False]
    assert list(window.reference_unmoved(pd.Series(pd.to_datetime(moments, utc=True)))) == [
        True,
        True,
        True,
        False,
    ]
