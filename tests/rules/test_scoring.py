"""Unit and property tests of the scoring model (002 §3.3, §9.2 and the Scoring test plan)."""

from __future__ import annotations

import copy
import dataclasses
import decimal
import json
import math
import tomllib
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morpheus_pipelines.tenants.rules.routing import (
    PRIORITY_OVERRIDE,
    PRIORITY_REASON,
    SCORING_CONTRACT_VIOLATIONS,
)
from morpheus_pipelines.tenants.rules.scoring import (
    FORCED_SALES_OWNED_NOT_SCORED,
    INPUT_COLUMNS,
    OUTPUT_COLUMNS,
    REJECTION_REASON_COLUMN,
    TENANT_ID_MISSING,
    partition_scoring_input,
    recency_fraction,
    recency_may_move,
    recency_moves_from,
    score_tenants,
)
from morpheus_pipelines.tenants.rules.scoring_model import (
    SCORE_REASON,
    SIGNALS,
    ModelVersionReused,
    ScoringModel,
    ScoringModelError,
    model_document,
    normalise_country,
    normalise_industry,
    normalise_plan,
    parse_model,
    refuse_reused_version,
)
from morpheus_pipelines.tenants.steps.scoring_model import DEFAULT_MODEL_PATH, load_model

AS_OF = datetime(2026, 11, 30, 16, 0, tzinfo=UTC)  # end of 2026-11-30 in CST (UTC+8)
MODEL = load_model()
RAW_MODEL: dict[str, Any] = tomllib.loads(DEFAULT_MODEL_PATH.read_text(encoding="utf-8"))

# Every input column but tenant_id, which frame() numbers unless a row sets it.
EMPTY_ROW: dict[str, object] = {
    "tenant_bucket": "active",
    "plan": None,
    "seats": None,
    "active_users_30d": None,
    "last_active_at": None,
    "employee_count": None,
    "country": None,
    "industry": None,
    "priority_override": None,
    "priority_reason": None,
}
STRONG_ROW: dict[str, object] = {
    **EMPTY_ROW,
    "plan": "enterprise",
    "seats": 400,
    "active_users_30d": 180,
    "last_active_at": AS_OF - timedelta(days=1),
    "employee_count": 1500,
    "country": "AU",
    "industry": "Software",
}


def frame(*rows: dict[str, object]) -> pd.DataFrame:
    return pd.DataFrame([{"tenant_id": f"t-{i}", **EMPTY_ROW, **row} for i, row in enumerate(rows)])


def score(*rows: dict[str, object], model: ScoringModel = MODEL, **kwargs: Any) -> pd.DataFrame:
    return score_tenants(frame(*rows), model=model, as_of=AS_OF, **kwargs)


def points(rows: pd.DataFrame) -> pd.DataFrame:
    """The contributions column (JSON object texts) as a frame of signal columns."""
    return pd.DataFrame([json.loads(c) for c in rows["contributions"]], index=rows.index)


def model_with(**changes: Any) -> ScoringModel:
    """The default model document with top-level tables replaced, re-validated."""
    data = copy.deepcopy(RAW_MODEL)
    data.update(changes)
    return parse_model(data, source="test")


# --------------------------------------------------------------------------- model file


def test_default_model_loads_and_is_consistent() -> None:
    assert MODEL.version == "2026-11-30.1"
    assert tuple(MODEL.weights) == SIGNALS
    assert math.isclose(sum(MODEL.weights.values()), 100.0)
    assert MODEL.thresholds == (("P1", 70.0), ("P2", 45.0))
    assert MODEL.source == str(DEFAULT_MODEL_PATH)
    assert "P0" not in dict(MODEL.thresholds)
    assert load_model(DEFAULT_MODEL_PATH).weights == MODEL.weights


def test_the_shipped_models_fingerprint_stays_what_the_warehouse_recorded() -> None:
    """A warehouse that scored with this version refuses it with another fingerprint
    (docs/scoring.md, "Versions"). Changing a number of the file needs a new version (and
    this literal); changing the code must leave the fingerprint of an unchanged file as
    it was."""
    assert (MODEL.version, MODEL.fingerprint) == (
        "2026-11-30.1",
        "fe150869fd413b58fd7c8b7055727ee2",
    )


def broken(path: tuple[str, ...], value: object) -> dict[str, Any]:
    """The default document with the value at ``path`` set (``...`` deletes the key)."""
    data = copy.deepcopy(RAW_MODEL)
    table = data
    for key in path[:-1]:
        table = table[key]
    if value is ...:
        del table[path[-1]]
    else:
        table[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("weights", "plan"), 21, "'weights' must add up to 100"),
        (("weights", "plan"), "20", "'weights.plan' must be a number"),
        (("weights", "plan"), -5, "'weights.plan' must be ≥ 0"),
        (("weights", "planz"), 0, "unknown key 'weights.planz'"),
        (("weights", "industry"), ..., "missing key 'weights.industry'"),
        (("colour",), "blue", "unknown key 'colour'"),
        (("version",), ..., "missing key 'version'"),
        (("version",), " ", "'version' must be a non-empty string"),
        (("thresholds", "P2"), 70, "must be strictly descending"),
        (("thresholds", "P2"), 80, "must be strictly descending"),
        (("thresholds", "P1"), 101, "'thresholds.P1' must be ≤ 100"),
        (("thresholds", "P0"), 90, "P0 is never reached by a score"),
        (("thresholds", "P3"), 10, "unknown key 'thresholds.P3'"),
        (("signals", "seats", "capp"), 5, "unknown key 'signals.seats.capp'"),
        (("signals", "seats", "cap"), 0, "'signals.seats.cap' must be ≥ 1"),
        (("signals", "loyalty"), {}, "unknown key 'signals.loyalty'"),
        (("signals", "plan", "scores", "enterprise"), 1.5, "'signals.plan.scores.enterprise'"),
        (("signals", "country", "scores", "au"), 1.0, "duplicates 'AU'"),
        (("signals", "recency", "zero_credit_days"), 5, "greater than full_credit_days"),
        (("signals", "active_users", "paid_seat_share"), 2, "paid_seat_share' must be ≤ 1"),
        (("signals", "company_size", "bands"), [{"min": 10, "score": 0.5}, {"min": 5, "score": 1}],
         "greater than the previous band's min"),
        (("signals", "company_size", "bands"), [{"min": 1, "score": 1, "max": 9}],
         "unknown key 'signals.company_size.bands[0].max'"),
        (("signals", "company_size", "bands"), [], "non-empty array"),
    ],
)  # fmt: skip
def test_bad_model_documents_are_rejected_naming_the_key(
    path: tuple[str, ...], value: object, message: str
) -> None:
    with pytest.raises(ScoringModelError, match=r"^scoring model test: ") as error:
        parse_model(broken(path, value), source="test")
    assert message in str(error.value)


def test_weights_within_the_tolerance_are_accepted() -> None:
    model = parse_model(broken(("weights", "plan"), 20.005), source="test")
    assert model.weights["plan"] == 20.005


def test_load_model_reports_invalid_toml_and_typos_in_files(tmp_path: Path) -> None:
    text = DEFAULT_MODEL_PATH.read_text(encoding="utf-8")
    invalid = tmp_path / "invalid.toml"
    invalid.write_text(text.replace("[weights]", "[weights"), encoding="utf-8")
    with pytest.raises(ScoringModelError, match=r"invalid\.toml: invalid TOML"):
        load_model(invalid)

    typo = tmp_path / "typo.toml"
    typo.write_text(text.replace("\nfull_credit_days", "\nfull_credit_dayz"), encoding="utf-8")
    with pytest.raises(
        ScoringModelError, match=r"unknown key 'signals\.recency\.full_credit_dayz'"
    ):
        load_model(typo)

    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "missing.toml")


def test_model_tables_are_normalised_like_the_inputs() -> None:
    assert all(normalise_plan(name) == name for name in MODEL.plan_scores)
    assert all(normalise_country(code) == code for code in MODEL.country_scores)
    assert all(normalise_industry(name) == name for name in MODEL.industry_scores)
    assert normalise_industry("  Financial \t Services ") == "financial services"
    assert normalise_plan(3) is None and normalise_country("  ") is None


@pytest.mark.parametrize(
    "model",
    [
        MODEL,
        model_with(
            version="test-variant",
            thresholds={"P1": 80, "P2": 35.5},
            signals={
                **RAW_MODEL["signals"],
                "company_size": {"bands": [{"min": 0, "score": 0.2}, {"min": 75, "score": 0.9}]},
                "industry": {"scores": {"  Financial \t Services ": 0.7}},
            },
        ),
    ],
    ids=["shipped", "variant"],
)
def test_a_stored_model_document_reads_back_as_the_same_model(model: ScoringModel) -> None:
    """What the warehouse records of a version (``apac_scoring_models``) explains its scores
    after the file has changed: the stored JSON parses back to the same numbers."""
    stored = json.loads(json.dumps(model_document(model)))
    again = parse_model(stored, source=model.source)
    assert {f.name: getattr(again, f.name) for f in dataclasses.fields(again)} == {
        f.name: getattr(model, f.name) for f in dataclasses.fields(model)
    }
    assert again.fingerprint == model.fingerprint


def test_a_version_first_scored_with_other_numbers_is_refused() -> None:
    changed = model_with(weights={**RAW_MODEL["weights"], "plan": 21, "seats": 14})
    assert changed.version == MODEL.version and changed.fingerprint != MODEL.fingerprint
    first = {"first_partition_key": "2026-11-28", "first_run_id": "run-1"}
    refuse_reused_version(MODEL, recorded_fingerprint=MODEL.fingerprint, **first)
    with pytest.raises(ModelVersionReused, match=r"version '2026-11-30\.1' was first scored"):
        refuse_reused_version(changed, recorded_fingerprint=MODEL.fingerprint, **first)


# --------------------------------------------------------------------------- signals


def seat_points(seats: float) -> float:
    return round(15 * math.log1p(seats) / math.log1p(500), 2)


def users_raw(users: float) -> float:
    """Points of one half (10 of the 20) of the active-users signal, unrounded."""
    return 10 * math.log1p(min(users, 200)) / math.log1p(200)


def users_points(users: float) -> float:
    return round(users_raw(users), 2)


@pytest.mark.parametrize(
    ("changes", "signal", "expected"),
    [
        ({"plan": "enterprise"}, "plan", 20.0),
        ({"plan": " Business "}, "plan", 15.0),
        ({"plan": "TEAM"}, "plan", 6.0),
        ({"plan": "free"}, "plan", 0.0),
        ({"plan": "platinum"}, "plan", 0.0),
        ({"seats": 500}, "seats", 15.0),
        ({"seats": 10**9}, "seats", 15.0),
        ({"seats": 10}, "seats", seat_points(10)),
        ({"seats": 0}, "seats", 0.0),
        # Unknown seats: only the volume half of the active-users signal.
        ({"active_users_30d": 200}, "active_users", 10.0),
        ({"active_users_30d": 10}, "active_users", users_points(10)),
        ({"active_users_30d": 200, "seats": 200}, "active_users", 20.0),
        # Users beyond the paid seats count only in the volume half.
        ({"active_users_30d": 50, "seats": 5}, "active_users", round(
            users_raw(50) + users_raw(5), 2)),
        ({"last_active_at": AS_OF - timedelta(days=7)}, "recency", 15.0),
        ({"last_active_at": AS_OF - timedelta(days=33.5)}, "recency", 7.5),
        ({"last_active_at": AS_OF - timedelta(days=60)}, "recency", 0.0),
        ({"last_active_at": AS_OF + timedelta(hours=20)}, "recency", 15.0),
        ({"last_active_at": AS_OF + timedelta(days=3)}, "recency", 0.0),
        ({"employee_count": 1}, "company_size", 1.0),
        ({"employee_count": 49}, "company_size", 3.0),
        ({"employee_count": 50}, "company_size", 5.5),
        ({"employee_count": 250}, "company_size", 8.0),
        ({"employee_count": 100_000}, "company_size", 10.0),
        ({"employee_count": 0}, "company_size", 0.0),
        ({"country": " sg"}, "country", 10.0),
        ({"country": "KR"}, "country", 9.0),
        ({"country": "US"}, "country", 0.0),
        ({"industry": "LOGISTICS"}, "industry", 7.0),
        ({"industry": "  Financial   Services"}, "industry", 9.0),
        ({"industry": "Mining"}, "industry", 0.0),
    ],
)  # fmt: skip
def test_each_signal_in_isolation(changes: dict[str, object], signal: str, expected: float) -> None:
    (row,) = score(changes).to_dict("records")
    signal_points = dict.fromkeys(SIGNALS, 0.0)
    if signal == "active_users" and "seats" in changes:
        signal_points["seats"] = seat_points(float(changes["seats"]))  # type: ignore[arg-type]
    signal_points[signal] = expected
    assert json.loads(row["contributions"]) == pytest.approx(signal_points, abs=1e-9)
    assert row["total_score"] == pytest.approx(sum(signal_points.values()), abs=1e-9)


def test_a_tenant_without_any_signal_scores_zero_and_p3() -> None:
    (row,) = score({}).to_dict("records")
    assert row["total_score"] == 0.0
    assert set(json.loads(row["contributions"]).values()) == {0.0}
    assert (row["calculated_priority"], row["priority"], row["priority_reason"]) == (
        "P3",
        "P3",
        SCORE_REASON,
    )


def test_a_perfect_tenant_scores_100_and_only_p1() -> None:
    perfect = {**STRONG_ROW, "seats": 500, "active_users_30d": 500}
    (row,) = score(perfect).to_dict("records")
    assert json.loads(row["contributions"]) == dict(MODEL.weights)
    assert row["total_score"] == 100.0
    assert row["priority"] == "P1"


# --------------------------------------------------------------------------- monotonicity


def test_score_never_decreases_along_seats_and_active_users_grids() -> None:
    seats = np.arange(0, 1200, dtype=float)
    for users in (0, 1, 7, 60, 250, 5000):
        rows = frame(*({"seats": s, "active_users_30d": users} for s in seats[::3]))
        totals = score_tenants(rows, model=MODEL, as_of=AS_OF)["total_score"].to_numpy()
        assert (np.diff(totals) >= 0).all(), users
    users_grid = frame(*({"seats": 40, "active_users_30d": u} for u in range(0, 600, 2)))
    totals = score_tenants(users_grid, model=MODEL, as_of=AS_OF)["total_score"].to_numpy()
    assert (np.diff(totals) >= 0).all()
    assert totals[-1] > totals[0]


counts = st.integers(min_value=0, max_value=100_000)


@settings(max_examples=80, deadline=None)
@given(
    plan=st.sampled_from([None, "free", "team", "pro", "business", "enterprise", "other"]),
    seats=counts,
    users=counts,
    employees=st.none() | counts,
    days_ago=st.floats(min_value=0, max_value=400, allow_nan=False),
    more_seats=counts,
    more_users=counts,
    fewer_days=st.floats(min_value=0, max_value=400, allow_nan=False),
)
def test_more_seats_users_or_recency_never_lowers_the_score(
    plan: str | None,
    seats: int,
    users: int,
    employees: int | None,
    days_ago: float,
    more_seats: int,
    more_users: int,
    fewer_days: float,
) -> None:
    base = {
        "plan": plan,
        "seats": seats,
        "active_users_30d": users,
        "employee_count": employees,
        "last_active_at": AS_OF - timedelta(days=days_ago),
        "country": "JP",
    }
    newer = AS_OF - timedelta(days=max(days_ago - fewer_days, 0.0))
    totals = score(
        base,
        {**base, "seats": seats + more_seats},
        {**base, "active_users_30d": users + more_users},
        {**base, "last_active_at": newer},
        {**base, "seats": seats + more_seats, "active_users_30d": users + more_users},
    )["total_score"].to_numpy()
    assert (totals[1:] >= totals[0]).all(), totals


# --------------------------------------------------------------------------- priorities


@pytest.mark.parametrize(
    ("fraction", "total", "priority"),
    [
        (1.0, 100.0, "P1"),
        (0.70, 70.0, "P1"),
        (0.6999, 69.99, "P2"),
        (0.45, 45.0, "P2"),
        (0.4499, 44.99, "P3"),
        (0.0, 0.0, "P3"),
    ],
)
def test_thresholds_map_scores_to_p1_p2_p3(fraction: float, total: float, priority: str) -> None:
    plan_only = model_with(
        weights={signal: 100.0 if signal == "plan" else 0.0 for signal in SIGNALS},
        signals={**RAW_MODEL["signals"], "plan": {"scores": {"custom": fraction}}},
    )
    (row,) = score({**STRONG_ROW, "plan": "custom"}, model=plan_only).to_dict("records")
    assert row["total_score"] == total
    assert row["calculated_priority"] == row["priority"] == priority


def test_default_model_priorities_for_typical_tenants() -> None:
    typical = score(
        STRONG_ROW,
        {
            "plan": "pro",
            "seats": 20,
            "active_users_30d": 10,
            "last_active_at": AS_OF - timedelta(days=20),
            "employee_count": 80,
            "country": "KR",
            "industry": "Logistics",
        },
        {"plan": "team", "seats": 3, "active_users_30d": 2, "country": "US"},
    )
    assert typical["calculated_priority"].tolist() == ["P1", "P2", "P3"]


# --------------------------------------------------------------------------- P0 override


def test_p0_only_replaces_the_priority_of_a_valid_hubspot_override() -> None:
    hubspot = {"priority_override": PRIORITY_OVERRIDE, "priority_reason": PRIORITY_REASON}
    weak = {"plan": "team", "seats": 2}
    scored = score(weak, {**weak, **hubspot}, STRONG_ROW, {**STRONG_ROW, **hubspot})
    plain, target, strong, strong_target = scored.to_dict("records")
    # The numeric score and the calculated priority are untouched by the override.
    for without, with_override in ((plain, target), (strong, strong_target)):
        assert with_override["total_score"] == without["total_score"]
        assert with_override["contributions"] == without["contributions"]
        assert with_override["calculated_priority"] == without["calculated_priority"]
        assert with_override["priority"] == "P0"
        assert with_override["priority_reason"] == PRIORITY_REASON
        assert without["priority"] == without["calculated_priority"] != "P0"
        assert without["priority_reason"] == SCORE_REASON
    assert target["calculated_priority"] == "P3"


@pytest.mark.parametrize(
    ("override", "reason", "expected_reason"),
    [
        ("P1", "hubspot_target_account", "priority_override_not_allowlisted"),
        ("p0", "hubspot_target_account", "priority_override_not_allowlisted"),
        ("P0", "manual", "priority_reason_not_allowlisted"),
        ("P0", None, "priority_reason_not_allowlisted"),
        (None, "hubspot_target_account", "priority_reason_without_override"),
    ],
)
def test_invalid_overrides_are_rejected_not_scored(
    override: str | None, reason: str | None, expected_reason: str
) -> None:
    rows = frame(
        STRONG_ROW, {**STRONG_ROW, "priority_override": override, "priority_reason": reason}
    )
    valid, rejected = partition_scoring_input(rows)
    assert valid["tenant_id"].tolist() == ["t-0"]
    assert rejected["tenant_id"].tolist() == ["t-1"]
    assert rejected[REJECTION_REASON_COLUMN].tolist() == [expected_reason]
    assert expected_reason in SCORING_CONTRACT_VIOLATIONS
    scored = score_tenants(rows, model=MODEL, as_of=AS_OF)
    assert scored["tenant_id"].tolist() == ["t-0"]
    assert "P0" not in scored["priority"].tolist()


@pytest.mark.parametrize("bucket", ["Active", " active", "sales-owned", "forced", None, 1])
def test_invalid_buckets_are_rejected_not_scored(bucket: object) -> None:
    rows = frame({**STRONG_ROW, "tenant_bucket": bucket}, {**STRONG_ROW, "tenant_bucket": "active"})
    valid, rejected = partition_scoring_input(rows)
    assert rejected[REJECTION_REASON_COLUMN].tolist() == ["tenant_bucket_not_allowlisted"]
    assert valid.index.tolist() == [1]
    assert score_tenants(rows, model=MODEL, as_of=AS_OF).index.tolist() == [1]


def test_partition_keeps_every_row_once_and_reports_each_reason() -> None:
    rows = frame(
        {"tenant_bucket": "active"},
        {"tenant_bucket": "sales_owned"},
        {"tenant_id": None},
        {"tenant_id": ""},
        {"tenant_id": "forced-1", "tenant_bucket": "sales_owned"},
        {"tenant_bucket": "unknown"},
        {"priority_override": "P0", "priority_reason": "hubspot_target_account"},
    )
    rows.index = [10, 11, 12, 13, 14, 15, 16]
    valid, rejected = partition_scoring_input(rows, forced_sales_owned_ids=[" forced-1 "])
    assert valid.index.tolist() == [10, 11, 16]
    assert rejected[REJECTION_REASON_COLUMN].to_dict() == {
        12: TENANT_ID_MISSING,
        13: TENANT_ID_MISSING,
        14: FORCED_SALES_OWNED_NOT_SCORED,
        15: "tenant_bucket_not_allowlisted",
    }
    assert list(valid.columns) == list(rows.columns)
    assert list(rejected.columns) == [*rows.columns, REJECTION_REASON_COLUMN]
    scored = score_tenants(rows, model=MODEL, as_of=AS_OF, forced_sales_owned_ids={"forced-1"})
    assert scored.index.tolist() == [10, 11, 16]
    assert scored["priority"].tolist()[-1] == "P0"


def test_forced_sales_owned_ids_are_never_scored() -> None:
    rows = frame({"tenant_id": "forced-1", "tenant_bucket": "sales_owned"}, STRONG_ROW)
    scored = score_tenants(rows, model=MODEL, as_of=AS_OF, forced_sales_owned_ids=["forced-1"])
    assert scored["tenant_id"].tolist() == ["t-1"]
    unforced = score_tenants(rows, model=MODEL, as_of=AS_OF)
    assert unforced["tenant_id"].tolist() == ["forced-1", "t-1"]


# --------------------------------------------------------------------------- output shape


def test_output_is_aligned_with_the_valid_input_rows() -> None:
    rows = frame(STRONG_ROW, {"tenant_bucket": "sales_owned", "plan": "pro"})
    rows.index = ["a", "b"]
    scored = score_tenants(rows, model=MODEL, as_of=AS_OF)
    assert list(scored.columns) == list(OUTPUT_COLUMNS)
    assert scored.index.tolist() == ["a", "b"]
    assert scored["tenant_id"].tolist() == ["t-0", "t-1"]
    assert scored["tenant_bucket"].tolist() == ["active", "sales_owned"]
    assert scored["score_model_version"].tolist() == [MODEL.version] * 2
    assert scored["total_score"].dtype == float


def test_empty_input_gives_an_empty_frame_with_the_output_columns() -> None:
    scored = score_tenants(frame(STRONG_ROW).iloc[0:0], model=MODEL, as_of=AS_OF)
    assert list(scored.columns) == list(OUTPUT_COLUMNS)
    assert scored.empty


def test_missing_columns_and_naive_as_of_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="missing required columns: industry"):
        score_tenants(frame(STRONG_ROW).drop(columns="industry"), model=MODEL, as_of=AS_OF)
    with pytest.raises(ValueError, match="as_of must be timezone-aware"):
        score_tenants(frame(STRONG_ROW), model=MODEL, as_of=datetime(2026, 11, 30))
    with pytest.raises(ValueError, match="as_of must be a timezone-aware datetime"):
        score_tenants(frame(STRONG_ROW), model=MODEL, as_of="2026-11-30")  # type: ignore[arg-type]
    assert set(INPUT_COLUMNS) == {"tenant_id", *EMPTY_ROW}


def test_sales_owned_and_active_tenants_with_identical_signals_score_identically() -> None:
    rows = frame(
        {**STRONG_ROW, "tenant_bucket": "active"},
        {**STRONG_ROW, "tenant_bucket": "sales_owned"},
        {"plan": "pro", "seats": 12, "tenant_bucket": "active"},
        {"plan": "pro", "seats": 12, "tenant_bucket": "sales_owned"},
    )
    scored = score_tenants(rows, model=MODEL, as_of=AS_OF)
    same = ["total_score", "calculated_priority", "priority", "priority_reason", "contributions"]
    for first, second in ((0, 1), (2, 3)):
        assert scored.iloc[first][same].to_dict() == scored.iloc[second][same].to_dict()
    assert scored["tenant_bucket"].tolist() == ["active", "sales_owned"] * 2


# --------------------------------------------------------------------------- garbage


def test_garbage_inputs_score_as_missing_without_raising() -> None:
    garbage = {
        "plan": 5,
        "seats": -3,
        "active_users_30d": "lots",
        "last_active_at": "not a date",
        "employee_count": float("inf"),
        "country": ["AU"],
        "industry": {"name": "Software"},
    }
    coerced = {
        "plan": " Enterprise ",
        "seats": "12",  # numeric text is a number
        "active_users_30d": 10**30,  # absurdly large: capped
        "last_active_at": datetime(2026, 11, 30, 1, 0),  # naive: read as UTC
        "employee_count": decimal.Decimal("250"),
        "country": " au",
        "industry": np.nan,
    }
    more = {
        "plan": b"pro",
        "seats": np.nan,
        "active_users_30d": pd.NA,
        "last_active_at": pd.Timestamp("2999-01-01", tz="UTC"),  # far future: corrupt
        "employee_count": 1e308,
        "country": 3.5,
        "industry": None,
    }
    scored = score(garbage, coerced, more)
    contributions = points(scored)
    assert contributions.iloc[0].tolist() == [0.0] * len(SIGNALS)
    assert contributions.iloc[1].to_dict() == {
        "plan": 20.0,
        "seats": seat_points(12),
        "active_users": round(10 + users_raw(12), 2),
        "recency": 15.0,
        "company_size": 8.0,
        "country": 10.0,
        "industry": 0.0,
    }
    assert contributions.iloc[2].to_dict() == {**dict.fromkeys(SIGNALS, 0.0), "company_size": 10.0}
    assert scored["total_score"].between(0, 100).all()


@pytest.mark.parametrize(
    "column",
    [
        pd.Series([datetime(2026, 11, 20, 16)] * 2, dtype="datetime64[ns]"),  # naive dtype
        pd.Series([pd.Timestamp("2026-11-21 00:00", tz="Asia/Shanghai")] * 2),  # CST
        pd.Series(["2026-11-20T16:00:00Z", "2026-11-21 01:00:00+09:00"]),  # text
        pd.Series([datetime(2026, 11, 20, 16, tzinfo=UTC), datetime(2026, 11, 20, 16)]),  # mixed
    ],
)
def test_timestamps_of_every_shape_mean_the_same_instant(column: pd.Series) -> None:
    rows = frame({}, {})
    rows["last_active_at"] = column
    expected = round(15 * (60 - 10) / 53, 2)  # 2026-11-20 16:00 UTC is 10 days before AS_OF
    assert points(score_tenants(rows, model=MODEL, as_of=AS_OF))["recency"].tolist() == [
        expected,
        expected,
    ]


def test_unhashable_and_mixed_cells_in_every_column_do_not_raise() -> None:
    signal_columns = [c for c in INPUT_COLUMNS if c in EMPTY_ROW and c != "tenant_bucket"]
    signal_columns = [c for c in signal_columns if not c.startswith("priority_")]
    assert len(signal_columns) == 7
    rows = frame(*({column: [1, 2]} for column in signal_columns))
    scored = score_tenants(rows, model=MODEL, as_of=AS_OF)
    assert scored["total_score"].tolist() == [0.0] * 7


# --------------------------------------------------------------------------- vectorised = per row


def reference_row(row: dict[str, Any], model: ScoringModel) -> tuple[dict[str, float], str]:
    """A deliberately plain per-row implementation of docs/scoring.md."""

    def number(value: Any) -> float | None:
        if value is None or isinstance(value, bool):
            return None
        try:
            parsed = float(value)
        except (TypeError, ValueError):
            return None
        return parsed if math.isfinite(parsed) and parsed >= 0 else None

    def log_scale(value: float | None, cap: float) -> float:
        return 0.0 if value is None else math.log1p(min(value, cap)) / math.log1p(cap)

    seats, users = number(row["seats"]), number(row["active_users_30d"])
    employees = number(row["employee_count"])
    share = model.active_users_paid_seat_share
    paid_users = None if users is None or seats is None else min(users, seats)
    recency = 0.0
    if isinstance(row["last_active_at"], datetime):
        days = (AS_OF - row["last_active_at"]).total_seconds() / 86_400
        if days >= -model.recency_future_tolerance_days:
            full, zero = model.recency_full_credit_days, model.recency_zero_credit_days
            recency = min(max((zero - days) / (zero - full), 0.0), 1.0)
    size = 0.0
    for lower, band_score in model.company_size_bands:
        if employees is not None and employees >= lower:
            size = band_score
    fractions = {
        "plan": model.plan_scores.get(normalise_plan(row["plan"]) or "", 0.0),
        "seats": log_scale(seats, model.seats_cap),
        "active_users": (1 - share) * log_scale(users, model.active_users_cap)
        + share * log_scale(paid_users, model.active_users_cap),
        "recency": recency,
        "company_size": size,
        "country": model.country_scores.get(normalise_country(row["country"]) or "", 0.0),
        "industry": model.industry_scores.get(normalise_industry(row["industry"]) or "", 0.0),
    }
    contributions = {s: round(fractions[s] * model.weights[s] * 100) / 100 for s in SIGNALS}
    total = round(sum(contributions.values()), 2)
    priority = next((p for p, t in model.thresholds if total >= t), "P3")
    return contributions, priority


def random_frame(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)

    def pick(values: list[object]) -> np.ndarray:
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return array[rng.integers(0, len(values), rows)]

    def counts(high: int) -> np.ndarray:
        values = rng.integers(0, high, rows).astype(object)
        values[rng.random(rows) < 0.1] = None
        values[rng.random(rows) < 0.02] = -1
        return values

    seconds = rng.integers(-2 * 86_400, 120 * 86_400, rows)
    last_active = [AS_OF - timedelta(seconds=int(s)) for s in seconds]
    p0 = rng.random(rows) < 0.1
    frame = pd.DataFrame(
        {
            "tenant_id": [f"t-{i}" for i in range(rows)],
            "tenant_bucket": pick(["active", "sales_owned"]),
            "plan": pick(["enterprise", "Business", " pro", "team", "free", "other", None]),
            "seats": counts(3000),
            "active_users_30d": counts(1000),
            "last_active_at": pd.Series(last_active, dtype=object).where(
                rng.random(rows) > 0.1, None
            ),
            "employee_count": counts(20_000),
            "country": pick(["AU", "jp", "SG ", "KR", "IN", "US", "DE", None]),
            "industry": pick(["Software", "logistics", "RETAIL", "Mining", None]),
            "priority_override": np.where(p0, PRIORITY_OVERRIDE, None),
            "priority_reason": np.where(p0, PRIORITY_REASON, None),
        }
    )
    return frame


def test_vectorised_scores_match_the_per_row_reference_on_10k_rows() -> None:
    rows = random_frame(10_000, seed=7)
    scored = score_tenants(rows, model=MODEL, as_of=AS_OF)
    assert len(scored) == len(rows)
    expected_points = []
    expected_priorities = []
    for record in rows.to_dict("records"):
        contributions, priority = reference_row(record, MODEL)
        expected_points.append([contributions[s] for s in SIGNALS])
        expected_priorities.append(priority)
    actual = points(scored)[list(SIGNALS)].to_numpy()
    expected = np.array(expected_points)
    # Same formulas; libm and numpy may differ in the last bit, which can flip a rounding tie.
    assert np.abs(actual - expected).max() <= 0.0100001
    assert (actual == expected).mean() > 0.999
    totals = scored["total_score"].to_numpy()
    near_threshold = np.zeros(len(rows), dtype=bool)
    for _, threshold in MODEL.thresholds:
        near_threshold |= np.abs(totals - threshold) < 0.1
    calculated = scored["calculated_priority"].to_numpy()
    assert (calculated == np.array(expected_priorities))[~near_threshold].all()
    overridden = rows["priority_override"].notna().to_numpy()
    assert (scored["priority"].to_numpy()[overridden] == "P0").all()
    assert (scored["priority"].to_numpy()[~overridden] == calculated[~overridden]).all()
    # All three priorities occur, so the comparison is not vacuous.
    assert set(calculated) == {"P1", "P2", "P3"}


def test_contributions_sum_to_the_total_and_respect_the_weights() -> None:
    scored = score_tenants(random_frame(2_000, seed=11), model=MODEL, as_of=AS_OF)
    contributions = points(scored)
    assert list(contributions.columns) == list(SIGNALS)
    assert all(list(json.loads(c)) == list(SIGNALS) for c in scored["contributions"])
    sums = contributions.sum(axis=1).to_numpy()
    assert np.allclose(sums, scored["total_score"].to_numpy(), atol=1e-9)
    assert (scored["total_score"] == scored["total_score"].round(2)).all()
    for signal in SIGNALS:
        assert contributions[signal].between(0, MODEL.weights[signal]).all()
        assert (contributions[signal] == contributions[signal].round(2)).all()
    assert scored["total_score"].between(0, 100).all()
    assert scored["total_score"].nunique() > 100


def test_other_timezones_for_as_of_mean_the_same_instant() -> None:
    rows = random_frame(500, seed=3)
    cst = AS_OF.astimezone(timezone(timedelta(hours=8)))
    in_utc = score_tenants(rows, model=MODEL, as_of=AS_OF)
    in_cst = score_tenants(rows, model=MODEL, as_of=cst)
    assert in_utc["total_score"].equals(in_cst["total_score"])


def test_activity_seen_by_a_late_read_is_recent_not_corrupt() -> None:
    """A backfill scores an old day as of its end, but reads today's source: activity after
    ``as_of`` and before ``observed_at`` is real and gets full recency credit."""
    later = {**EMPTY_ROW, "last_active_at": AS_OF + timedelta(days=3)}
    beyond = {**EMPTY_ROW, "last_active_at": AS_OF + timedelta(days=4 + 1.5)}
    observed_at = AS_OF + timedelta(days=4)
    assert points(score(later))["recency"].tolist() == [0.0]  # corrupt without a late read
    late = points(score(later, beyond, observed_at=observed_at))["recency"].tolist()
    assert late == [MODEL.weights["recency"], 0.0]  # still corrupt past the read + tolerance
    # a read before as_of (the normal daily run is later, never earlier) changes nothing
    assert points(score(later, observed_at=AS_OF - timedelta(days=2)))["recency"].tolist() == [0.0]


def test_contributions_are_the_text_json_writes_for_the_points() -> None:
    scored = score_tenants(random_frame(2_000, seed=5), model=MODEL, as_of=AS_OF)
    texts = scored["contributions"].tolist()
    # Encoded from the decoded points by json itself: same keys, order, spacing and numbers
    # ("6.0", not "6" or "6.00").
    assert texts == [json.dumps(json.loads(text)) for text in texts]
    assert all(isinstance(v, float) for text in texts for v in json.loads(text).values())
    assert len({text for text in texts}) > 1_000  # not one constant text


SCORED_AT = datetime(2026, 11, 20, 15, 59, 59, 999999, tzinfo=UTC)


def _recency(moments: list[datetime], at: datetime) -> np.ndarray:
    fraction = recency_fraction(
        pd.Series(pd.to_datetime(moments, utc=True)),
        as_of=at.timestamp(),
        full_credit_days=MODEL.recency_full_credit_days,
        zero_credit_days=MODEL.recency_zero_credit_days,
        future_tolerance_days=MODEL.recency_future_tolerance_days,
    )
    return np.fmax(fraction, 0.0)


@settings(max_examples=300, deadline=None)
@given(
    before=st.integers(0, 100 * 86_400_000_000),
    gap=st.integers(1, 30 * 86_400_000_000),
)
def test_recency_outside_the_range_that_may_move_scores_the_same(before: int, gap: int) -> None:
    """Activity no later than the earlier moment, outside ``recency_may_move``'s range, gets
    the same recency at both moments; inside it may not (the range is not empty)."""
    moment = SCORED_AT - timedelta(microseconds=before)
    later = SCORED_AT + timedelta(microseconds=gap)
    after, before_bound = recency_may_move(MODEL, earlier=SCORED_AT, later=later)
    same = _recency([moment], SCORED_AT)[0] == _recency([moment], later)[0]
    if not after < moment < before_bound:
        assert same


@settings(max_examples=300, deadline=None)
@given(
    before=st.integers(0, 100 * 86_400_000_000),
    later_days=st.integers(0, 90),
)
def test_recency_cannot_move_before_its_moment(before: int, later_days: int) -> None:
    """Scored at one day's end: on any later day's end up to ``recency_moves_from`` (never,
    where it is missing) the recency is what it was."""
    moment = SCORED_AT - timedelta(microseconds=before)
    (moves_from,) = recency_moves_from(
        pd.Series(pd.to_datetime([moment], utc=True)), model=MODEL, as_of=SCORED_AT
    )
    later = SCORED_AT + timedelta(days=later_days)
    if pd.isna(moves_from) or later <= moves_from:
        assert _recency([moment], later)[0] == _recency([moment], SCORED_AT)[0]


def test_recency_that_already_has_no_credit_never_moves_and_a_missing_one_neither() -> None:
    moments = [None, SCORED_AT - timedelta(days=MODEL.recency_zero_credit_days + 2), SCORED_AT]
    moves_from = recency_moves_from(
        pd.Series(pd.to_datetime(moments, utc=True)), model=MODEL, as_of=SCORED_AT
    )
    assert moves_from.isna().to_list() == [True, True, False]
