"""``morpheus api-key``: the keys the lead-intake API accepts, one subscription each."""

from __future__ import annotations

import sys
import uuid

import click

from morpheus_pipelines.cli.db import migrated_warehouse_url
from morpheus_pipelines.cli.parsing import ActionGroup


@click.group(cls=ActionGroup, name="api-key")
def api_key() -> None:
    """Create or revoke an intake API key."""


@api_key.command()
@click.option(
    "--subscription", type=click.UUID, required=True, help="The subscription the key is for."
)
@click.option("--label", help="A note to tell the key from the subscription's others.")
def create(subscription: uuid.UUID, label: str | None) -> int:
    """Create a key and print it, once, on the last line."""
    from morpheus_pipelines.crm.api.server import create_api_key
    from morpheus_pipelines.crm.steps.subscriptions import subscription_exists

    url = migrated_warehouse_url()
    if not subscription_exists(url, subscription):
        print(f"error: subscription {subscription} does not exist", file=sys.stderr)
        return 2
    key_id, key = create_api_key(url, subscription, label)
    print(f"API key {key_id} for subscription {subscription}; it is shown only once:")
    print(key)
    return 0


@api_key.command()
@click.argument("key_id", type=click.UUID)
def revoke(key_id: uuid.UUID) -> int:
    """Revoke the key KEY_ID.

    Exit status 1 when no active key has that id."""
    from morpheus_pipelines.crm.api.server import revoke_api_key

    if not revoke_api_key(migrated_warehouse_url(), key_id):
        print(f"error: no active key {key_id}", file=sys.stderr)
        return 1
    print(f"API key {key_id} revoked")
    return 0
