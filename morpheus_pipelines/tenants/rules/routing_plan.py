"""Which tenants a partition's routing decides again (docs/pipeline.md, "Incremental routing").

A partition starts from the decisions of the partition routed before it only when it owns the
live buckets, that earlier partition left its rules' inputs behind, and the rules' regime did
not change since; then only the tenants whose own inputs or keys changed are decided again.
Otherwise every tenant is, and the plan says why. The step reads the earlier partition (the
:class:`RoutingBase`); the ladder here is plain data in, plan out.
"""

from __future__ import annotations

from dataclasses import dataclass

from morpheus_pipelines.tenants.rules.routing_inputs import RuleInputs, changed_keys


@dataclass(frozen=True)
class RoutingBase:
    """The routed partition a later one may carry decisions from."""

    partition_key: str
    inputs: RuleInputs


@dataclass(frozen=True)
class RoutingPlan:
    """Which tenants a partition's routing decides again: everyone (``base`` None, with the
    ``reason``), or those whose inputs or keys changed since ``base``."""

    inputs: RuleInputs
    base: RoutingBase | None
    changed_keys: dict[str, frozenset[str]] | None
    reason: str

    @property
    def incremental(self) -> bool:
        return self.base is not None and self.changed_keys is not None


def base_needed(*, incremental: bool, live: bool) -> bool:
    """Whether :func:`routing_plan` can use an earlier partition at all: the caller reads the
    base only then."""
    return incremental and live


def routing_plan(
    inputs: RuleInputs, *, base: RoutingBase | None, incremental: bool, live: bool
) -> RoutingPlan:
    """The plan of a run whose rules' inputs are ``inputs``, by the first reason that applies:
    incremental routing is off, a newer partition owns the live buckets (``live`` False), no
    earlier live routing left its inputs (``base`` None), the rules' regime changed since
    ``base``; else the keys whose answer changed since ``base``."""
    if not incremental:
        return RoutingPlan(inputs, None, None, "incremental routing is off")
    if not live:
        return RoutingPlan(inputs, None, None, "a newer partition owns the live buckets")
    if base is None:
        return RoutingPlan(inputs, None, None, "no earlier live routing to start from")
    changed = changed_keys(base.inputs, inputs)
    if changed is None:
        return RoutingPlan(
            inputs, None, None, f"the rules' regime changed since {base.partition_key}"
        )
    if inputs == base.inputs:
        # Recorded as the base's were stored, not serialised again (RuleInputs.from_json).
        inputs = base.inputs
    return RoutingPlan(inputs, base, changed, f"changes since {base.partition_key}")
