"""The request budget's arithmetic (crm/rules/request_budget.py): what the generic cell rate
admits and what the RateLimit fields say, with no database and no clock."""

from __future__ import annotations

import pytest

from morpheus_pipelines.crm.rules.request_budget import (
    BudgetPolicy,
    limit_item,
    policy_item,
)


def spend(policy: BudgetPolicy, requests: int, at: float = 0.0) -> tuple[float, list[bool]]:
    """``requests`` at instant ``at`` from a whole budget: the TAT's lead and each fate."""
    tat, fates = 0.0, []
    for _ in range(requests):
        ahead = max(tat - at, 0.0)
        admitted = policy.admits(ahead)
        if admitted:
            tat = max(tat, at) + policy.interval
        fates.append(admitted)
    return tat - at, fates


def test_a_whole_budget_admits_its_quota_at_once_then_refuses() -> None:
    policy = BudgetPolicy("api-key", 6_000)
    ahead, fates = spend(policy, 6_001)
    assert fates == [True] * 6_000 + [False]
    refused = policy.allowance(ahead, admitted=False)
    assert (refused.remaining, refused.reset, refused.retry_after) == (0, 1, 1)


def test_a_fresh_key_has_all_but_one_left_and_its_unit_comes_back_in_one_interval() -> None:
    policy = BudgetPolicy("api-key", 3)
    ahead, _ = spend(policy, 1)
    assert policy.allowance(ahead, admitted=True).remaining == 2
    assert policy.allowance(ahead, admitted=True).reset == 20
    assert policy.allowance(0.0, admitted=True).reset == 0  # whole: nothing to come back


@pytest.mark.parametrize("elapsed", [0.0, 5.0, 19.0, 20.0, 45.0])
def test_spent_units_come_back_one_an_interval(elapsed: float) -> None:
    policy = BudgetPolicy("api-key", 3)
    ahead, _ = spend(policy, 3)  # all spent: the TAT is a window ahead
    left = ahead - elapsed
    allowance = policy.allowance(left, admitted=True)
    assert allowance.remaining == int(elapsed // 20)
    assert allowance.reset == 20 - elapsed % 20 if elapsed % 20 else 20
    assert policy.admits(left) is (elapsed >= 20)


def test_the_fields_are_structured_field_items() -> None:
    policy = BudgetPolicy("api-key", 6_000)
    assert policy_item(policy) == '"api-key";q=6000;w=60'
    assert limit_item(policy.allowance(0.01, admitted=True)) == '"api-key";r=5999;t=1'


def test_a_budget_admits_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        BudgetPolicy("api-key", 0)
