"""``morpheus subscription``: the subscriptions (workspaces) in the warehouse."""

from __future__ import annotations

import sys
import uuid

import click

from morpheus_pipelines.cli.db import checked_warehouse_url
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

    with get_session(checked_warehouse_url()) as session:
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

    with get_session(checked_warehouse_url()) as session:
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
@click.option(
    "--default-region",
    metavar="CC",
    help="The region (ISO 3166 code, e.g. SG) a lead's phone number without a country code "
    "is read in.",
)
@click.option(
    "--fallback-rep",
    metavar="REP_ID",
    help="The active rep with a HubSpot owner id who gets a lead when no pool has anyone "
    "to give it to (`morpheus rep list`).",
)
@click.option(
    "--meta-page-id",
    metavar="ID",
    help="The Facebook page whose lead-ad deliveries belong to this subscription (digits); "
    "one subscription per page.",
)
@click.option(
    "--whatsapp-phone-number-id",
    metavar="ID",
    help="The WhatsApp Business phone-number id (not the number) whose messages belong to "
    "this subscription (digits); one subscription per number.",
)
@click.option(
    "--google-ads-key",
    metavar="KEY",
    help="The key Google Ads sends as google_key in each lead-form delivery; kept only as a "
    "hash, never printed. One subscription per key.",
)
def set_(
    subscription_id: str,
    hubspot_portal_id: str | None,
    default_region: str | None,
    fallback_rep: str | None,
    meta_page_id: str | None,
    whatsapp_phone_number_id: str | None,
    google_ads_key: str | None,
) -> int:
    """Change the settings given (any of them, at least one; the others stay); print them as
    `show` does.

    An empty value clears a setting (--fallback-rep ''). All or nothing: a value refused,
    or one another subscription has, leaves every setting as it was."""
    from morpheus_pipelines.crm.steps.subscriptions import (
        SubscriptionRefused,
        change_settings,
        subscription_settings,
    )
    from morpheus_pipelines.db.session import get_session

    subscription_uuid = _subscription_id(subscription_id)
    if subscription_uuid is None:
        return _refuse("SUBSCRIPTION", f"{subscription_id!r} is not a subscription id (a UUID)")
    given = {
        option: value
        for option, value in (
            ("--hubspot-portal-id", hubspot_portal_id),
            ("--default-region", default_region),
            ("--fallback-rep", fallback_rep),
            ("--meta-page-id", meta_page_id),
            ("--whatsapp-phone-number-id", whatsapp_phone_number_id),
            ("--google-ads-key", google_ads_key),
        )
        if value is not None
    }
    try:
        with get_session(checked_warehouse_url()) as session:
            change_settings(session, subscription_uuid, given)
            shown = subscription_settings(session, subscription_uuid)
    except SubscriptionRefused as refused:
        return _refuse(refused.option, str(refused))
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
    with get_session(checked_warehouse_url()) as session:
        shown = subscription_settings(session, subscription_uuid)
    if shown is None:
        return _refuse("SUBSCRIPTION", f"subscription {subscription_uuid} does not exist")
    _print_settings(shown)
    return 0


def _print_settings(shown: dict | None) -> None:
    assert shown is not None

    def said(value: object) -> str:
        return "(not set)" if value is None else str(value)

    for label, value in (
        ("id", shown["id"]),
        ("name", shown["name"]),
        ("hubspot-portal-id", said(shown["hubspot_portal_id"])),
        ("default-region", said(shown["default_region"])),
        ("fallback-rep", said(shown["fallback_rep_id"])),
        ("meta-page-id", said(shown["meta_page_id"])),
        ("whatsapp-phone-number-id", said(shown["whatsapp_phone_number_id"])),
        ("google-ads-key", "set" if shown["google_ads_key_set"] else "(not set)"),
    ):
        print(f"{label:<26}{value}")
