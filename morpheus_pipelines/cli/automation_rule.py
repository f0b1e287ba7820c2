"""``morpheus automation-rule``: the lead automation rules of a subscription (docs/leads.md)."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from typing import Any

import click

from morpheus_pipelines.cli.db import checked_warehouse_url
from morpheus_pipelines.cli.parsing import ActionGroup


def _subscription_option(command: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--subscription", type=click.UUID, required=True, help="The subscription's id."
    )(command)


def _subscription_url(subscription: uuid.UUID) -> str | None:
    """The migrated warehouse's URL, or None (said on stderr) when the subscription is not
    there."""
    from morpheus_pipelines.crm.steps.subscriptions import subscription_exists

    url = checked_warehouse_url()
    if not subscription_exists(url, subscription):
        print(f"error: subscription {subscription} does not exist", file=sys.stderr)
        return None
    return url


@click.group(cls=ActionGroup, name="automation-rule")
def automation_rule() -> None:
    """Add or list lead automation rules (docs/leads.md)."""


@automation_rule.command()
@_subscription_option
@click.option("--name", required=True, help="The rule's name, unique in the subscription.")
@click.option(
    "--channel", type=click.Choice(["email", "whatsapp"]), required=True, help="How to nudge."
)
@click.option("--quiet-hours", type=float, required=True, help="Hours without engagement.")
@click.option("--window-lead-hours", type=float, help="WhatsApp: hours before the window closes.")
@click.option("--template", help="Send this approved template.")
@click.option("--body", help="Send this free-form text.")
def add(
    subscription: uuid.UUID,
    name: str,
    channel: str,
    quiet_hours: float,
    window_lead_hours: float | None,
    template: str | None,
    body: str | None,
) -> int:
    """Add a rule: nudge a lead after --quiet-hours without engagement."""
    from datetime import timedelta

    from sqlalchemy.exc import IntegrityError

    from morpheus_pipelines.crm.rules.timeline import NudgeRule, describe_rule
    from morpheus_pipelines.crm.steps.lead_automations import add_rule
    from morpheus_pipelines.db.session import get_session

    url = _subscription_url(subscription)
    if url is None:
        return 2
    try:
        rule = NudgeRule(
            channel,
            timedelta(hours=quiet_hours),
            timedelta(hours=window_lead_hours) if window_lead_hours else None,
            kind="template" if template else "free_form",
        )
        with get_session(url) as session:
            add_rule(session, subscription, name=name, rule=rule, template_name=template, body=body)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except IntegrityError as exc:
        print(f"error: {_refusal(str(exc.orig), name)}", file=sys.stderr)
        return 2
    print(f"rule {name!r} added: {describe_rule(rule)}")
    return 0


@automation_rule.command(name="list")
@_subscription_option
def list_(subscription: uuid.UUID) -> int:
    """List the subscription's rules, each with its description."""
    from morpheus_pipelines.crm.steps.lead_automations import describe_rules
    from morpheus_pipelines.db.session import get_session

    url = _subscription_url(subscription)
    if url is None:
        return 2
    with get_session(url) as session:
        for name, active, description in describe_rules(session, subscription):
            print(f"{name}{'' if active else ' (inactive)'}: {description}")
    return 0


def _refusal(reason: str, name: str) -> str:
    if "uq_automation_rules_subscriptionId_name" in reason:
        return f"the subscription already has a rule named {name!r}"
    return f"the database refused the rule: {reason}"
