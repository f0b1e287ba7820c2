"""The versioned scoring model: what it holds and how it is loaded and validated.

The model lives in ``scoring_model.toml`` next to this module, explained there and in
docs/scoring.md. Unknown keys, weights that do not add up to 100, thresholds out of order and
malformed tables are rejected by name when the model loads, so a typo cannot silently disable a
signal. The scoring math is in :mod:`morpheus_pipelines.tenants.rules.scoring`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from types import MappingProxyType
from typing import Any, NoReturn

import numpy as np

from morpheus_pipelines.tenants.rules.vocabulary import Priority, values

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

WEIGHT_SUM = 100.0
WEIGHT_SUM_TOLERANCE = 0.01


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
    """A validated scoring model; build it with :func:`parse_model` (``load_model`` of
    ``tenants.steps.scoring_model`` reads a file).

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

    @property
    def total_never_capped(self) -> bool:
        """Whether the sum of the rounded points can never exceed the cap of
        ``WEIGHT_SUM`` (each signal's points are at most its weight): then a score whose
        recency points move is the old total minus the old recency points plus the new ones
        (docs/scoring.md, "Incremental scoring"). Weights that add up to 100.01 can be capped."""
        return sum(round(w * 100) for w in self.weights.values()) <= round(WEIGHT_SUM * 100)

    @property
    def fingerprint(self) -> str:
        """Everything the model computes with, as one digest: the warehouse refuses a version
        recorded with another one (docs/scoring.md, "Versions"), so one version names one set
        of numbers and a stored score of that version can be reused. Taken from the
        model's document, the file's own names and numbers, so renaming a field of this
        class leaves it as it was."""
        text = json.dumps(model_document(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32]


def model_document(model: ScoringModel) -> dict[str, Any]:
    """The model as the document :func:`parse_model` reads (the shape of the TOML file, names
    normalised), so that a stored copy parses back to an equal model with the same
    :attr:`~ScoringModel.fingerprint`: the record that explains an old day's scores after the
    file has moved on (docs/scoring.md, "Versions")."""
    return {
        "version": model.version,
        "weights": dict(model.weights),
        "thresholds": dict(model.thresholds),
        "signals": {
            "plan": {"scores": dict(model.plan_scores)},
            "seats": {"cap": model.seats_cap},
            "active_users": {
                "cap": model.active_users_cap,
                "paid_seat_share": model.active_users_paid_seat_share,
            },
            "recency": {
                "full_credit_days": model.recency_full_credit_days,
                "zero_credit_days": model.recency_zero_credit_days,
                "future_tolerance_days": model.recency_future_tolerance_days,
            },
            "company_size": {
                "bands": [
                    {"min": lower, "score": score} for lower, score in model.company_size_bands
                ]
            },
            "country": {"scores": dict(model.country_scores)},
            "industry": {"scores": dict(model.industry_scores)},
        },
    }


class ModelVersionReused(ValueError):
    """A model version the warehouse has already scored with other numbers: the file is
    well formed, but its version names numbers it did not name before."""


def refuse_reused_version(
    model: ScoringModel, *, recorded_fingerprint: str, first_partition_key: str, first_run_id: str
) -> None:
    """Raise :class:`ModelVersionReused` when ``model``'s version was first scored with other
    numbers (``recorded_fingerprint``): two models under one version would make their scores
    look comparable when they are not."""
    if recorded_fingerprint != model.fingerprint:
        raise ModelVersionReused(
            f"scoring model {model.source}: version {model.version!r} was first scored with "
            f"other numbers (partition {first_partition_key}, run {first_run_id}); a model "
            'whose numbers change needs a new version (docs/scoring.md, "Versions")'
        )


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


def parse_model(data: Mapping[str, Any], *, source: str = "<mapping>") -> ScoringModel:
    """Validate an already-parsed model document (the contents of a TOML file); see
    :func:`morpheus_pipelines.tenants.steps.scoring_model.load_model` for the rules."""
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
