"""The routing plan's ladder: when a partition decides only what changed, and why not
otherwise (rules/routing_plan.py; docs/pipeline.md, "Incremental routing")."""

from __future__ import annotations

import pytest

from morpheus_pipelines.tenants.rules.routing_inputs import TENANT_KEY_COLUMNS, RuleInputs
from morpheus_pipelines.tenants.rules.routing_plan import (
    RoutingBase,
    base_needed,
    routing_plan,
)


def inputs(regime: str = "regime-1", **answers: dict[str, str]) -> RuleInputs:
    kinds = ("portal", "account", "domain", "name", "sales", "forced")
    return RuleInputs(regime=regime, answers={kind: answers.get(kind, {}) for kind in kinds})


TODAY = inputs(domain={"acme.com": "1", "beta.co.jp": "2"}, sales={"rep@corp.com": "1"})
BASE = RoutingBase("2026-11-29", inputs(domain={"acme.com": "1"}, sales={"rep@corp.com": "1"}))


def test_unchanged_rules_inputs_carry_everything_forward() -> None:
    plan = routing_plan(TODAY, base=RoutingBase("2026-11-29", TODAY), incremental=True, live=True)
    assert plan.incremental
    assert plan.reason == "changes since 2026-11-29"
    assert plan.changed_keys == {column: frozenset() for column in TENANT_KEY_COLUMNS}


def test_unchanged_rules_inputs_are_recorded_as_the_base_stored_them() -> None:
    stored = TODAY.to_json()
    base = RoutingBase("2026-11-29", RuleInputs.from_json(stored))
    today = inputs(domain={"beta.co.jp": "2", "acme.com": "1"}, sales={"rep@corp.com": "1"})
    plan = routing_plan(today, base=base, incremental=True, live=True)
    # The base's inputs, so recording them sends back the text read, not a new serialisation.
    assert plan.inputs is base.inputs
    assert plan.inputs.to_json() is stored
    assert plan.inputs == today


def test_a_changed_answer_names_the_keys_to_decide_again() -> None:
    plan = routing_plan(TODAY, base=BASE, incremental=True, live=True)
    assert plan.incremental and plan.base == BASE and plan.inputs == TODAY
    assert plan.changed_keys is not None
    assert plan.changed_keys["email_root_key"] == {"beta.co.jp"}
    assert plan.changed_keys["website_root_key"] == {"beta.co.jp"}
    assert plan.changed_keys["sales_key"] == frozenset()


@pytest.mark.parametrize(
    ("incremental", "live", "base", "reason"),
    [
        (False, True, BASE, "incremental routing is off"),
        (False, False, None, "incremental routing is off"),
        (True, False, BASE, "a newer partition owns the live buckets"),
        (True, True, None, "no earlier live routing to start from"),
        (
            True,
            True,
            RoutingBase("2026-11-29", inputs("regime-0")),
            "the rules' regime changed since 2026-11-29",
        ),
    ],
)
def test_every_other_case_routes_everyone_and_says_why(incremental, live, base, reason) -> None:
    plan = routing_plan(TODAY, base=base, incremental=incremental, live=live)
    assert not plan.incremental
    assert plan.base is None and plan.changed_keys is None
    assert plan.reason == reason
    # The run's own inputs are kept either way: the next partition starts from them.
    assert plan.inputs == TODAY


@pytest.mark.parametrize(
    ("incremental", "live", "needed"),
    [(True, True, True), (True, False, False), (False, True, False), (False, False, False)],
)
def test_the_base_is_read_only_when_the_plan_can_use_it(incremental, live, needed) -> None:
    assert base_needed(incremental=incremental, live=live) is needed
    if not needed:
        # Whatever base there would be, the plan ignores it.
        plan = routing_plan(TODAY, base=BASE, incremental=incremental, live=live)
        assert plan == routing_plan(TODAY, base=None, incremental=incremental, live=live)
