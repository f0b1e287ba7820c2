"""A request budget as a generic cell rate (GCRA): what a budget admits, and what its
``RateLimit`` field says (docs/leads.md, "Request budgets").

A policy admits ``quota`` requests a ``window`` (60 s): one unit comes back every
``interval = window / quota`` seconds, and at most ``quota`` may be spent at once. Its whole
state is one instant, the *theoretical arrival time* (TAT): where the budget stands once every
admitted request is paid for. A request at ``now`` is admitted when
``max(TAT, now) + interval <= now + window``, and then moves the TAT there. A bucket of
tokens refilled continuously admits exactly the same requests; the TAT is simply one value to
store instead of two (tokens and when they were counted), so the shared budget is one
timestamp per key, updated by one statement (:mod:`~.repositories.request_budgets`).

Everything here is arithmetic on ``ahead``, the seconds the TAT is ahead of now after the
request (0 when the budget is whole).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

WINDOW_SECONDS = 60
# A microsecond: the stored TAT's resolution, so ``ahead`` is never a hair past a boundary.
_EPSILON = 1e-6


@dataclass(frozen=True)
class BudgetPolicy:
    """``quota`` requests per ``window`` seconds, by name (the ``RateLimit-Policy`` item)."""

    name: str
    quota: int
    window: int = WINDOW_SECONDS

    def __post_init__(self) -> None:
        if self.quota < 1:
            raise ValueError(f"a request budget admits at least 1 a window, got {self.quota}")

    @property
    def interval(self) -> float:
        """Seconds until one spent unit comes back."""
        return self.window / self.quota

    def admits(self, ahead_before: float) -> bool:
        """Whether a request is admitted when the TAT is ``ahead_before`` seconds ahead."""
        return max(ahead_before, 0.0) + self.interval <= self.window + _EPSILON

    def allowance(self, ahead: float, *, admitted: bool) -> Allowance:
        """What the budget says after a request: ``ahead`` is the TAT's lead on now once the
        request was counted (or, refused, left as it was)."""
        ahead = min(max(ahead, 0.0), float(self.window))
        spare = self.window - ahead  # seconds of budget not yet spent
        remaining = min(self.quota, math.floor(spare / self.interval + _EPSILON))
        if remaining >= self.quota:
            reset = 0  # whole: nothing to come back
        else:
            # The next unit is whole when ``spare`` reaches the next multiple of the interval.
            reset = max(1, math.ceil((remaining + 1) * self.interval - spare - _EPSILON))
        return Allowance(self, remaining=remaining, reset=reset, admitted=admitted)


@dataclass(frozen=True)
class Allowance:
    """A policy's state as one answer reports it: ``remaining`` units now, ``reset`` seconds
    until another comes back (0 when the budget is whole), and whether this request was
    admitted. A refused request's ``reset`` is its ``Retry-After``."""

    policy: BudgetPolicy
    remaining: int
    reset: int
    admitted: bool = True

    @property
    def retry_after(self) -> int:
        return max(1, self.reset)


def policy_item(policy: BudgetPolicy) -> str:
    """The policy as a ``RateLimit-Policy`` list item (a Structured Field string with ``q``
    and ``w``)."""
    return f'"{policy.name}";q={policy.quota};w={policy.window}'


def limit_item(allowance: Allowance) -> str:
    """The allowance as a ``RateLimit`` list item (``r`` remaining, ``t`` seconds)."""
    return f'"{allowance.policy.name}";r={allowance.remaining};t={allowance.reset}'
