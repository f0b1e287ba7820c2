"""``morpheus rep``: a subscription's sales reps (mirrored from HubSpot's owners) and the ids
that are ours to set: their re-engagement list, call list and Nooks user."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from morpheus_pipelines.cli.db import migrated_warehouse_url
from morpheus_pipelines.cli.parsing import Group
from morpheus_pipelines.cli.setup_options import (
    Refused,
    hubspot_list_id,
    run,
    subscription_id,
    subscription_option,
    whole_number,
    word,
)

if TYPE_CHECKING:
    from morpheus_pipelines.crm.models import SalesRep


@click.group(cls=Group)
def rep() -> None:
    """List the sales reps or set their list and dialer ids."""


@rep.command(name="list")
@subscription_option
def list_(subscription: str) -> int:
    """List the subscription's reps by id, active or not, one a line:

    \b
    rep REP_ID email=EMAIL active=yes|no hubspot-owner-id=ID active-list-id=ID
        call-list-id=ID nooks-user-id=ID

    (one line each; `-` where unset)."""
    from morpheus_pipelines.crm.steps.portal_setup import reps
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        with get_session(migrated_warehouse_url()) as session:
            lines = [_rep_line(r) for r in reps(CrmStore(session), subscription_uuid)]
        for line in lines:
            print(line)
        return 0

    return run(body)


@rep.command(name="set")
@click.argument("rep_id", metavar="REP_ID")
@click.option(
    "--active-list-id",
    metavar="ID",
    help="The HubSpot contact list re-engagement adds the rep's contacts to (a positive "
    "whole number).",
)
@click.option(
    "--call-list-id",
    metavar="ID",
    help="The rep's HubSpot call list (stored as hubspotCallSegmentId; a positive whole number).",
)
@click.option("--nooks-user-id", metavar="ID", help="The rep's user id in the Nooks dialer.")
def set_(
    rep_id: str, active_list_id: str | None, call_list_id: str | None, nooks_user_id: str | None
) -> int:
    """Set the ids given on a rep (the others stay); print the rep as `list` does, then
    `updated` or `unchanged`. The sales-rep mirror never overwrites them. The lists are not
    looked up in HubSpot yet."""
    from morpheus_pipelines.crm.steps.portal_setup import set_rep
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        rep_number = whole_number("REP_ID", rep_id)
        active = hubspot_list_id("--active-list-id", active_list_id)
        calls = hubspot_list_id("--call-list-id", call_list_id)
        nooks = None
        if nooks_user_id is not None:
            nooks = nooks_user_id.strip()
            if not nooks or any(c.isspace() for c in nooks):
                raise Refused("--nooks-user-id", "must be one word, not empty")
        with get_session(migrated_warehouse_url()) as session:
            outcome, shown = set_rep(
                CrmStore(session),
                rep_number,
                active_list_id=active,
                call_list_id=calls,
                nooks_user_id=nooks,
            )
            line = _rep_line(shown)
        print(f"{line} {outcome}")
        return 0

    return run(body)


def _rep_line(rep: SalesRep) -> str:
    return (
        f"rep {rep.id} email={word(rep.email)} active={'yes' if rep.isActive else 'no'} "
        f"hubspot-owner-id={word(rep.hubspotOwnerId)} active-list-id={word(rep.activeListId)} "
        f"call-list-id={word(rep.hubspotCallSegmentId)} nooks-user-id={word(rep.nooksUserId)}"
    )
