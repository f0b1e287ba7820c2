"""``morpheus subscription``: the subscriptions (workspaces) in the warehouse."""

from __future__ import annotations

import sys
import uuid

import click

from morpheus_pipelines.cli.db import migrated_warehouse_url
from morpheus_pipelines.cli.parsing import ActionGroup


@click.group(cls=ActionGroup)
def subscription() -> None:
    """Create, list, show or set up the subscriptions (workspaces)."""


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


def _refuse(option: str, message: str) -> int:
    print(f"error: {option}: {message}", file=sys.stderr)
    return 2


def _subscription_id(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value.strip())
    except ValueError:
        return None


@subscription.command(name="set")
@click.argument("subscription_id", metavar="SUBSCRIPTION")
@click.option(
    "--hubspot-portal-id",
    metavar="N",
    help="The HubSpot account (portal) id whose webhook deliveries belong to this "
    "subscription; one subscription per portal.",
)
def set_(subscription_id: str, hubspot_portal_id: str | None) -> int:
    """Change a subscription's settings; print them as `show` does."""
    from sqlalchemy.exc import IntegrityError

    from morpheus_pipelines.crm.steps.subscriptions import (
        SubscriptionRefused,
        set_hubspot_portal_id,
        subscription_settings,
    )
    from morpheus_pipelines.db.session import get_session

    subscription_uuid = _subscription_id(subscription_id)
    if subscription_uuid is None:
        return _refuse("SUBSCRIPTION", f"{subscription_id!r} is not a subscription id (a UUID)")
    if hubspot_portal_id is None:
        return _refuse("--hubspot-portal-id", "nothing to set: give --hubspot-portal-id N")
    text = hubspot_portal_id.strip()
    if not text.lstrip("-").isdigit():
        return _refuse("--hubspot-portal-id", f"{hubspot_portal_id!r} is not a whole number")
    portal_id = int(text)
    if portal_id >= 2**63:
        return _refuse("--hubspot-portal-id", f"{portal_id} is larger than any HubSpot portal id")
    try:
        with get_session(migrated_warehouse_url()) as session:
            set_hubspot_portal_id(session, subscription_uuid, portal_id)
            shown = subscription_settings(session, subscription_uuid)
    except SubscriptionRefused as refused:
        return _refuse(refused.option, str(refused))
    except IntegrityError:
        # Another subscription took the portal at the same moment: the UNIQUE constraint.
        return _refuse("--hubspot-portal-id", f"portal {portal_id} belongs to another subscription")
    _print_settings(shown)
    return 0


@subscription.command()
@click.argument("subscription_id", metavar="SUBSCRIPTION")
def show(subscription_id: str) -> int:
    """Print a subscription's id, name and settings, one a line."""
    from morpheus_pipelines.crm.steps.subscriptions import subscription_settings
    from morpheus_pipelines.db.session import get_session

    subscription_uuid = _subscription_id(subscription_id)
    if subscription_uuid is None:
        return _refuse("SUBSCRIPTION", f"{subscription_id!r} is not a subscription id (a UUID)")
    with get_session(migrated_warehouse_url()) as session:
        shown = subscription_settings(session, subscription_uuid)
    if shown is None:
        return _refuse("SUBSCRIPTION", f"subscription {subscription_uuid} does not exist")
    _print_settings(shown)
    return 0


def _print_settings(shown: dict | None) -> None:
    assert shown is not None
    portal = shown["hubspot_portal_id"]
    print(f"id                 {shown['id']}")
    print(f"name               {shown['name']}")
    print(f"hubspot-portal-id  {portal if portal is not None else '(not set)'}")
