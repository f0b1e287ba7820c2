"""``morpheus segment``: the HubSpot contact list behind each re-engagement segment."""

from __future__ import annotations

import click

from morpheus_pipelines.cli.db import migrated_warehouse_url
from morpheus_pipelines.cli.parsing import Group
from morpheus_pipelines.cli.setup_options import (
    hubspot_list_id,
    run,
    subscription_id,
    subscription_option,
    word,
)
from morpheus_pipelines.crm.rules.ownership import ReengagementSegment

SEGMENTS = ", ".join(segment.value for segment in ReengagementSegment)


@click.group(cls=Group)
def segment() -> None:
    """Set or list the HubSpot contact list of each re-engagement segment."""


@segment.command(name="set")
@subscription_option
@click.option("--segment", "name", metavar="SEGMENT", required=True, help=f"One of {SEGMENTS}.")
@click.option(
    "--list-id",
    metavar="N",
    required=True,
    help="The HubSpot contact list's id (a positive whole number). Not looked up in HubSpot "
    "yet: that it exists and is a contact list is up to you.",
)
def set_(subscription: str, name: str, list_id: str) -> int:
    """Point a segment of the subscription at a HubSpot contact list; print
    `segment SEGMENT list=N added|updated|unchanged`.

    Setting the same list again changes nothing. The list is not checked against HubSpot
    (that it exists and is a contact list): that check is still to be built."""
    from morpheus_pipelines.crm.steps.portal_setup import set_segment_list
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        hubspot_list = hubspot_list_id("--list-id", list_id)
        with get_session(migrated_warehouse_url()) as session:
            outcome = set_segment_list(
                CrmStore(session), subscription_uuid, name.strip(), hubspot_list or ""
            )
        print(f"segment {word(name.strip())} list={hubspot_list} {outcome}")
        return 0

    return run(body)


@segment.command(name="list")
@subscription_option
def list_(subscription: str) -> int:
    """List every segment with its list: `segment SEGMENT list=N`, `list=-` when none."""
    from morpheus_pipelines.crm.steps.portal_setup import segment_lists
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        with get_session(migrated_warehouse_url()) as session:
            shown = segment_lists(CrmStore(session), subscription_uuid)
        for name, hubspot_list in shown:
            print(f"segment {name} list={word(hubspot_list)}")
        return 0

    return run(body)
