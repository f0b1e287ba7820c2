"""``morpheus subscription``: the subscriptions (workspaces) in the warehouse."""

from __future__ import annotations

import sys

import click

from morpheus_pipelines.cli.db import migrated_warehouse_url
from morpheus_pipelines.cli.parsing import ActionGroup


@click.group(cls=ActionGroup)
def subscription() -> None:
    """Create or list the subscriptions (workspaces)."""


@subscription.command()
@click.option("--name", required=True, help="The workspace's name.")
def create(name: str) -> int:
    """Create a subscription; print its id last.

    The id is what MORPHEUS_SUBSCRIPTION_ID takes."""
    from morpheus_pipelines.crm.steps.subscriptions import create_subscription
    from morpheus_pipelines.db.session import get_session

    with get_session(migrated_warehouse_url()) as session:
        try:
            subscription_id = create_subscription(session, name)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"subscription {name.strip()!r} created; set MORPHEUS_SUBSCRIPTION_ID to")
        print(subscription_id)
    return 0


@subscription.command(name="list")
def list_() -> int:
    """List the subscriptions: id and name, one a line."""
    from morpheus_pipelines.crm.steps.subscriptions import list_subscriptions
    from morpheus_pipelines.db.session import get_session

    with get_session(migrated_warehouse_url()) as session:
        for subscription_id, name in list_subscriptions(session):
            print(f"{subscription_id}  {name}")
    return 0
