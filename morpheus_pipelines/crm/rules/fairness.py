"""How fair the round-robin was: assignments per rep against a perfect rotation
(docs/ownership.md, "Fairness"). Plain Python over counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RepShare:
    """One rep's round-robin assignments in the window."""

    rep_id: int
    email: str
    eligible: bool  # active with a HubSpot owner id: the rotation can pick it
    assignments: int


@dataclass(frozen=True)
class RepFairness:
    rep_id: int
    email: str
    eligible: bool
    assignments: int
    expected: float
    deviation: float


@dataclass(frozen=True)
class FairnessReport:
    total: int
    eligible_reps: int
    rows: list[RepFairness]
    # Most minus fewest assignments among eligible reps; a perfect rotation over a constant
    # set of reps gives 0 (total divisible by the rep count) or 1.
    spread: int
    perfect_spread: int
    max_abs_deviation: float
    skipped_inactive: list[str]

    @property
    def fair(self) -> bool:
        return self.spread <= self.perfect_spread


def fairness(shares: Sequence[RepShare]) -> FairnessReport:
    """Expected assignments are the window's total spread evenly over the eligible reps;
    ineligible reps are expected to get none and are listed as skipped."""
    eligible = [s for s in shares if s.eligible]
    total = sum(s.assignments for s in shares)
    expected_each = total / len(eligible) if eligible else 0.0
    rows = []
    for share in shares:
        expected = expected_each if share.eligible else 0.0
        rows.append(
            RepFairness(
                share.rep_id,
                share.email,
                share.eligible,
                share.assignments,
                round(expected, 2),
                round(share.assignments - expected, 2),
            )
        )
    counts = [s.assignments for s in eligible]
    return FairnessReport(
        total=total,
        eligible_reps=len(eligible),
        rows=rows,
        spread=max(counts) - min(counts) if counts else 0,
        perfect_spread=0 if not eligible or total % len(eligible) == 0 else 1,
        max_abs_deviation=max((abs(r.deviation) for r in rows), default=0.0),
        skipped_inactive=[s.email for s in shares if not s.eligible],
    )
