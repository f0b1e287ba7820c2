"""``morpheus segment``: the HubSpot contact list behind each re-engagement segment."""

from __future__ import annotations

import click

from morpheus_pipelines.cli.db import checked_warehouse_url
from morpheus_pipelines.cli.parsing import Group
from morpheus_pipelines.cli.setup_options import (
    hubspot_client,
    hubspot_list_id,
    run,
    subscription_id,
    subscription_option,
    warn,
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
    help="The HubSpot contact list's id (a positive whole number). Looked up in HubSpot when "
    "HUBSPOT_PRIVATE_APP_TOKEN is set: it must exist and hold contacts.",
)
def set_(subscription: str, name: str, list_id: str) -> int:
    """Point a segment of the subscription at a HubSpot contact list; print
    `segment SEGMENT list=N added|updated|unchanged`.

    Setting the same list again changes nothing. With HUBSPOT_PRIVATE_APP_TOKEN set, the list
    is first read from HubSpot (HUBSPOT_BASE_URL): a list HubSpot does not have, a list of
    anything but contacts, or HubSpot unreachable or refusing the token is one line and
    nothing is stored. Without a token the list is stored unchecked, with a warning."""
    from morpheus_pipelines.crm.steps.portal_setup import set_segment_list
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        hubspot_list = hubspot_list_id("--list-id", list_id) or ""
        client = hubspot_client()
        try:
            with get_session(checked_warehouse_url()) as session:
                outcome = set_segment_list(
                    CrmStore(session),
                    subscription_uuid,
                    name.strip(),
                    hubspot_list,
                    hubspot=client,
                )
        finally:
            if client is not None:
                client.close()
        if client is None:
            warn(
                f"list {hubspot_list} was not checked in HubSpot (HUBSPOT_PRIVATE_APP_TOKEN is "
                "not set): that it exists and holds contacts is up to you"
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
        with get_session(checked_warehouse_url()) as session:
            shown = segment_lists(CrmStore(session), subscription_uuid)
        for name, hubspot_list in shown:
            print(f"segment {name} list={word(hubspot_list)}")
        return 0

    return run(body)
