"""Automations on evidence (docs/leads.md, "Automations"): nudges for leads who have gone
quiet on every channel, recorded in ``automation_firings`` with their queued message.

One statement per evaluation over the whole timeline (set-based; see
``crm.repositories.timeline``), so the evaluation costs the same whether one nudge is due or a
thousand, and a rerun or a concurrent run fires nothing twice.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import AutomationRule
from morpheus_pipelines.crm.repositories.timeline import MAX_FIRINGS, Firing
from morpheus_pipelines.crm.rules.timeline import NudgeRule, describe_rule
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.observability.events import log_event


def nudge_rule(rule: AutomationRule) -> NudgeRule:
    return NudgeRule(
        channel=rule.channel.value.lower(),
        quiet=timedelta(seconds=rule.quietSeconds),
        window_lead=(timedelta(seconds=rule.windowLeadSeconds) if rule.windowLeadSeconds else None),
        kind=rule.kind,
    )


@dataclass
class Evaluation:
    evaluated_at: datetime
    firings: list[Firing] = field(default_factory=list)
    rules: dict[int, dict[str, Any]] = field(default_factory=dict)

    @property
    def by_rule(self) -> Counter[str]:
        # .get: a rule created between reading the rules and the evaluation still counts.
        return Counter(
            self.rules.get(firing.rule_id, {}).get("name", f"rule {firing.rule_id}")
            for firing in self.firings
        )


def fire_due_nudges(
    session_factory: SessionFactory, now: datetime, *, max_firings: int = MAX_FIRINGS
) -> Evaluation:
    """Record and queue the nudges due at ``now`` (at most ``max_firings``; the rest on the
    next evaluation); one transaction."""
    with session_factory() as session:
        store = CrmStore(session)
        rules = {
            rule.id: {
                "name": rule.name,
                "subscription_id": str(rule.subscriptionId),
                "description": describe_rule(nudge_rule(rule)),
            }
            for rule in store.automations.active_rules(session)
        }
        firings = (
            store.automations.fire_due(session, now=now, max_firings=max_firings) if rules else []
        )
    evaluation = Evaluation(now, firings, rules)
    # One line per evaluation: the firings themselves are rows of automation_firings.
    log_event(
        "automations_evaluated",
        level=logging.INFO,
        evaluated_at=now.isoformat(),
        active_rules=len(rules),
        nudges_by_rule=dict(evaluation.by_rule),
    )
    return evaluation


def add_rule(
    session: Session,
    subscription_id: uuid.UUID,
    *,
    name: str,
    rule: NudgeRule,
    template_name: str | None = None,
    body: str | None = None,
) -> AutomationRule:
    """A new rule; the rule's own checks (``NudgeRule``) run first, so a rule that could
    never fire inside the WhatsApp window is refused with a sentence, not a constraint
    name."""
    if (template_name is None) == (body is None):
        raise ValueError("a rule sends either a template (template_name) or a free-form body")
    # What the rule sends decides its kind (and so whether the window binds it), checked
    # again by the rule itself.
    rule = dataclasses.replace(rule, kind="template" if template_name else "free_form")
    for label, span in (("quiet period", rule.quiet), ("window lead", rule.window_lead)):
        if span is not None and not 1 <= span.total_seconds() < 2**31:
            raise ValueError(f"the {label} must be between 1 second and 68 years")
    return CrmStore(session).automations.insert(
        session,
        {
            "subscriptionId": subscription_id,
            "name": name,
            "channel": rule.channel.upper(),
            "quietSeconds": int(rule.quiet.total_seconds()),
            "windowLeadSeconds": (
                int(rule.window_lead.total_seconds()) if rule.window_lead else None
            ),
            "kind": "template" if template_name else "free_form",
            "templateName": template_name,
            "body": body,
        },
    )


def describe_rules(session: Session, subscription_id: uuid.UUID) -> list[tuple[str, bool, str]]:
    """``(name, active, description)`` of the subscription's rules, in creation order."""
    rules = CrmStore(session).automations.filter_by(session, subscriptionId=subscription_id)
    return [
        (rule.name, rule.isActive, describe_rule(nudge_rule(rule)))
        for rule in sorted(rules, key=lambda rule: rule.id)
    ]
