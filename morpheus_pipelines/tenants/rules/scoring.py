"""Tenant scoring (docs/scoring.md): the vectorised scorer.

The model (:mod:`~morpheus_pipelines.tenants.rules.scoring_model`) lives in ``scoring_model.toml``
(explained there and in ``docs/scoring.md``). Each signal of its ``SIGNALS`` turns one or two
input columns into a fraction between 0 and 1; the fraction times the signal's weight is the
signal's points, rounded to 0.01; the total score is the sum of the points, 0 to 100. The
calculated priority comes from the model's thresholds (``P1``, ``P2``, else ``P3``). The final
priority is that calculated priority, except for a row carrying the only allowlisted override,
``P0`` with reason ``hubspot_target_account``: its final priority is ``P0`` and its score is
unchanged. No score ever reaches ``P0`` by itself.

Active and Sales-owned tenants are scored by the same model; the bucket only travels with the
row. Before scoring, the allowlists of the routing → scoring contract are enforced by
:func:`~morpheus_pipelines.tenants.rules.routing.scoring_contract_violations`; rows that break them,
rows without a tenant id and the forced Sales-owned ids (which never enter scoring) are split
off by :func:`partition_scoring_input` and never scored.

Garbage never raises, it scores 0 for its signal: numeric columns go through ``pd.to_numeric``
(numeric text such as ``"12"`` is read as a number; anything else, ``NaN``, ``±inf`` and
negative values are missing); huge numbers are simply capped by the model; text columns that are
not text are missing; ``last_active_at`` values that are not timestamps are missing and *naive*
timestamps are read as UTC (the source column is ``timestamptz``, so a naive value can only come
from a driver or a hand-built frame, and UTC is what such values carry in this pipeline).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from morpheus_pipelines.platform.text.normalise import normalise_identifier
from morpheus_pipelines.tenants.rules.routing import (
    PRIORITY_OVERRIDE,
    PRIORITY_REASON,
    scoring_contract_violations,
)
from morpheus_pipelines.tenants.rules.scoring_model import (
    SCORE_REASON,
    SCORED_PRIORITIES,
    SIGNALS,
    WEIGHT_SUM,
    ScoringModel,
    normalise_country,
    normalise_industry,
    normalise_plan,
)

__all__ = [
    "FORCED_SALES_OWNED_NOT_SCORED",
    "INPUT_COLUMNS",
    "OUTPUT_COLUMNS",
    "REJECTION_REASON_COLUMN",
    "SCORE_REASON",
    "TENANT_ID_MISSING",
    "calculated_priorities",
    "partition_scoring_input",
    "point_number",
    "points_cents",
    "recency_fraction",
    "recency_may_move",
    "recency_moves_from",
    "score_tenants",
    "score_valid_rows",
]

INPUT_COLUMNS: tuple[str, ...] = (
    "tenant_id",
    "tenant_bucket",
    "plan",
    "seats",
    "active_users_30d",
    "last_active_at",
    "employee_count",
    "country",
    "industry",
    "priority_override",
    "priority_reason",
)
"""Columns :func:`score_tenants` and :func:`partition_scoring_input` require (extra columns are
carried through :func:`partition_scoring_input` and ignored by :func:`score_tenants`)."""

OUTPUT_COLUMNS: tuple[str, ...] = (
    "tenant_id",
    "tenant_bucket",
    "total_score",
    "calculated_priority",
    "priority",
    "priority_reason",
    "contributions",
    "score_model_version",
)
"""Columns of the frame returned by :func:`score_tenants`, in order."""

REJECTION_REASON_COLUMN = "rejection_reason"
TENANT_ID_MISSING = "tenant_id_missing"
FORCED_SALES_OWNED_NOT_SCORED = "forced_sales_owned_not_scored"

_SECONDS_PER_DAY = 86_400.0


# --------------------------------------------------------------------------- input split


def _require_columns(frame: pd.DataFrame) -> None:
    missing = [column for column in INPUT_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"scoring input is missing required columns: {', '.join(missing)}")


def partition_scoring_input(
    frame: pd.DataFrame, *, forced_sales_owned_ids: Iterable[str] = ()
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split a scoring batch into ``(valid, rejected)`` before anything is scored.

    A row is rejected, with the first reason that applies in ``rejection_reason``, when:

    1. ``tenant_id`` is missing or empty → ``tenant_id_missing``;
    2. it breaks the routing → scoring allowlists (bucket not ``active``/``sales_owned``, an
    override other
       than ``P0`` + ``hubspot_target_account``, a reason without an override) → the reason from
       :func:`~morpheus_pipelines.tenants.rules.routing.scoring_contract_violations`;
    3. its id is one of ``forced_sales_owned_ids``, which skip scoring (docs/pipeline.md) →
       ``forced_sales_owned_not_scored``.

    ``valid`` keeps every input column and the input index; ``rejected`` adds
    ``rejection_reason``. Together they hold each input row exactly once. Rejections are not an
    error here: the caller reports them (a failing asset check), they are never scored.
    Raises ``ValueError`` when a column of :data:`INPUT_COLUMNS` is missing.
    """
    _require_columns(frame)
    contract = scoring_contract_violations(frame).to_numpy(dtype=object)
    ids = frame["tenant_id"]
    # Ids are compared exactly (no per-row strip: it would cost more than the whole contract
    # check at a million rows); routing already drops forced ids with their padding stripped.
    id_missing = (ids.isna() | ids.isin([""])).to_numpy(dtype=bool)
    forced_set = {i for i in map(normalise_identifier, forced_sales_owned_ids) if i is not None}
    forced = ids.isin(forced_set).to_numpy(dtype=bool) if forced_set else False
    reason = np.select(
        [id_missing, pd.notna(contract), forced],
        [TENANT_ID_MISSING, contract, FORCED_SALES_OWNED_NOT_SCORED],
        default=None,
    ).astype(object)
    rejected_mask = pd.notna(reason)
    if not rejected_mask.any():
        rejected = frame.iloc[0:0].assign(**{REJECTION_REASON_COLUMN: pd.Series(dtype=object)})
        return frame, rejected
    rejected = frame.loc[rejected_mask].copy()
    rejected[REJECTION_REASON_COLUMN] = pd.Series(
        reason[rejected_mask], index=rejected.index, dtype=object
    )
    return frame.loc[~rejected_mask], rejected


# --------------------------------------------------------------------------- scoring


def score_tenants(
    frame: pd.DataFrame,
    *,
    model: ScoringModel,
    as_of: datetime,
    forced_sales_owned_ids: Iterable[str] = (),
    observed_at: datetime | None = None,
) -> pd.DataFrame:
    """Score the valid rows of a batch with ``model`` as of ``as_of`` (timezone-aware).

    ``observed_at`` is when the signals were read from the source (after ``as_of`` for a
    backfill): activity up to then is real, so the recency signal's future tolerance counts
    from ``observed_at`` rather than from ``as_of``.

    Rows rejected by :func:`partition_scoring_input` are left out (call it yourself to report
    them). Returns one row per valid input row, indexed like the input, with
    :data:`OUTPUT_COLUMNS`:

    ``tenant_id``, ``tenant_bucket``  copied from the input
    ``total_score``          float 0 to 100, the sum of ``contributions`` (2 decimals)
    ``calculated_priority``  ``P1`` if ``total_score`` ≥ the P1 threshold, ``P2`` if ≥ the P2
                             threshold, else ``P3``
    ``priority``             ``P0`` for a row with override ``P0`` and reason
                             ``hubspot_target_account``, else ``calculated_priority``
    ``priority_reason``      ``hubspot_target_account`` for those rows, else ``score``
    ``contributions``        the JSON object text signal → points (2 decimals), in
                             :data:`SIGNALS` order (what the snapshot stores)
    ``score_model_version``  ``model.version``

    Vectorised: a million rows take one to two seconds. Raises ``ValueError`` for a naive ``as_of``
    or a missing input column; bad values inside the columns never raise (module docstring).
    """
    valid, _ = partition_scoring_input(frame, forced_sales_owned_ids=forced_sales_owned_ids)
    return score_valid_rows(valid, model=model, as_of=as_of, observed_at=observed_at)


def score_valid_rows(
    valid: pd.DataFrame,
    *,
    model: ScoringModel,
    as_of: datetime,
    observed_at: datetime | None = None,
) -> pd.DataFrame:
    """:func:`score_tenants` for the ``valid`` half of :func:`partition_scoring_input`, for a
    caller that has split the batch already (the split is not free at a million rows)."""
    as_of_seconds = _as_of_seconds(as_of)
    late_days = 0.0
    if observed_at is not None:
        late_days = max(0.0, (_as_of_seconds(observed_at) - as_of_seconds) / _SECONDS_PER_DAY)
    # Points are whole cents (np.round(points, 2) == cents / 100 exactly), so the total is the
    # exact sum of the rounded contributions, with no float drift.
    fractions = _signal_fractions(valid, model, as_of_seconds, late_days)
    cents = points_cents(fractions, model.weight_vector)
    total = np.minimum(cents.sum(axis=1), round(WEIGHT_SUM * 100)) / 100.0
    calculated = calculated_priorities(total, model.thresholds)
    # partition_scoring_input let through only rows without an override or with exactly
    # P0 + hubspot_target_account, so a present override is the HubSpot one.
    overridden = valid["priority_override"].notna().to_numpy(dtype=bool)
    final = calculated.copy()
    final[overridden] = PRIORITY_OVERRIDE
    reasons = np.array([SCORE_REASON, PRIORITY_REASON], dtype=object)[overridden.astype(np.intp)]
    index = valid.index

    def column(values: np.ndarray) -> pd.Series:
        return pd.Series(values, index=index, dtype=object)

    return pd.DataFrame(
        {
            "tenant_id": valid["tenant_id"],
            "tenant_bucket": valid["tenant_bucket"],
            "total_score": pd.Series(total, index=index, dtype=float),
            "calculated_priority": column(calculated),
            "priority": column(final),
            "priority_reason": column(reasons),
            "contributions": column(_contributions_json(cents)),
            "score_model_version": column(np.full(len(index), model.version, dtype=object)),
        },
        index=index,
    )


# The arithmetic the view ``apac_tenant_score_snapshots`` repeats in SQL to move a stored score's
# recency points to the day it answers (migration 0032): a change here needs a migration that
# replaces the view (tests/tenants/test_score_view.py holds the two equal).


def points_cents(fractions: np.ndarray, weights: np.ndarray | float) -> np.ndarray:
    """Points in whole cents: fraction × weight × 100, rounded half to even (``np.rint``)."""
    return np.rint(fractions * weights * 100.0).astype(np.int64)


def calculated_priorities(
    total: np.ndarray,
    thresholds: tuple[tuple[str, float], ...],
    lowest: str = SCORED_PRIORITIES[-1],
) -> np.ndarray:
    """The priority of each total: that of the first (highest) threshold it reaches, else
    ``lowest``."""
    # Object arrays of shared label strings: indexing a 3-item array is far cheaper than
    # np.select/np.where on strings, which would allocate a new str per row.
    labels = np.array([p for p, _ in thresholds] + [lowest], dtype=object)
    bounds = np.array([threshold for _, threshold in thresholds], dtype=float)
    return labels[(total[:, np.newaxis] < bounds).sum(axis=1)]


def point_number(cents: int) -> str:
    """``cents / 100`` as the JSON number ``contributions`` stores (``15.0``, ``0.05``)."""
    return json.dumps(cents / 100)


def recency_may_move(
    model: ScoringModel, *, earlier: datetime, later: datetime
) -> tuple[datetime, datetime]:
    """The ``last_active_at`` values, strictly between the two bounds returned, whose recency
    points may differ between scoring at ``earlier`` and at ``later`` (no later than
    ``earlier``'s moment, and not missing: those score the same at any later moment). Outside
    it a value has no credit at ``earlier`` (so none at ``later``) or full credit at ``later``
    (so full credit at ``earlier``). A day's margin on each side covers the whole seconds the
    scorer counts."""
    margin = timedelta(days=1)
    return (
        earlier - timedelta(days=model.recency_zero_credit_days) - margin,
        later - timedelta(days=model.recency_full_credit_days) + margin,
    )


def recency_moves_from(
    last_active_at: pd.Series, *, model: ScoringModel, as_of: datetime
) -> pd.Series:
    """For scores computed at ``as_of``, the moment after which each one's recency points may
    differ from the ones computed then (a day early: the scorer counts whole seconds), or NaT
    where they never can: ``last_active_at`` missing, or old enough for no credit at
    ``as_of``. For values no later than ``as_of``."""
    moments = pd.to_datetime(last_active_at, utc=True, errors="coerce")
    day = pd.Timedelta(days=1)
    never = moments.isna() | (
        moments + model.recency_zero_credit_days * day + day <= pd.Timestamp(as_of)
    )
    return (moments + model.recency_full_credit_days * day - day).where(~never)


def recency_fraction(
    last_active_at: pd.Series,
    *,
    as_of: float,
    full_credit_days: float,
    zero_credit_days: float,
    future_tolerance_days: float,
    late_days: float = 0.0,
) -> np.ndarray:
    """Recency fraction of ``last_active_at`` at ``as_of`` (seconds since the epoch): 1 up to
    ``full_credit_days`` ago, 0 from ``zero_credit_days`` ago, linear between; ``NaN`` where
    the value is missing or more than the tolerance ahead. Activity up to ``late_days`` after
    ``as_of`` was seen by the source read and is not corrupt."""
    days = (as_of - _utc_seconds(last_active_at)) / _SECONDS_PER_DAY
    with np.errstate(invalid="ignore"):
        fraction = np.clip(
            (zero_credit_days - days) / (zero_credit_days - full_credit_days), 0.0, 1.0
        )
        too_far_ahead = days < -(future_tolerance_days + late_days)
    return np.where(too_far_ahead, np.nan, fraction)


def _as_of_seconds(as_of: datetime) -> float:
    if not isinstance(as_of, datetime):
        raise ValueError(f"as_of must be a timezone-aware datetime, got {as_of!r}")
    if as_of.tzinfo is None or as_of.utcoffset() is None:
        raise ValueError(f"as_of must be timezone-aware, got naive {as_of!r}")
    return as_of.timestamp()


def _contributions_json(cents: np.ndarray) -> np.ndarray:
    """One JSON object ``{"signal": points, ...}`` per row of the 2-D ``cents`` array, in
    :data:`SIGNALS` order, as the text the snapshot stores: each point value is ``cents / 100``
    written as ``json`` writes that float (:func:`point_number`). The texts are joined a column
    at a time in Arrow from one text per distinct value, far cheaper than a dict per tenant
    encoded afterwards (docs/performance.md)."""
    numbers = pa.array([point_number(k) for k in range(int(cents.max(initial=0)) + 1)])
    parts: list[pa.Array | pa.Scalar] = []
    for position, signal in enumerate(SIGNALS):
        parts.append(pa.scalar(("{" if position == 0 else ", ") + json.dumps(signal) + ": "))
        parts.append(pc.take(numbers, pa.array(cents[:, position], type=pa.int64())))
    parts.append(pa.scalar("}"))
    return pc.binary_join_element_wise(*parts, "").to_numpy(zero_copy_only=False)


def _signal_fractions(
    frame: pd.DataFrame, model: ScoringModel, as_of: float, late_days: float = 0.0
) -> np.ndarray:
    """``(rows, len(SIGNALS))`` array of fractions in ``[0, 1]``; missing inputs give 0."""
    seats = _non_negative(frame["seats"])
    active = _non_negative(frame["active_users_30d"])
    share = model.active_users_paid_seat_share
    by_signal = {
        "plan": _lookup(frame["plan"], model.plan_scores, normalise_plan),
        "seats": _log_scale(seats, model.seats_cap),
        # Each half on its own: unknown seats zero only the paid-seat half (fmax: NaN → 0).
        "active_users": (1.0 - share) * np.fmax(_log_scale(active, model.active_users_cap), 0.0)
        + share * np.fmax(_log_scale(np.minimum(active, seats), model.active_users_cap), 0.0),
        "recency": recency_fraction(
            frame["last_active_at"],
            as_of=as_of,
            full_credit_days=model.recency_full_credit_days,
            zero_credit_days=model.recency_zero_credit_days,
            future_tolerance_days=model.recency_future_tolerance_days,
            late_days=late_days,
        ),
        "company_size": _bands(_non_negative(frame["employee_count"]), model.company_size_bands),
        "country": _lookup(frame["country"], model.country_scores, normalise_country),
        "industry": _lookup(frame["industry"], model.industry_scores, normalise_industry),
    }
    # Column-major, so that filling one signal writes contiguous memory.
    fractions = np.empty((len(frame), len(SIGNALS)), dtype=float, order="F")
    for position, signal in enumerate(SIGNALS):
        # fmax turns NaN (missing) into 0, fmin caps at 1.
        np.fmin(np.fmax(by_signal[signal], 0.0), 1.0, out=fractions[:, position])
    return fractions


def _non_negative(series: pd.Series) -> np.ndarray:
    """Numbers as float64; non-numbers, ``NaN``, ``±inf`` and negatives become ``NaN``."""
    try:
        numbers = pd.to_numeric(series, errors="coerce")
    except (TypeError, ValueError):  # exotic cells pd.to_numeric cannot even coerce
        numbers = pd.to_numeric(series.map(_plain_number), errors="coerce")
    values = np.asarray(numbers.to_numpy(dtype=float, na_value=np.nan), dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(values) & (values >= 0), values, np.nan)


def _plain_number(value: object) -> object:
    return value if isinstance(value, int | float | str) else None


def _log_scale(values: np.ndarray, cap: float) -> np.ndarray:
    """``ln(1 + x) / ln(1 + cap)`` capped at 1; ``NaN`` (missing) stays ``NaN``."""
    return np.log1p(np.minimum(values, cap)) / math.log1p(cap)


def _bands(values: np.ndarray, bands: tuple[tuple[float, float], ...]) -> np.ndarray:
    """Score of the last band whose lower bound is ≤ the value; below every band or NaN: 0."""
    lowers = np.array([lower for lower, _ in bands], dtype=float)
    scores = np.array([0.0] + [score for _, score in bands], dtype=float)
    position = np.searchsorted(lowers, np.nan_to_num(values, nan=-1.0), side="right")
    return scores[position]


def _lookup(
    series: pd.Series, table: Mapping[str, float], normalise: Callable[[object], str | None]
) -> np.ndarray:
    """Table score per row; the table is consulted once per distinct value, misses score 0."""
    try:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
    except TypeError:  # unhashable cells (lists, dicts): not text, so missing
        codes, uniques = pd.factorize(
            series.map(lambda value: value if isinstance(value, str) else None)
        )
    scores = np.fromiter(
        (table.get(normalise(value), 0.0) for value in uniques), dtype=float, count=len(uniques)
    )
    # The trailing 0 is what the NA sentinel -1 selects.
    return np.append(scores, 0.0)[codes]


def _utc_seconds(series: pd.Series) -> np.ndarray:
    """Seconds since the epoch per row, ``NaN`` where the cell is not a usable timestamp.

    Aware values are converted to UTC, naive ones are read as UTC, text is parsed, and
    everything else (or an out-of-range date) is missing.
    """
    dtype = series.dtype
    if isinstance(dtype, pd.DatetimeTZDtype):
        utc = series.dt.tz_convert(None)
    elif pd.api.types.is_datetime64_dtype(dtype):
        utc = series
    else:
        try:
            parsed = pd.to_datetime(series, utc=True, errors="coerce", format="mixed")
        except (TypeError, ValueError, OverflowError):
            parsed = series.map(_one_timestamp).astype("datetime64[ns, UTC]")
        utc = parsed.dt.tz_convert(None)
    values = utc.to_numpy()
    seconds = values.astype("datetime64[s]").astype(np.int64).astype(float)
    seconds[np.isnat(values)] = np.nan
    return seconds


def _one_timestamp(value: object) -> pd.Timestamp:
    try:
        stamp = pd.Timestamp(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return pd.NaT
    if stamp is pd.NaT:
        return pd.NaT
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
