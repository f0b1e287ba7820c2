"""``morpheus api-key``: the keys the lead-intake API accepts, one subscription each."""

from __future__ import annotations

import sys
import uuid

import click

from morpheus_pipelines.cli.db import checked_warehouse_url
from morpheus_pipelines.cli.parsing import ActionGroup


@click.group(cls=ActionGroup, name="api-key")
def api_key() -> None:
    """Create or revoke an intake API key."""


@api_key.command()
@click.option(
    "--subscription", type=click.UUID, required=True, help="The subscription the key is for."
)
@click.option("--label", help="A note to tell the key from the subscription's others.")
@click.option(
    "--publishable",
    is_flag=True,
    help="A key for a web page: it may only create leads, only from the --origin given.",
)
@click.option(
    "--origin",
    "origins",
    multiple=True,
    help="An origin (https://forms.example.com) a publishable key may be used from; repeat "
    "for several.",
)
def create(
    subscription: uuid.UUID, label: str | None, publishable: bool, origins: tuple[str, ...]
) -> int:
    """Create a key and print it, once, on the last line.

    A secret key (the default) is for your server and may do everything; a publishable key
    (--publishable --origin https://…) is for a browser form and may only create leads, only
    from its origins."""
    from morpheus_pipelines.crm.api.server import create_api_key
    from morpheus_pipelines.crm.steps.subscriptions import subscription_exists
    from morpheus_pipelines.platform.text.origins import OriginRefused, normalise_origin

    if publishable != bool(origins):
        print(
            "error: a publishable key needs at least one --origin, and --origin is only for "
            "--publishable keys",
            file=sys.stderr,
        )
        return 2
    try:
        allowed = tuple(dict.fromkeys(normalise_origin(origin) for origin in origins))
    except OriginRefused as refused:
        print(f"error: --origin {refused}", file=sys.stderr)
        return 2
    url = checked_warehouse_url()
    if not subscription_exists(url, subscription):
        print(f"error: subscription {subscription} does not exist", file=sys.stderr)
        return 2
    key_id, key = create_api_key(url, subscription, label, origins=allowed)
    kind = f"publishable key for {', '.join(allowed)}" if allowed else "API key"
    print(f"{kind} {key_id} for subscription {subscription}; it is shown only once:")
    print(key)
    return 0


@api_key.command()
@click.argument("key_id", type=click.UUID)
def revoke(key_id: uuid.UUID) -> int:
    """Revoke the key KEY_ID.

    Exit status 1 when no active key has that id."""
    from morpheus_pipelines.crm.api.server import revoke_api_key

    if not revoke_api_key(checked_warehouse_url(), key_id):
        print(f"error: no active key {key_id}", file=sys.stderr)
        return 1
    print(f"API key {key_id} revoked")
    return 0
