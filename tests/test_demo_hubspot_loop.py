"""The CRM loop of ``morpheus demo``: the demo's leads, posted to the intake API over real
HTTP, are written to the emulated HubSpot by the outbox with their owners, and HubSpot's
signed webhook unsubscribing the first one stops the email automation that would have nudged
it (the real warehouse, the emulator over real HTTP)."""

from __future__ import annotations

from functools import partial

from morpheus_pipelines.crm.steps.hubspot_outbox import drain_outbox
from morpheus_pipelines.crm.steps.sales_rep_mirror import mirror_owners
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.demo.hubspot_loop import (
    DEMO_CLIENT_SECRET,
    connect_portal,
    hubspot_lines,
    opt_out_by_webhook,
)
from morpheus_pipelines.devtools.demo.intake import post_demo_leads
from morpheus_pipelines.devtools.demo.ownership import (
    DEMO_SUBSCRIPTION_ID,
    prepare_ownership_demo,
    with_ownership_portal,
)
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.devtools.emulators.hubspot import build_data
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient
from tests.test_demo_ownership import ENTERED, OWNERS, TOKEN


def test_the_demo_leads_reach_hubspot_and_an_unsubscribe_stops_their_automation(
    database_url: str,
) -> None:
    portal = with_ownership_portal(build_data([], token=TOKEN), OWNERS, entered_at=ENTERED)
    prepare_ownership_demo(database_url, OWNERS)
    connect_portal(database_url, DEMO_SUBSCRIPTION_ID)
    seen: dict[str, list[str]] = {}

    with HubSpotEmulator(portal) as hubspot:
        with HubSpotClient(hubspot.base_url, TOKEN, retry_count=1) as client:
            # The demo's reps become assignable once the mirror has seen their owners.
            assert mirror_owners(
                client, partial(get_session, database_url), DEMO_SUBSCRIPTION_ID
            ).succeeded

        def crm_loop(base: str, lead_ids: dict[str, str]) -> tuple[list[str], set[str]]:
            with HubSpotClient(hubspot.base_url, TOKEN, retry_count=1) as client:
                report = drain_outbox(
                    partial(get_session, database_url), client, DEMO_SUBSCRIPTION_ID
                )
            assert report.written["contact"] == len(lead_ids)
            shown, contacts = hubspot_lines(database_url, hubspot, lead_ids)
            seen["hubspot"] = shown
            seen["webhook"] = opt_out_by_webhook(base, contacts["demo-lead-1"], "demo-lead-1")
            return shown + seen["webhook"], {"demo-lead-1"}

        lines = post_demo_leads(
            database_url,
            DEMO_SUBSCRIPTION_ID,
            crm_loop=crm_loop,
            hubspot_client_secret=DEMO_CLIENT_SECRET,
        )

    for line in seen["hubspot"][:3]:  # each lead owned in HubSpot by the lead's owner
        owner, lead_owner = line.split(" owner ")[1].split()[0], line.rsplit(": ", 1)[1][:-1]
        assert owner == lead_owner, line
    assert "→ 200 1 applied" in seen["webhook"][0]
    verdicts = {line.split()[0]: line for line in lines if "nudged" in line}
    assert "not nudged" in verdicts["demo-lead-1"]
    assert "unsubscribed in HubSpot" in verdicts["demo-lead-1"]
    assert " nudged " in verdicts["demo-lead-2"]  # the same rule still nudges the others
    # Messages leave: the WhatsApp nudges and the template queued for demo-lead-2 go out through
    # the Cloud API emulator, and Meta's status webhooks mark them delivered; email waits.
    assert any("an approved template instead: 202 queued" in line for line in lines), lines
    sent = [line for line in lines if " whatsapp " in line]
    assert any("follow_up_1" in line for line in sent), lines  # the template queued by hand
    assert sent and all("delivered" in line and "Meta's webhook" in line for line in sent), lines
    assert any(" email " in line and "MORPHEUS_SMTP_URL" in line for line in lines), lines
