"""The rules of the deal worker and the reconciliation: which stages close leads, what each
deal event becomes, when the pending check turns red, and what a HubSpot contact asks of our
rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from morpheus_pipelines.crm.rules.hubspot_deals import (
    IgnoredBecause,
    closing_outcome,
    lead_status_of_stage,
    pending_health,
    plan_deal_event,
    stage_of_event,
)
from morpheus_pipelines.crm.rules.hubspot_reconciliation import (
    DEFAULT_OVERLAP,
    FIRST_RUN_LOOKBACK,
    contact_changes,
    window_start,
)
from morpheus_pipelines.crm.rules.lead_status import LeadStatus

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("stage", "status"),
    [
        ("closedwon", LeadStatus.WON),
        ("closedlost", LeadStatus.LOST),
        (" closedwon ", LeadStatus.WON),
        ("appointmentscheduled", None),
        ("12345678", None),  # another pipeline's stage: not recognised
        ("", None),
        (None, None),
    ],
)
def test_only_the_default_pipelines_closed_stages_close_leads(stage, status) -> None:
    assert lead_status_of_stage(stage) == status


def test_an_event_without_a_stage_asks_for_the_deal_to_be_read() -> None:
    assert stage_of_event("closedwon") == "closedwon"
    assert stage_of_event("  ") is None
    assert stage_of_event(None) is None


@pytest.mark.parametrize(
    ("property_name", "stage", "superseded", "found", "close_as", "ignored"),
    [
        ("dealstage", "closedwon", False, True, LeadStatus.WON, None),
        ("dealstage", "closedlost", False, True, LeadStatus.LOST, None),
        ("dealstage", "closedwon", True, True, None, IgnoredBecause.SUPERSEDED),
        ("dealstage", "qualifiedtobuy", False, True, None, IgnoredBecause.NOT_CLOSED),
        ("dealstage", None, False, False, None, IgnoredBecause.DEAL_NOT_FOUND),
        ("hubspot_owner_id", None, False, True, None, IgnoredBecause.DEAL_OWNER),
        ("amount", None, False, True, None, IgnoredBecause.OTHER_PROPERTY),
    ],
)
def test_what_a_deal_event_becomes(
    property_name, stage, superseded, found, close_as, ignored
) -> None:
    plan = plan_deal_event(property_name, stage, superseded=superseded, deal_found=found)
    assert (plan.close_as, plan.ignored) == (close_as, ignored)
    assert bool(plan.outcome) == (ignored is not None)


def test_a_deal_owner_change_says_there_is_no_rule_for_it() -> None:
    plan = plan_deal_event("hubspot_owner_id", None, superseded=False)
    assert "no rule" in plan.outcome


def test_a_superseded_owner_event_is_still_about_the_owner() -> None:
    # Supersession is about stage changes; an owner event says why it is ignored on its own.
    assert plan_deal_event("hubspot_owner_id", None, superseded=True).ignored == (
        IgnoredBecause.DEAL_OWNER
    )


@pytest.mark.parametrize(
    ("contacts", "closed", "ignored", "outcome"),
    [
        (2, 2, None, "closed 2 lead(s) as won"),
        (2, 0, IgnoredBecause.NO_OPEN_LEAD, "no open lead of the deal's 2 contact(s)"),
        (0, 0, IgnoredBecause.NO_CONTACTS, "the deal has no contacts"),
    ],
)
def test_how_a_closing_event_ends(contacts, closed, ignored, outcome) -> None:
    plan = closing_outcome(LeadStatus.WON, contacts, closed)
    assert plan.ignored == ignored
    assert plan.outcome.startswith(outcome)


def test_the_pending_check_turns_red_after_fifteen_minutes() -> None:
    assert pending_health(None, NOW) == (True, "no deal event is pending")
    assert pending_health(NOW - timedelta(minutes=15), NOW)[0] is True
    passed, summary = pending_health(NOW - timedelta(minutes=15, seconds=1), NOW)
    assert not passed
    assert "pending for 15 min" in summary


def test_a_windows_start_is_the_cursor_less_the_overlap_or_the_first_look_back() -> None:
    cursor = NOW - timedelta(hours=3)
    assert window_start(cursor, now=NOW) == cursor - DEFAULT_OVERLAP
    assert window_start(None, now=NOW) == NOW - FIRST_RUN_LOOKBACK


def test_a_contact_differs_where_any_of_our_copies_holds_another_value() -> None:
    hubspot = {
        "hubspot_owner_id": "102",
        "call_assigned_to": "",
        "hs_email_optout": "true",
        "email": "pat@customer.example",
    }
    same = contact_changes(hubspot, [("102", None)])
    differs = contact_changes(hubspot, [("102", None), ("101", "101")])
    only_leads = contact_changes(hubspot, [])

    assert (same.owner_differs, same.call_assigned_differs) == (False, False)
    assert (differs.owner_differs, differs.call_assigned_differs) == (True, True)
    assert differs.call_assigned is None  # a cleared property is no one
    assert (only_leads.owner, only_leads.owner_differs) == ("102", False)
    assert same.opted_out is True
    assert contact_changes({"hs_email_optout": "false"}, []).opted_out is False
