"""The scoring arithmetic the incremental carry computes in SQL, beside its Python reference.

The carry (``TenantScoreSnapshotRepository.carry_forward``, docs/scoring.md, "Incremental
scoring") copies a score whose recency cannot have moved (:class:`RecencyWindow`) and moves
the recency points of one whose recency did, in its own statement (:class:`RecencyShift`).
That SQL must give what :mod:`~morpheus_pipelines.tenants.rules.scoring` gives, cent for cent,
so each piece of SQL here sits beside a ``reference_*`` twin that computes the same thing with
the very functions the Python scorer uses; tests/tenants/test_scoring_sql.py runs both on the
real server over generated inputs. The module is in the store, not in the rules, because
psycopg's ``sql`` composer is not one of the pure libraries a rule may import
(tests/test_architecture.py, ``rules_are_pure``).

Column names are SQL expressions over the carry's aliases: decision ``d``, base snapshot ``s``
and the shift's lateral ``m``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import pandas as pd
from psycopg import sql

from morpheus_pipelines.tenants.rules.scoring import (
    calculated_priorities,
    point_number,
    points_cents,
    recency_fraction,
)
from morpheus_pipelines.tenants.rules.scoring_model import SCORED_PRIORITIES, ScoringModel

# The score columns a recency shift recomputes; the others are copied from the base snapshot.
SHIFTED_COLUMNS = ("total_score", "calculated_priority", "priority", "contributions")


@dataclass(frozen=True)
class RecencyWindow:
    """When a ``last_active_at`` gives the same recency at two scoring times ``earlier`` and
    ``later``: never seen (no credit either day), old enough for no credit at ``earlier`` (so
    none at ``later``), or recent enough for full credit at ``later`` without being in the
    future at ``earlier`` (so full credit both days). Anything else is scored again."""

    earlier: datetime
    later: datetime
    full_credit_days: float
    zero_credit_days: float
    future_tolerance_days: float

    @classmethod
    def for_model(cls, model: ScoringModel, *, earlier: datetime, later: datetime) -> RecencyWindow:
        return cls(
            earlier=earlier,
            later=later,
            full_credit_days=model.recency_full_credit_days,
            zero_credit_days=model.recency_zero_credit_days,
            future_tolerance_days=model.recency_future_tolerance_days,
        )

    def condition(self, column: str) -> sql.Composable:
        """SQL true where ``column`` is in the window (its recency cannot have moved)."""

        def at(moment: datetime, days: float) -> sql.Composable:
            return sql.Literal(moment + timedelta(days=days))

        value = sql.SQL(column)
        return sql.SQL(
            "({v} IS NULL OR {v} <= {no_credit} OR ({v} >= {full_credit} AND {v} <= {not_ahead}))"
        ).format(
            v=value,
            no_credit=at(self.earlier, -self.zero_credit_days),
            # A second's margin: scoring counts whole seconds (rules.scoring).
            full_credit=at(self.later, -self.full_credit_days + 1 / 86_400),
            not_ahead=at(self.earlier, self.future_tolerance_days),
        )

    def reference_unmoved(self, last_active_at: pd.Series) -> np.ndarray:
        """What :meth:`condition` promises, by the Python scorer: the same recency fraction
        at both times (missing and too far ahead alike score 0). The window is the safe part
        of it: a value outside may happen to score the same and is merely scored again."""

        def fraction(moment: datetime) -> np.ndarray:
            values = recency_fraction(
                last_active_at,
                as_of=moment.timestamp(),
                full_credit_days=self.full_credit_days,
                zero_credit_days=self.zero_credit_days,
                future_tolerance_days=self.future_tolerance_days,
            )
            return np.fmax(values, 0.0)

        return fraction(self.earlier) == fraction(self.later)


@dataclass(frozen=True)
class RecencyShift:
    """The new score of a tenant whose recency moved and nothing else, computed in the
    carry's own statement: the old total minus the old recency points plus the new ones,
    with the model's formula and thresholds (docs/scoring.md, "Incremental scoring"). The
    arithmetic is :mod:`rules.scoring`'s, operation for operation in ``float8``, so it gives
    the same cents. Only for ``last_active_at`` no later than ``as_of`` (a future timestamp
    may be corrupt: scored in Python) and for a model whose total is never capped
    (``ScoringModel.total_never_capped``)."""

    as_of: datetime
    full_credit_days: float
    zero_credit_days: float
    weight: float
    # (priority, threshold) from the highest threshold down; below the last: ``lowest``.
    thresholds: tuple[tuple[str, float], ...]
    lowest: str

    @classmethod
    def for_model(cls, model: ScoringModel, *, as_of: datetime) -> RecencyShift:
        return cls(
            as_of=as_of,
            full_credit_days=model.recency_full_credit_days,
            zero_credit_days=model.recency_zero_credit_days,
            weight=model.weights["recency"],
            thresholds=model.thresholds,
            lowest=SCORED_PRIORITIES[-1],
        )

    # -- the recency points

    def cents(self, column: str) -> sql.Composable:
        """The recency points, in cents, of ``column`` (a ``timestamptz``) at ``as_of``."""
        return sql.SQL(
            "round(least(greatest(({zero} - ({as_of} - floor(extract(epoch FROM {v}))::float8)"
            " / 86400.0::float8) / ({zero} - {full}), 0.0::float8), 1.0::float8)"
            " * {weight} * 100.0::float8)::bigint"
        ).format(
            zero=_float8(self.zero_credit_days),
            full=_float8(self.full_credit_days),
            as_of=_float8(self.as_of.timestamp()),
            v=sql.SQL(column),
            weight=_float8(self.weight),
        )

    def reference_cents(self, last_active_at: pd.Series) -> np.ndarray:
        """:meth:`cents` in Python, for values no later than ``as_of``."""
        fraction = recency_fraction(
            last_active_at,
            as_of=self.as_of.timestamp(),
            full_credit_days=self.full_credit_days,
            zero_credit_days=self.zero_credit_days,
            future_tolerance_days=0.0,
        )
        return points_cents(np.fmax(fraction, 0.0), self.weight)

    def applies(self, column: str, snapshot_alias: str) -> sql.Composable:
        """Whether ``column`` is not in the future at ``as_of`` and the base snapshot (alias
        ``snapshot_alias``) recorded its recency points in ``contributions``: else the tenant
        is scored in Python."""
        return sql.SQL("({v} <= {as_of} AND {s}.contributions ? 'recency')").format(
            v=sql.SQL(column), as_of=sql.Literal(self.as_of), s=sql.Identifier(snapshot_alias)
        )

    # -- what follows from them

    def calculated_priority(self, total_cents: sql.Composable) -> sql.Composable:
        """``rules.scoring``'s priority of a total of ``total_cents``: compared as ``float8``."""
        return sql.SQL("CASE {} ELSE {} END").format(
            sql.SQL(" ").join(
                sql.SQL("WHEN {}::float8 / 100.0::float8 >= {} THEN {}").format(
                    total_cents, _float8(threshold), sql.Literal(priority)
                )
                for priority, threshold in self.thresholds
            ),
            sql.Literal(self.lowest),
        )

    def reference_priority(self, total_cents: np.ndarray) -> np.ndarray:
        """:meth:`calculated_priority` in Python."""
        return calculated_priorities(
            np.asarray(total_cents) / 100.0, self.thresholds, lowest=self.lowest
        )

    @staticmethod
    def json_points(cents: sql.Composable) -> sql.Composable:
        """``cents / 100`` as the JSON number ``json.dumps`` writes for that float (``15.0``,
        ``12.3``, ``0.05``): what ``rules.scoring`` stores in ``contributions``."""
        return sql.SQL(
            "CASE WHEN {c} % 100 = 0 THEN round({c} / 100.0, 1) ELSE trim_scale({c} / 100.0) END"
        ).format(c=cents)

    @staticmethod
    def reference_points(cents: int) -> str:
        """:meth:`json_points` in Python."""
        return point_number(cents)

    # -- the carry's pieces

    def lateral(self, unmoved: sql.Composable, column: str) -> sql.Composable:
        """The join that gives ``m.cents``, the new recency points of ``column`` (NULL where
        ``unmoved``: they cannot have moved), and ``m.total``, the base snapshot's total in
        cents with the new points in place of its old ones."""
        # OFFSET 0 keeps the planner from pasting m's expressions into each use: they are
        # evaluated once per row (docs/performance.md).
        return sql.SQL(
            " CROSS JOIN LATERAL (SELECT r.cents, (s.total_score * 100)::bigint "
            "- ((s.contributions ->> 'recency')::numeric * 100)::bigint + r.cents AS total "
            "FROM (SELECT CASE WHEN {unmoved} THEN NULL ELSE {cents} END AS cents) r "
            "OFFSET 0) m"
        ).format(unmoved=unmoved, cents=self.cents(column))

    def shifted(self) -> dict[str, sql.Composable]:
        """Each of :data:`SHIFTED_COLUMNS` of a shifted tenant, from ``m``, the base snapshot
        and the decision (its override keeps the base's final priority)."""
        calculated = self.calculated_priority(sql.SQL("m.total"))
        return {
            "total_score": sql.SQL("round(m.total / 100.0, 2)"),
            "calculated_priority": calculated,
            "priority": sql.SQL(
                "CASE WHEN d.priority_override IS NULL THEN {} ELSE s.priority END"
            ).format(calculated),
            "contributions": sql.SQL(
                "jsonb_set(s.contributions, '{{recency}}', to_jsonb({}))"
            ).format(self.json_points(sql.SQL("m.cents"))),
        }


def _float8(value: float) -> sql.Composable:
    # repr round-trips: the server parses the very double Python computes with.
    return sql.SQL("{}::float8").format(sql.Literal(repr(float(value))))
