"""``morpheus pool``: the routing pools of a subscription, their members and their rules (what
``POST /v1/leads`` routes by, docs/leads.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from morpheus_pipelines.cli.db import checked_warehouse_url
from morpheus_pipelines.cli.parsing import Group
from morpheus_pipelines.cli.setup_options import (
    Refused,
    run,
    subscription_id,
    subscription_option,
    whole_number,
    word,
)

if TYPE_CHECKING:
    from morpheus_pipelines.crm.steps.portal_setup import PoolView, RuleView

_POOL = click.option("--pool", metavar="NAME", required=True, help="The pool's name.")
_REP = click.option(
    "--rep", metavar="REP_ID", required=True, help="The sales rep's id (`morpheus rep list`)."
)
_SOURCE = click.option(
    "--source", metavar="SOURCE", help="Leads whose `source` is exactly this (e.g. web-form)."
)
_CAMPAIGN = click.option(
    "--campaign-id", metavar="ID", help="Leads whose `campaign_ids` include this id."
)


@click.group(cls=Group)
def pool() -> None:
    """Add, list or remove routing pools, their members and rules."""


@pool.command()
@subscription_option
@click.option(
    "--name", metavar="NAME", required=True, help="The pool's name, unique in the subscription."
)
@click.option(
    "--default/--not-default",
    default=None,
    show_default=False,
    help="The default pool takes every lead no rule matches; one per subscription. "
    "Unsaid: left as it is.",
)
@click.option(
    "--fallback-rep",
    metavar="REP_ID",
    help="The active rep who owns a lead when no member can take it (else the AI owner). "
    "Unsaid: left as it is.",
)
def add(subscription: str, name: str, default: bool | None, fallback_rep: str | None) -> int:
    """Add a pool, or change the settings given of an existing one; print it as `list` does.

    A second default pool is refused: make the other one --not-default first."""
    from morpheus_pipelines.crm.steps.portal_setup import add_pool, pools
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        rep_id = whole_number("--fallback-rep", fallback_rep)
        with get_session(checked_warehouse_url()) as session:
            store = CrmStore(session)
            outcome = add_pool(
                store, subscription_uuid, name, default=default, fallback_rep_id=rep_id
            )
            [shown] = [p for p in pools(store, subscription_uuid) if p.name == name.strip()]
        print(f"{_pool_line(shown)} {outcome}")
        return 0

    return run(body)


@pool.command(name="set")
@subscription_option
@_POOL
@click.option(
    "--first-touch-sla",
    metavar="DURATION",
    required=True,
    help="How soon the owner of a new lead must touch it (an outbound call, email or message "
    "by a person), e.g. 90s, 15m, 1h; missed: the lead is re-routed once. Empty: no SLA.",
)
def set_(subscription: str, pool: str, first_touch_sla: str) -> int:
    """Set a pool's first-touch SLA (docs/ownership.md, "First-touch SLA"); print the pool as
    `list` does, then `updated` or `unchanged`. Leads already created keep their deadline."""
    from morpheus_pipelines.crm.rules.availability import InvalidAvailability, duration_seconds
    from morpheus_pipelines.crm.steps.portal_setup import pools, set_pool
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        text = first_touch_sla.strip()
        try:
            seconds = duration_seconds(text) if text else None
        except InvalidAvailability as refused:
            raise Refused("--first-touch-sla", str(refused)) from None
        with get_session(checked_warehouse_url()) as session:
            store = CrmStore(session)
            outcome = set_pool(
                store, subscription_uuid, pool.strip(), first_touch_sla_seconds=seconds
            )
            [shown] = [p for p in pools(store, subscription_uuid) if p.name == pool.strip()]
        print(f"{_pool_line(shown)} {outcome}")
        return 0

    return run(body)


@pool.command(name="list")
@subscription_option
def list_(subscription: str) -> int:
    """List the pools by name, each followed by its members and its rules, one a line:

    \b
    pool NAME default=yes|no fallback-rep=REP_ID|- first-touch-sla=DURATION|-
    member NAME rep=REP_ID weight=N email=EMAIL
    rule NAME id=ID source=SOURCE|- campaign-id=ID|- priority=N

    Removed members are not listed."""
    from morpheus_pipelines.crm.steps.portal_setup import pools
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        with get_session(checked_warehouse_url()) as session:
            shown = pools(CrmStore(session), subscription_uuid)
        for view in shown:
            print(_pool_line(view))
            for member in view.members:
                print(
                    f"member {word(view.name)} rep={member.rep_id} weight={member.weight} "
                    f"email={word(member.email)}"
                )
            for rule in view.rules:
                print(f"rule {word(view.name)} {_rule_words(rule)}")
        return 0

    return run(body)


@pool.command()
@subscription_option
@click.option("--name", metavar="NAME", required=True, help="The pool's name.")
def remove(subscription: str, name: str) -> int:
    """Remove a pool and its members.

    Refused while the pool has rules: remove them first, so each change of route is said
    rule by rule. Refused for a pool that leads were routed to: pools have no status, and
    each such lead names its pool."""
    from morpheus_pipelines.crm.steps.portal_setup import remove_pool
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        with get_session(checked_warehouse_url()) as session:
            outcome = remove_pool(CrmStore(session), subscription_uuid, name.strip())
        print(f"pool {word(name.strip())} {outcome}")
        return 0

    return run(body)


@pool.group(cls=Group)
def member() -> None:
    """Add or remove a pool's members."""


@member.command(name="add")
@subscription_option
@_POOL
@_REP
@click.option(
    "--weight",
    metavar="N",
    default="1",
    help="The rep's share of the pool's leads against the other members' (a positive integer).",
)
def member_add(subscription: str, pool: str, rep: str, weight: str) -> int:
    """Put an active rep with a HubSpot owner id in a pool; a member already there takes the
    new weight. Print `member POOL rep=REP_ID weight=N added|updated|unchanged`."""
    from morpheus_pipelines.crm.steps.portal_setup import add_member
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        rep_id = whole_number("--rep", rep)
        share = whole_number("--weight", weight)
        with get_session(checked_warehouse_url()) as session:
            outcome = add_member(CrmStore(session), subscription_uuid, pool.strip(), rep_id, share)
        print(f"member {word(pool.strip())} rep={rep_id} weight={share} {outcome}")
        return 0

    return run(body)


@member.command(name="remove")
@subscription_option
@_POOL
@_REP
def member_remove(subscription: str, pool: str, rep: str) -> int:
    """Stop a pool giving leads to a rep. The member row stays, marked not assignable (the
    leads it took keep their owner); `member add` brings it back."""
    from morpheus_pipelines.crm.steps.portal_setup import remove_member
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        rep_id = whole_number("--rep", rep)
        with get_session(checked_warehouse_url()) as session:
            outcome = remove_member(CrmStore(session), subscription_uuid, pool.strip(), rep_id)
        print(f"member {word(pool.strip())} rep={rep_id} {outcome}")
        return 0

    return run(body)


@pool.group(cls=Group)
def rule() -> None:
    """Add or remove the rules that send leads to a pool."""


@rule.command(name="add")
@subscription_option
@_POOL
@_SOURCE
@_CAMPAIGN
@click.option(
    "--priority",
    metavar="N",
    default="0",
    help="Breaks ties between matching rules equally specific (higher wins).",
)
def rule_add(
    subscription: str, pool: str, source: str | None, campaign_id: str | None, priority: str
) -> int:
    """Send leads to a pool by --source, --campaign-id or both. When several rules match a
    lead, source and campaign beats campaign alone beats source alone, then the higher
    --priority, then the older rule; no match: the default pool.

    The same source and campaign again only changes the priority; the same ones already
    sending leads to another pool are refused. Print `rule POOL id=ID ... added|updated|
    unchanged`."""
    from morpheus_pipelines.crm.steps.portal_setup import RuleView, add_rule
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        rank = whole_number("--priority", priority, positive=False)
        with get_session(checked_warehouse_url()) as session:
            outcome, rule_id = add_rule(
                CrmStore(session),
                subscription_uuid,
                pool.strip(),
                source=source,
                campaign_id=campaign_id,
                priority=rank,
            )
        said = RuleView(
            rule_id,
            source.strip() if source else None,
            campaign_id.strip() if campaign_id else None,
            rank,
        )
        print(f"rule {word(pool.strip())} {_rule_words(said)} {outcome}")
        return 0

    return run(body)


@rule.command(name="remove")
@subscription_option
@_POOL
@_SOURCE
@_CAMPAIGN
def rule_remove(subscription: str, pool: str, source: str | None, campaign_id: str | None) -> int:
    """Remove the pool's rule with exactly this --source and --campaign-id (give the one the
    rule has; leave out the one it has not).

    Refused for a rule that routed leads: rules have no status, and each such lead names
    its rule."""
    from morpheus_pipelines.crm.steps.portal_setup import remove_rule
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        with get_session(checked_warehouse_url()) as session:
            rule_id = remove_rule(
                CrmStore(session),
                subscription_uuid,
                pool.strip(),
                source=source,
                campaign_id=campaign_id,
            )
        print(f"rule {word(pool.strip())} id={rule_id} removed")
        return 0

    return run(body)


def _pool_line(view: PoolView) -> str:
    from morpheus_pipelines.crm.rules.availability import format_duration

    return (
        f"pool {word(view.name)} default={'yes' if view.default else 'no'} "
        f"fallback-rep={word(view.fallback_rep_id)} "
        f"first-touch-sla={format_duration(view.first_touch_sla_seconds)}"
    )


def _rule_words(rule: RuleView) -> str:
    return (
        f"id={rule.rule_id} source={word(rule.source)} campaign-id={word(rule.campaign_id)} "
        f"priority={rule.priority}"
    )
