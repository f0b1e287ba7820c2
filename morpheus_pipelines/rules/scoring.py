"""Tenant scoring (spec 002 §3.3, §9.2): the versioned model and the vectorised scorer.

The model lives in ``scoring_model.toml`` next to this module (explained there and in
``docs/scoring.md``). Each signal of :data:`SIGNALS` turns one or two input columns into a fraction
between 0 and 1; the fraction times the signal's weight is the signal's points, rounded to 0.01;
the total score is the sum of the points, 0 to 100. The calculated priority comes from the
model's thresholds (``P1``, ``P2``, else ``P3``). The final priority is that calculated priority,
except for a row carrying the only allowlisted override, ``P0`` with reason
``hubspot_target_account``: its final priority is ``P0`` and its score is unchanged. No score ever
reaches ``P0`` by itself.

Active and Sales-owned tenants are scored by the same model (002 §4.3); the bucket only travels
with the row. Before scoring, the allowlists of 002 §9.2 are enforced by
:func:`~morpheus_pipelines.rules.routing.scoring_contract_violations`; rows that break them, rows
without a tenant id and the forced Sales-owned ids (which never enter scoring, 002 §2) are split
off by :func:`partition_scoring_input` and never scored.

Garbage never raises, it scores 0 for its signal: numeric columns go through ``pd.to_numeric``
(numeric text such as ``"12"`` is read as a number; anything else, ``NaN``, ``±inf`` and negative
values are missing); huge numbers are simply capped by the model; text columns that are not text
are missing; ``last_active_at`` values that are not timestamps are missing and *naive* timestamps
are read as UTC (the source column is ``timestamptz``, so a naive value can only come from a
driver or a hand-built frame, and UTC is what such values carry in this pipeline).
"""

from __future__ import annotations

import gc
import math
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from types import MappingProxyType
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from morpheus_pipelines.rules.normalise import normalise_identifier
from morpheus_pipelines.rules.routing import (
    PRIORITY_OVERRIDE,
    PRIORITY_REASON,
    scoring_contract_violations,
)
from morpheus_pipelines.rules.vocabulary import Priority, values

__all__ = [
    "DEFAULT_MODEL_PATH",
    "FORCED_SALES_OWNED_NOT_SCORED",
    "INPUT_COLUMNS",
    "OUTPUT_COLUMNS",
    "REJECTION_REASON_COLUMN",
    "SCORED_PRIORITIES",
    "SCORE_REASON",
    "SIGNALS",
    "TENANT_ID_MISSING",
    "ScoringModel",
    "ScoringModelError",
    "load_model",
    "normalise_country",
    "normalise_industry",
    "normalise_plan",
    "parse_model",
    "partition_scoring_input",
    "score_tenants",
]

DEFAULT_MODEL_PATH = Path(__file__).with_name("scoring_model.toml")

SIGNALS: tuple[str, ...] = (
    "plan",
    "seats",
    "active_users",
    "recency",
    "company_size",
    "country",
    "industry",
)
"""The model's signals, in the order of the weights table and of every ``contributions`` dict."""

SCORED_PRIORITIES: tuple[str, ...] = values(Priority)[1:]  # never P0
"""Priorities a score can reach, highest first. ``P0`` only comes from the HubSpot override."""

SCORE_REASON = "score"
"""``priority_reason`` of a row whose final priority is the calculated one."""

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

WEIGHT_SUM = 100.0
WEIGHT_SUM_TOLERANCE = 0.01
_SECONDS_PER_DAY = 86_400.0


class ScoringModelError(ValueError):
    """The scoring model file is malformed; the message names the file and the offending key."""


def normalise_plan(value: object) -> str | None:
    """Plan names are compared trimmed and lower-cased; non-text is missing."""
    if not isinstance(value, str):
        return None
    return value.strip().lower() or None


def normalise_country(value: object) -> str | None:
    """Countries are ISO 3166-1 alpha-2 codes compared trimmed and upper-cased."""
    if not isinstance(value, str):
        return None
    return value.strip().upper() or None


def normalise_industry(value: object) -> str | None:
    """Industries are compared lower-cased with runs of whitespace collapsed to one space."""
    if not isinstance(value, str):
        return None
    return " ".join(value.split()).lower() or None


@dataclass(frozen=True, eq=False)
class ScoringModel:
    """A validated scoring model; build it with :func:`load_model` or :func:`parse_model`.

    Fractions per signal (each clipped to ``[0, 1]``, missing input → 0):

    ``plan``          ``plan_scores[normalise_plan(plan)]``
    ``seats``         ``ln(1 + seats) / ln(1 + seats_cap)``
    ``active_users``  ``(1 - s) * v(active) + s * v(min(active, seats))`` with
                      ``v(x) = ln(1 + x) / ln(1 + active_users_cap)`` and
                      ``s = active_users_paid_seat_share`` (unknown seats: second term 0)
    ``recency``       ``(zero - days) / (zero - full)`` with ``days`` since ``last_active_at``
    ``company_size``  score of the last band whose ``min`` is ≤ ``employee_count``
    ``country``       ``country_scores[normalise_country(country)]``
    ``industry``      ``industry_scores[normalise_industry(industry)]``
    """

    version: str
    weights: Mapping[str, float]
    thresholds: tuple[tuple[str, float], ...]
    plan_scores: Mapping[str, float]
    seats_cap: float
    active_users_cap: float
    active_users_paid_seat_share: float
    recency_full_credit_days: float
    recency_zero_credit_days: float
    recency_future_tolerance_days: float
    company_size_bands: tuple[tuple[float, float], ...]
    country_scores: Mapping[str, float]
    industry_scores: Mapping[str, float]
    source: str = "<mapping>"

    @property
    def weight_vector(self) -> np.ndarray:
        """The weights as a float array in :data:`SIGNALS` order."""
        return np.array([self.weights[signal] for signal in SIGNALS], dtype=float)


# --------------------------------------------------------------------------- model loading

_TOP_KEYS = ("version", "weights", "thresholds", "signals")
_SIGNAL_KEYS: dict[str, tuple[str, ...]] = {
    "plan": ("scores",),
    "seats": ("cap",),
    "active_users": ("cap", "paid_seat_share"),
    "recency": ("full_credit_days", "zero_credit_days", "future_tolerance_days"),
    "company_size": ("bands",),
    "country": ("scores",),
    "industry": ("scores",),
}
_THRESHOLD_KEYS = SCORED_PRIORITIES[:-1]  # the lowest priority is the floor, it has no threshold
_BAND_KEYS = ("min", "score")


def load_model(path: str | Path | None = None) -> ScoringModel:
    """Read and validate a scoring model TOML file (default: :data:`DEFAULT_MODEL_PATH`).

    Raises :class:`ScoringModelError` naming the file and the key for malformed TOML, unknown or
    missing keys, weights that do not add up to 100 (±0.01), thresholds that are not strictly
    descending within ``(0, 100]``, fractions outside ``[0, 1]`` and non-positive caps.
    ``FileNotFoundError`` propagates unchanged.
    """
    model_path = Path(path) if path is not None else DEFAULT_MODEL_PATH
    with model_path.open("rb") as handle:
        try:
            data = tomllib.load(handle)
        except tomllib.TOMLDecodeError as error:
            raise ScoringModelError(f"scoring model {model_path}: invalid TOML: {error}") from error
    return parse_model(data, source=str(model_path))


def parse_model(data: Mapping[str, Any], *, source: str = "<mapping>") -> ScoringModel:
    """Validate an already-parsed model document (the contents of a TOML file); see
    :func:`load_model` for the rules."""
    check = _Checker(source)
    check.keys(data, _TOP_KEYS, "")

    version = data["version"]
    if not isinstance(version, str) or not version.strip():
        check.fail("version", "must be a non-empty string")

    weights_table = check.table(data, "weights", "")
    check.keys(weights_table, SIGNALS, "weights")
    weights = {s: check.number(weights_table, s, "weights", minimum=0.0) for s in SIGNALS}
    weight_sum = math.fsum(weights.values())
    if abs(weight_sum - WEIGHT_SUM) > WEIGHT_SUM_TOLERANCE:
        check.fail(
            "weights",
            f"must add up to {WEIGHT_SUM:g} (±{WEIGHT_SUM_TOLERANCE}), got {weight_sum:g}",
        )

    threshold_table = check.table(data, "thresholds", "")
    if "P0" in threshold_table:
        check.fail(
            "thresholds.P0",
            "is not allowed: P0 is never reached by a score, it only comes from the HubSpot "
            "target-account override",
        )
    check.keys(threshold_table, _THRESHOLD_KEYS, "thresholds")
    thresholds = tuple(
        (p, check.number(threshold_table, p, "thresholds", minimum=0.0, maximum=WEIGHT_SUM))
        for p in _THRESHOLD_KEYS
    )
    for (higher, high), (lower, low) in pairwise(thresholds):
        if not high > low:
            check.fail(
                "thresholds",
                f"must be strictly descending, got {higher} = {high:g} ≤ {lower} = {low:g}",
            )
    if thresholds[-1][1] <= 0:
        check.fail(f"thresholds.{thresholds[-1][0]}", "must be greater than 0")

    signals = check.table(data, "signals", "")
    check.keys(signals, SIGNALS, "signals")
    sig = {name: check.table(signals, name, "signals") for name in SIGNALS}
    for name, table in sig.items():
        check.keys(table, _SIGNAL_KEYS[name], f"signals.{name}")

    def key(name: str, field: str, **bounds: float) -> float:
        return check.number(sig[name], field, f"signals.{name}", **bounds)

    full_days = key("recency", "full_credit_days", minimum=0.0)
    zero_days = key("recency", "zero_credit_days", minimum=0.0)
    if not zero_days > full_days:
        check.fail("signals.recency.zero_credit_days", "must be greater than full_credit_days")

    return ScoringModel(
        version=version.strip(),
        weights=MappingProxyType(weights),
        thresholds=thresholds,
        plan_scores=check.score_table(sig["plan"], "signals.plan", normalise_plan),
        seats_cap=key("seats", "cap", minimum=1.0),
        active_users_cap=key("active_users", "cap", minimum=1.0),
        active_users_paid_seat_share=key(
            "active_users", "paid_seat_share", minimum=0.0, maximum=1.0
        ),
        recency_full_credit_days=full_days,
        recency_zero_credit_days=zero_days,
        recency_future_tolerance_days=key("recency", "future_tolerance_days", minimum=0.0),
        company_size_bands=check.bands(sig["company_size"], "signals.company_size"),
        country_scores=check.score_table(sig["country"], "signals.country", normalise_country),
        industry_scores=check.score_table(sig["industry"], "signals.industry", normalise_industry),
        source=source,
    )


class _Checker:
    """Validation helpers that raise :class:`ScoringModelError` naming the file and key."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, problem: str) -> NoReturn:
        raise ScoringModelError(f"scoring model {self.source}: {key!r} {problem}")

    def keys(self, table: Mapping[str, Any], allowed: Iterable[str], where: str) -> None:
        allowed = tuple(allowed)
        prefix = f"{where}." if where else ""
        for name in table:
            if name not in allowed:
                raise ScoringModelError(
                    f"scoring model {self.source}: unknown key {prefix + name!r} "
                    f"(allowed{' in [' + where + ']' if where else ''}: {', '.join(allowed)})"
                )
        for name in allowed:
            if name not in table:
                raise ScoringModelError(
                    f"scoring model {self.source}: missing key {prefix + name!r}"
                )

    def table(self, parent: Mapping[str, Any], name: str, where: str) -> Mapping[str, Any]:
        value = parent[name]
        if not isinstance(value, Mapping):
            self.fail(f"{where}.{name}" if where else name, "must be a table")
        return value

    def number(
        self,
        table: Mapping[str, Any],
        name: str,
        where: str,
        *,
        minimum: float | None = None,
        maximum: float | None = None,
    ) -> float:
        full_key = f"{where}.{name}"
        value = table[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(full_key, f"must be a number, got {value!r}")
        number = float(value)
        if not math.isfinite(number):
            self.fail(full_key, f"must be finite, got {value!r}")
        if minimum is not None and number < minimum:
            self.fail(full_key, f"must be ≥ {minimum:g}, got {value!r}")
        if maximum is not None and number > maximum:
            self.fail(full_key, f"must be ≤ {maximum:g}, got {value!r}")
        return number

    def score_table(
        self, table: Mapping[str, Any], where: str, normalise: Callable[[object], str | None]
    ) -> Mapping[str, float]:
        scores_key = f"{where}.scores"
        scores = self.table(table, "scores", where)
        result: dict[str, float] = {}
        for raw in scores:
            normalised = normalise(raw)
            if normalised is None:
                self.fail(f"{scores_key}.{raw}", "is an empty name")
            if normalised in result:
                self.fail(f"{scores_key}.{raw}", f"duplicates {normalised!r} after normalisation")
            result[normalised] = self.number(scores, raw, scores_key, minimum=0.0, maximum=1.0)
        return MappingProxyType(result)

    def bands(self, table: Mapping[str, Any], where: str) -> tuple[tuple[float, float], ...]:
        bands_key = f"{where}.bands"
        raw_bands = table["bands"]
        if not isinstance(raw_bands, list) or not raw_bands:
            self.fail(bands_key, "must be a non-empty array of {min, score} tables")
        bands: list[tuple[float, float]] = []
        for position, band in enumerate(raw_bands):
            band_key = f"{bands_key}[{position}]"
            if not isinstance(band, Mapping):
                self.fail(band_key, "must be a {min, score} table")
            self.keys(band, _BAND_KEYS, band_key)
            lower = self.number(band, "min", band_key, minimum=0.0)
            score = self.number(band, "score", band_key, minimum=0.0, maximum=1.0)
            if bands and not lower > bands[-1][0]:
                self.fail(f"{band_key}.min", "must be greater than the previous band's min")
            bands.append((lower, score))
        return tuple(bands)


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
    2. it breaks the 002 §9.2 allowlists (bucket not ``active``/``sales_owned``, an override other
       than ``P0`` + ``hubspot_target_account``, a reason without an override) → the reason from
       :func:`~morpheus_pipelines.rules.routing.scoring_contract_violations`;
    3. its id is one of ``forced_sales_owned_ids``, which skip scoring (002 §2) →
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
    ``contributions``        dict signal → points (2 decimals), in :data:`SIGNALS` order
    ``score_model_version``  ``model.version``

    Vectorised: a million rows take one to two seconds. Raises ``ValueError`` for a naive ``as_of``
    or a missing input column; bad values inside the columns never raise (module docstring).
    """
    as_of_seconds = _as_of_seconds(as_of)
    late_days = 0.0
    if observed_at is not None:
        late_days = max(0.0, (_as_of_seconds(observed_at) - as_of_seconds) / _SECONDS_PER_DAY)
    valid, _ = partition_scoring_input(frame, forced_sales_owned_ids=forced_sales_owned_ids)
    # Points are whole cents (np.round(points, 2) == cents / 100 exactly), so the total is the
    # exact sum of the rounded contributions, with no float drift.
    fractions = _signal_fractions(valid, model, as_of_seconds, late_days)
    cents = np.rint(fractions * model.weight_vector * 100.0).astype(np.int64)
    total = np.minimum(cents.sum(axis=1), round(WEIGHT_SUM * 100)) / 100.0

    # Object arrays of shared label strings: indexing a 3-item array is far cheaper than
    # np.select/np.where on strings, which would allocate a new str per row.
    labels = np.array([p for p, _ in model.thresholds] + [SCORED_PRIORITIES[-1]], dtype=object)
    thresholds = np.array([threshold for _, threshold in model.thresholds], dtype=float)
    calculated = labels[(total[:, np.newaxis] < thresholds).sum(axis=1)]
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
            "contributions": column(_contribution_dicts(cents)),
            "score_model_version": column(np.full(len(index), model.version, dtype=object)),
        },
        index=index,
    )


def _as_of_seconds(as_of: datetime) -> float:
    if not isinstance(as_of, datetime):
        raise ValueError(f"as_of must be a timezone-aware datetime, got {as_of!r}")
    if as_of.tzinfo is None or as_of.utcoffset() is None:
        raise ValueError(f"as_of must be timezone-aware, got naive {as_of!r}")
    return as_of.timestamp()


def _contribution_dicts(cents: np.ndarray) -> np.ndarray:
    """One ``{signal: cents / 100}`` dict per row of the 2-D ``cents`` array, in SIGNALS order.

    Built for speed at a million rows (about 4x faster than ``dict(zip(SIGNALS, row))`` over
    ``points.tolist()``): every point value is one of a few thousand shared float objects instead
    of a new float per cell; the dicts come from a dict display over columns; and the cyclic
    garbage collector is paused, or it would rescan the growing list hundreds of times. The keys
    are spelled out, so this function changes together with :data:`SIGNALS` (a test checks it).
    """
    values = _point_values(int(cents.max(initial=0)))
    with _gc_paused():
        columns = [values[cents[:, position]].tolist() for position in range(len(SIGNALS))]
        dicts = [
            {
                "plan": plan,
                "seats": seats,
                "active_users": active_users,
                "recency": recency,
                "company_size": company_size,
                "country": country,
                "industry": industry,
            }
            for plan, seats, active_users, recency, company_size, country, industry in zip(
                *columns, strict=True
            )
        ]
        result = np.empty(len(dicts), dtype=object)
        result[:] = dicts
    return result


def _point_values(max_cents: int) -> np.ndarray:
    """Object array whose item ``k`` is the float ``k / 100``, for ``k`` up to ``max_cents``."""
    values = np.empty(max_cents + 1, dtype=object)
    values[:] = [k / 100 for k in range(max_cents + 1)]
    return values


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Disable the cyclic garbage collector for the block, restoring its previous state."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


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
        "recency": _recency(frame["last_active_at"], model, as_of, late_days),
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


def _recency(
    series: pd.Series, model: ScoringModel, as_of: float, late_days: float = 0.0
) -> np.ndarray:
    """Recency fraction of ``last_active_at``; see the model file for the formula. Activity
    up to ``late_days`` after ``as_of`` was seen by the source read and is not corrupt."""
    days = (as_of - _utc_seconds(series)) / _SECONDS_PER_DAY
    full = model.recency_full_credit_days
    zero = model.recency_zero_credit_days
    with np.errstate(invalid="ignore"):
        fraction = np.clip((zero - days) / (zero - full), 0.0, 1.0)
        too_far_ahead = days < -(model.recency_future_tolerance_days + late_days)
    return np.where(too_far_ahead, np.nan, fraction)


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
