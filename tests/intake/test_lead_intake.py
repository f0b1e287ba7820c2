"""``POST /v1/leads``: an owner in the same transaction, pools and rules, load balance,
fallbacks, the timeline's form activity, the cache (docs/leads.md)."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime

import psycopg
from sqlalchemy import select, text

from morpheus_pipelines.crm.api.dependencies import LEAD_STATEMENT_APPLICATION, Intake
from morpheus_pipelines.crm.models import Activity, ActivityType, HubSpotOutboxRow, Lead
from morpheus_pipelines.crm.repositories.leads import CLAIM_AND_INSERT_SQL, LeadRepository
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import libpq_url
from tests.support.intake import Tenant, client, freeze_owner_cache, intake_settings


def test_a_lead_gets_an_owner_before_the_answer(tenant: Tenant, service) -> None:
    base, _ = service
    rep = tenant.add_rep("ana@acme.test", "101")

    answer = client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body())

    assert answer.status_code == 201
    body = answer.json()
    assert body["owner"] == {"sales_rep_id": rep, "hubspot_owner_id": "101"}
    assert body["pool"] == "default" and body["owner_is_fallback"] is False
    assert body["owner_state"] == "assigned"
    with get_session(tenant.url) as session:
        lead = session.get(Lead, uuid.UUID(body["lead_id"]))
        [form] = session.scalars(select(Activity).where(Activity.leadId == lead.id)).all()
    assert (lead.ownerSalesRepId, lead.ownerHubspotOwnerId) == (rep, "101")
    assert (lead.email, lead.phone) == ("buyer@example.com", "+6591234567")
    assert form.type is ActivityType.FORM and form.direction == "inbound"
    assert tenant.open_leads()[rep] == 1
    shown = client(tenant.key).get(f"{base}/v1/leads/{body['lead_id']}").json()
    assert shown["owner"] == body["owner"] and shown["contact"]["phone"] == "+6591234567"


def test_open_load_relative_to_weight_decides_and_ties_rotate(tenant: Tenant, service) -> None:
    base, _ = service
    heavy = tenant.add_rep("heavy@acme.test", "201")
    light = tenant.add_rep("light@acme.test", "202")
    other = tenant.add_rep("other@acme.test", "203")
    tenant.add_pool("all", {heavy: 2, light: 1, other: 1}, default=True)
    session = client(tenant.key)

    owners = [
        session.post(f"{base}/v1/leads", json=tenant.lead_body(f"s-{i}")).json()["owner"]
        for i in range(40)
    ]

    load = tenant.open_leads()
    assert (load[heavy], load[light], load[other]) == (20, 10, 10)
    first_four = [o["hubspot_owner_id"] for o in owners[:4]]
    assert sorted(first_four) == ["201", "201", "202", "203"]  # nobody twice before a turn


def test_the_most_specific_rule_picks_the_pool(tenant: Tenant, service) -> None:
    base, _ = service
    a, b, c = (tenant.add_rep(f"{n}@acme.test", o) for n, o in (("a", "1"), ("b", "2"), ("c", "3")))
    tenant.add_pool("everyone", {a: 1}, default=True)
    tenant.add_pool("web", {b: 1}, rules=[{"source": "web-form"}])
    tenant.add_pool("spring", {c: 1}, rules=[{"campaignId": "spring"}])
    session = client(tenant.key)

    def pool(**body) -> str:
        return session.post(f"{base}/v1/leads", json=tenant.lead_body(**body)).json()["pool"]

    assert pool(submission="1") == "web"
    assert pool(submission="2", campaign_ids=["spring"]) == "spring"  # campaign beats source
    assert pool(submission="3", source="ads", campaign_ids=["unknown"]) == "everyone"


def test_the_owner_ladder_pool_fallback_then_subscription_fallback_then_waiting(
    tenant: Tenant, service
) -> None:
    base, app = service
    gone = tenant.add_rep("gone@acme.test", "301", active=False)
    backup = tenant.add_rep("backup@acme.test", "302")
    last = tenant.add_rep("last@acme.test", "303")
    tenant.add_pool("night", {gone: 1}, default=True, fallback=backup)
    tenant.set_subscription_fallback(last)
    session = client(tenant.key)

    first = session.post(f"{base}/v1/leads", json=tenant.lead_body("n-1")).json()
    assert first["owner"]["hubspot_owner_id"] == "302" and first["owner_state"] == "fallback"

    refreshes = freeze_owner_cache(app)  # what the cache holds no longer decides
    tenant.set_active(backup, False)
    second = session.post(f"{base}/v1/leads", json=tenant.lead_body("n-2")).json()
    assert second["owner"] == {"sales_rep_id": last, "hubspot_owner_id": "303"}
    assert second["owner_state"] == "fallback" and second["owner_is_fallback"] is True

    tenant.set_active(last, False)
    third = session.post(f"{base}/v1/leads", json=tenant.lead_body("n-3"))
    assert third.status_code == 201
    assert third.json()["owner"] is None and third.json()["owner_state"] == "waiting"
    assert app.state.directory.refreshes == refreshes
    with get_session(tenant.url) as db:
        lead = db.get(Lead, uuid.UUID(third.json()["lead_id"]))
        queued = db.scalars(select(HubSpotOutboxRow.kind).where(HubSpotOutboxRow.leadId == lead.id))
        assert (lead.ownerSalesRepId, lead.ownerHubspotOwnerId) == (None, None)
        assert list(queued) == ["contact"]  # the contact is still created, without an owner
    shown = session.get(f"{base}/v1/leads/{third.json()['lead_id']}").json()
    assert shown["owner"] is None and shown["owner_state"] == "waiting"


def test_closing_a_fallback_lead_gives_no_load_back(tenant: Tenant, service) -> None:
    # A fallback lead is not charged to its rep, so closing it must not lower the rep's load.
    base, _ = service
    gone = tenant.add_rep("gone@acme.test", "401", active=False)
    backup = tenant.add_rep("backup@acme.test", "402")
    tenant.add_pool("night", {gone: 1}, default=True, fallback=backup)
    tenant.add_pool("day", {backup: 1}, rules=[{"source": "ads"}])
    session = client(tenant.key)
    session.post(f"{base}/v1/leads", json=tenant.lead_body("charged", source="ads"))
    fallback = session.post(f"{base}/v1/leads", json=tenant.lead_body("fallback")).json()
    assert fallback["owner_is_fallback"] is True and tenant.open_leads()[backup] == 1

    with get_session(tenant.url) as db:
        assert LeadRepository().close(
            db, uuid.UUID(fallback["lead_id"]), status="lost", at=datetime.now(UTC)
        )

    assert tenant.open_leads()[backup] == 1  # the lead it was charged for is still open


def test_a_deactivated_rep_gets_no_further_lead_even_before_the_cache_refreshes(
    tenant: Tenant, service
) -> None:
    base, app = service
    ana = tenant.add_rep("ana@acme.test", "101")
    ben = tenant.add_rep("ben@acme.test", "102")
    session = client(tenant.key)
    session.post(f"{base}/v1/leads", json=tenant.lead_body("warm-up"))
    refreshes = freeze_owner_cache(app)  # the cache still lists ana (no refresh, no TTL yet)
    tenant.set_active(ana, False)

    owners = {
        session.post(f"{base}/v1/leads", json=tenant.lead_body(f"d-{i}")).json()["owner"][
            "sales_rep_id"
        ]
        for i in range(6)
    }
    assert owners == {ben}
    assert app.state.directory.refreshes == refreshes


def test_a_new_member_is_seen_through_listen_notify(tenant: Tenant, service) -> None:
    base, app = service
    ana = tenant.add_rep("ana@acme.test", "101")
    session = client(tenant.key)
    session.post(f"{base}/v1/leads", json=tenant.lead_body("before"))
    heard = app.state.listener.notifications

    ben = tenant.add_rep("ben@acme.test", "102")  # the trigger notifies the service

    deadline = time.monotonic() + 5
    while app.state.listener.notifications == heard:  # the notification, not the TTL
        assert time.monotonic() < deadline, "no NOTIFY reached the service"
        time.sleep(0.01)
    owner = session.post(f"{base}/v1/leads", json=tenant.lead_body("after")).json()["owner"]
    assert owner["sales_rep_id"] == ben != ana  # the newcomer has the least load


def test_no_rep_at_all_leaves_the_lead_waiting_never_with_the_ai_owner(
    tenant: Tenant, service
) -> None:
    base, _ = service
    answer = client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body())
    assert answer.status_code == 201
    assert answer.json()["owner"] is None and answer.json()["owner_state"] == "waiting"
    with get_session(tenant.url) as db:
        owners = db.scalars(
            select(Lead.ownerHubspotOwnerId).where(Lead.subscriptionId == tenant.subscription_id)
        )
        assert DIALER_FALLBACK_HUBSPOT_OWNER_ID not in list(owners)


def test_an_acknowledged_lead_is_flushed_to_the_wal_before_the_answer(
    database_url: str, service
) -> None:
    # The embedded server runs with synchronous_commit=off for batch work; intake must not.
    _, app = service
    with psycopg.connect(libpq_url(database_url)) as plain:
        server_default = plain.execute("SHOW synchronous_commit").fetchone()[0]
    with app.state.engine.connect() as connection:
        assert connection.execute(text("SHOW synchronous_commit")).scalar() == "on"
    assert server_default == "off"  # so the line above shows the service's own setting


def test_the_usual_lead_is_stored_from_the_event_loop(tenant: Tenant, service) -> None:
    """Once the owner cache holds the subscription, a lead with a free member is one statement
    on the event loop's own connections, not a worker thread's session: the server shows
    those connections, their last statement the lead's."""
    base, _ = service
    rep = tenant.add_rep("ana@acme.test", "101")
    session = client(tenant.key)

    codes = [
        session.post(f"{base}/v1/leads", json=tenant.lead_body(f"s-{i}")).status_code
        for i in range(5)
    ]

    assert codes == [201] * 5
    assert tenant.open_leads()[rep] == 5
    with psycopg.connect(libpq_url(tenant.url)) as plain:
        last = plain.execute(
            "SELECT query FROM pg_stat_activity WHERE application_name = %s",
            (LEAD_STATEMENT_APPLICATION,),
        ).fetchall()
    # The server shows the statement with its parameters numbered: compare up to the first.
    claim = CLAIM_AND_INSERT_SQL.split("%(")[0]
    assert last and all(query.startswith(claim) for (query,) in last)


def test_the_usual_lead_s_connections_wait_for_the_flush(database_url: str) -> None:
    """The intake's lead connections, on the event loop, commit as durably as its
    transactions do."""
    intake = Intake(intake_settings(database_url))

    async def shown() -> str:
        try:
            return (await intake.lead_connections.fetch_one("SHOW synchronous_commit", ()))[0]
        finally:
            await intake.lead_connections.close()
            intake.engine.dispose()

    with psycopg.connect(libpq_url(database_url)) as plain:
        server_default = plain.execute("SHOW synchronous_commit").fetchone()[0]
    assert asyncio.run(shown()) == "on"
    assert server_default == "off"  # so the line above shows the connections' own setting
