"""``morpheus rep``: a subscription's sales reps (mirrored from HubSpot's owners) and what is
ours to set: their re-engagement list, call list and Nooks user, and when they can be given
leads (working hours in their time zone, away-until, a cap on open leads)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from morpheus_pipelines.cli.db import checked_warehouse_url
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
    """List the sales reps, set their lists, dialer ids and availability, or mark one as left."""


@rep.command(name="list")
@subscription_option
def list_(subscription: str) -> int:
    """List the subscription's reps by id, active or not, one a line:

    \b
    rep REP_ID email=EMAIL active=yes|no hubspot-owner-id=ID active-list-id=ID
        call-list-id=ID nooks-user-id=ID time-zone=ZONE working-hours=HOURS
        away-until=INSTANT max-open-leads=N open-leads=N

    (one line each; `-` where unset; working hours as `mon-fri:09:00-18:00`, `-` for
    always)."""
    from morpheus_pipelines.crm.steps.portal_setup import reps
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        with get_session(checked_warehouse_url()) as session:
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
@click.option(
    "--working-hours",
    metavar="HOURS",
    help="When the rep takes leads, in their time zone: 'mon-fri 09:00-18:00', or groups "
    "like 'mon-thu 09:00-12:00 13:00-18:00, fri 09:00-15:00'. Empty: always.",
)
@click.option(
    "--time-zone",
    metavar="ZONE",
    help="The rep's IANA time zone (e.g. Asia/Singapore); working hours and a date given to "
    "--away-until are read in it. Empty: UTC.",
)
@click.option(
    "--away-until",
    metavar="DATE",
    help="No leads before this date (YYYY-MM-DD, the start of that day in the rep's zone) or "
    "ISO instant with an offset. Empty: not away.",
)
@click.option(
    "--max-open-leads",
    metavar="N",
    help="No new lead while the rep owns this many open leads (0 or more). Empty: no cap.",
)
def set_(
    rep_id: str,
    active_list_id: str | None,
    call_list_id: str | None,
    nooks_user_id: str | None,
    working_hours: str | None,
    time_zone: str | None,
    away_until: str | None,
    max_open_leads: str | None,
) -> int:
    """Set what is given on a rep (the rest stays; an empty availability value clears it);
    print the rep as `list` does, then `updated` or `unchanged`. The sales-rep mirror never
    overwrites them. The lists are not looked up in HubSpot yet. A rep outside their hours,
    away or at the cap is given no lead (docs/ownership.md, "Availability and capacity")."""
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
        availability = _availability(working_hours, time_zone, away_until, max_open_leads)
        with get_session(checked_warehouse_url()) as session:
            outcome, shown = set_rep(
                CrmStore(session),
                rep_number,
                active_list_id=active,
                call_list_id=calls,
                nooks_user_id=nooks,
                **availability,
            )
            line = _rep_line(shown)
        print(f"{line} {outcome}")
        return 0

    return run(body)


@rep.command(name="deactivate")
@click.argument("rep_id", metavar="REP_ID")
def deactivate(rep_id: str) -> int:
    """The rep has left: give them no more leads, empty their call list, and hand over what
    they hold, in this run (docs/ownership.md, "When a rep leaves"): each open lead routed
    again in its pool, each live follow-up task to the new owner. Prints the rep, then
    `updated` or `unchanged`, then what moved:

    \b
    handed over: N open lead(s) (R re-routed, F to a fallback rep, W waiting), T live
        task(s) (U with nobody to take them)

    The mirror keeps the rep inactive whatever HubSpot says, until `morpheus rep reactivate`.
    Repeating it hands over anything left and moves nothing twice."""
    from functools import partial

    from morpheus_pipelines.crm.steps.portal_setup import mark_rep_left
    from morpheus_pipelines.crm.steps.rep_hand_over import hand_over_rep
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        rep_number = whole_number("REP_ID", rep_id)
        url = checked_warehouse_url()
        with get_session(url) as session:
            outcome, shown = mark_rep_left(CrmStore(session), rep_number)
            line, subscription = _rep_line(shown), shown.subscriptionId
        print(f"{line} {outcome}")
        hand_over = hand_over_rep(partial(get_session, url), subscription, rep_number)
        t = hand_over.tally if hand_over is not None else None
        if t is not None:
            print(
                f"handed over: {t.leads} open lead(s) ({t.leads_rerouted} re-routed, "
                f"{t.leads_to_fallback} to a fallback rep, {t.leads_waiting} waiting), "
                f"{t.tasks} live task(s) ({t.tasks_unowned} with nobody to take them)"
            )
        return 0

    return run(body)


@rep.command(name="reactivate")
@click.argument("rep_id", metavar="REP_ID")
def reactivate(rep_id: str) -> int:
    """Undo `deactivate`: the rep takes leads again (when HubSpot still lists them as an
    owner; the next mirror run has the last word). What was handed over stays with its new
    owners. Prints the rep, then `updated` or `unchanged`."""
    from morpheus_pipelines.crm.steps.portal_setup import mark_rep_back
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        rep_number = whole_number("REP_ID", rep_id)
        with get_session(checked_warehouse_url()) as session:
            outcome, shown = mark_rep_back(CrmStore(session), rep_number)
            line = _rep_line(shown)
        print(f"{line} {outcome}")
        return 0

    return run(body)


def _availability(
    working_hours: str | None,
    time_zone: str | None,
    away_until: str | None,
    max_open_leads: str | None,
) -> dict[str, Any]:
    """The availability options as ``set_rep`` takes them: unsaid ones are left out, empty
    ones clear, the rest are checked here (the date is read in the rep's zone by the step)."""
    from morpheus_pipelines.crm.rules.availability import (
        InvalidAvailability,
        parse_working_hours,
    )
    from morpheus_pipelines.crm.rules.availability import time_zone as checked_zone

    given: dict[str, Any] = {}
    try:
        if working_hours is not None:
            hours = working_hours.strip()
            given["working_hours"] = parse_working_hours(hours) if hours else None
    except InvalidAvailability as refused:
        raise Refused("--working-hours", str(refused)) from None
    try:
        if time_zone is not None:
            given["time_zone"] = checked_zone(time_zone) if time_zone.strip() else None
    except InvalidAvailability as refused:
        raise Refused("--time-zone", str(refused)) from None
    if away_until is not None:
        given["away_until_text"] = away_until.strip() or None
    if max_open_leads is not None:
        text = max_open_leads.strip()
        given["max_open_leads"] = (
            whole_number("--max-open-leads", text, positive=False) if text else None
        )
        if given["max_open_leads"] is not None and given["max_open_leads"] < 0:
            raise Refused("--max-open-leads", "must not be negative")
    return given


def _rep_line(rep: SalesRep) -> str:
    from morpheus_pipelines.crm.rules.availability import format_working_hours

    away = None if rep.awayUntil is None else rep.awayUntil.isoformat()
    return (
        f"rep {rep.id} email={word(rep.email)} active={'yes' if rep.isActive else 'no'} "
        f"hubspot-owner-id={word(rep.hubspotOwnerId)} active-list-id={word(rep.activeListId)} "
        f"call-list-id={word(rep.hubspotCallSegmentId)} nooks-user-id={word(rep.nooksUserId)} "
        f"time-zone={word(rep.timeZone)} working-hours={format_working_hours(rep.workingHours)} "
        f"away-until={word(away)} max-open-leads={word(rep.maxOpenLeads)} "
        f"open-leads={rep.openLeads}"
    )
