"""A lead's status and its owner's open load over real HTTP: ``GET /v1/leads`` in keyset pages,
``PATCH /v1/leads/{lead_id}`` closing or reassigning by hand, and the load released exactly once
whoever closes the lead (the API, the CLI path, a stale release)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import dagster as dg
from sqlalchemy import func, select, update

from morpheus_pipelines.assets.leads.lead_load import stale_lead_load
from morpheus_pipelines.crm.api.server import close_lead
from morpheus_pipelines.crm.models import Activity, HubSpotOutboxRow, Lead
from morpheus_pipelines.crm.repositories.leads import LeadRepository
from morpheus_pipelines.crm.rules.hubspot_outbox import OutboxKind
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.resources.warehouse import WarehouseResource
from tests.support.intake import Tenant, client, create_lead, intake_settings, serving


def _owner_rows(url: str, lead_id: str) -> int:
    with get_session(url) as session:
        return session.scalar(
            select(func.count())
            .select_from(HubSpotOutboxRow)
            .where(
                HubSpotOutboxRow.leadId == uuid.UUID(lead_id),
                HubSpotOutboxRow.kind == OutboxKind.CONTACT_OWNER.value,
            )
        )


def test_a_newcomer_shares_the_next_leads_once_the_veterans_are_closed(
    tenant: Tenant, database_url: str
) -> None:
    veteran = tenant.add_rep("veteran@acme.test", "301")
    newcomer = tenant.add_rep("newcomer@acme.test", "302", active=False)
    tenant.add_pool("all", {veteran: 1, newcomer: 1}, default=True)
    http = client(tenant.key)
    with serving(intake_settings(database_url)) as (base, _):
        old = [create_lead(http, base, tenant, f"old-{i}") for i in range(40)]
        assert tenant.open_leads()[veteran] == 40
        for lead_id in old:
            answer = http.patch(f"{base}/v1/leads/{lead_id}", json={"status": "won"})
            assert answer.status_code == 200, answer.text
            assert answer.json()["status"] == "won"
        # Closing again, however often, gives nothing more back.
        for lead_id in old[:10]:
            again = http.patch(f"{base}/v1/leads/{lead_id}", json={"status": "lost"})
            assert again.status_code == 200 and again.json()["status"] == "won"
        assert tenant.open_leads()[veteran] == 0
    tenant.set_active(newcomer, True)
    with serving(intake_settings(database_url)) as (base, _):
        owners = [
            http.post(f"{base}/v1/leads", json=tenant.lead_body(f"new-{i}")).json()["owner"]
            for i in range(40)
        ]
    shares = [sum(o["sales_rep_id"] == rep for o in owners) for rep in (veteran, newcomer)]
    assert abs(shares[0] - 20) <= 1 and abs(shares[1] - 20) <= 1
    assert tenant.open_leads() == {veteran: shares[0], newcomer: shares[1]}


def test_cli_close_then_patch_and_stale_release_then_close_release_once(
    tenant: Tenant, service
) -> None:
    base, _ = service
    rep = tenant.add_rep("rep@acme.test", "401")
    tenant.add_pool("all", {rep: 1}, default=True)
    http = client(tenant.key)
    by_cli, stale, fresh = (create_lead(http, base, tenant, f"s-{i}") for i in range(3))
    assert tenant.open_leads()[rep] == 3

    assert close_lead(tenant.url, uuid.UUID(by_cli), "lost", datetime.now(UTC)) is True
    assert http.patch(f"{base}/v1/leads/{by_cli}", json={"status": "won"}).status_code == 200
    assert tenant.open_leads()[rep] == 2

    # ``stale`` was created long ago and nothing happened since; ``fresh`` has its FORM now.
    now = datetime.now(UTC)
    with get_session(tenant.url) as session:
        session.execute(
            update(Lead)
            .where(Lead.id == uuid.UUID(stale))
            .values(createdAt=now - timedelta(days=60))
        )
        session.execute(
            update(Activity)
            .where(Activity.leadId == uuid.UUID(stale))
            .values(occurredAt=now - timedelta(days=60))
        )
    with get_session(tenant.url) as session:
        released = LeadRepository().release_stale(
            session, untouched_since=now - timedelta(days=30), at=now
        )
    assert released == 1
    assert tenant.open_leads()[rep] == 1
    with get_session(tenant.url) as session:
        again = LeadRepository().release_stale(
            session, untouched_since=now - timedelta(days=30), at=now
        )
    assert again == 0
    shown = http.get(f"{base}/v1/leads/{stale}").json()
    assert shown["status"] == "open" and shown["load_released_at"] is not None

    closed = http.patch(f"{base}/v1/leads/{stale}", json={"status": "closed"})
    assert closed.json()["status"] == "closed"
    assert tenant.open_leads()[rep] == 1  # the stale release was the one
    assert http.get(f"{base}/v1/leads/{fresh}").json()["load_released_at"] is None


def test_reassigning_by_hand_moves_the_load_and_queues_one_owner_write(
    tenant: Tenant, service
) -> None:
    base, _ = service
    first = tenant.add_rep("first@acme.test", "501")
    chosen = tenant.add_rep("chosen@acme.test", "502")
    tenant.add_pool("only-first", {first: 1}, default=True)
    http = client(tenant.key)
    lead_id = create_lead(http, base, tenant, "s-1")
    assert tenant.open_leads() == {first: 1, chosen: 0}

    for _ in range(3):
        answer = http.patch(f"{base}/v1/leads/{lead_id}", json={"owner": {"sales_rep_id": chosen}})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["owner"] == {"sales_rep_id": chosen, "hubspot_owner_id": "502"}
        assert body["owner_state"] == "assigned" and body["owner_set_by_hand"] is True
    assert tenant.open_leads() == {first: 0, chosen: 1}
    assert _owner_rows(tenant.url, lead_id) == 1

    # Reassigned and closed in one body: the chosen owner's load goes down once.
    both = http.patch(
        f"{base}/v1/leads/{lead_id}", json={"owner": {"sales_rep_id": first}, "status": "won"}
    )
    assert both.json()["owner"]["sales_rep_id"] == first and both.json()["status"] == "won"
    assert tenant.open_leads() == {first: 0, chosen: 0}
    # A closed lead handed back gives no load to anyone.
    http.patch(f"{base}/v1/leads/{lead_id}", json={"owner": {"sales_rep_id": chosen}})
    assert tenant.open_leads() == {first: 0, chosen: 0}


def test_bad_patches_are_refused_naming_the_field_and_change_nothing(
    tenant: Tenant, database_url: str, service
) -> None:
    base, _ = service
    rep = tenant.add_rep("rep@acme.test", "601")
    gone = tenant.add_rep("gone@acme.test", "602", active=False)
    no_owner = tenant.add_rep("nobody@acme.test", None)
    tenant.add_pool("all", {rep: 1}, default=True)
    other = Tenant(database_url)
    theirs_rep = other.add_rep("theirs@other.test", "603")
    other.add_pool("all", {theirs_rep: 1}, default=True)
    http = client(tenant.key)
    lead_id = create_lead(http, base, tenant, "s-1")
    their_lead = create_lead(client(other.key), base, other, "t-1")
    url = f"{base}/v1/leads/{lead_id}"

    for rep_id in (gone, theirs_rep, no_owner, 999_999):
        answer = http.patch(url, json={"owner": {"sales_rep_id": rep_id}})
        assert answer.status_code == 422
        assert answer.json()["fields"][0]["field"] == "owner.sales_rep_id"
    unknown_status = http.patch(url, json={"status": "maybe"})
    assert unknown_status.status_code == 422
    assert unknown_status.json()["fields"][0]["field"] == "status"
    assert http.patch(url, json={}).status_code == 422
    extra = http.patch(url, json={"status": "won", "colour": "red"})
    assert extra.status_code == 422 and extra.json()["fields"][0]["field"] == "colour"
    assert http.patch(url, data=b"[1]").status_code == 422

    foreign = http.patch(f"{base}/v1/leads/{their_lead}", json={"status": "won"})
    missing = http.patch(f"{base}/v1/leads/{uuid.uuid4()}", json={"status": "won"})
    assert foreign.status_code == missing.status_code == 403
    assert foreign.json() == missing.json()

    shown = http.get(url).json()
    assert shown["status"] == "open" and shown["owner"]["sales_rep_id"] == rep
    assert tenant.open_leads()[rep] == 1 and other.open_leads()[theirs_rep] == 1
    assert client(other.key).get(f"{base}/v1/leads/{their_lead}").json()["status"] == "open"
    assert _owner_rows(tenant.url, lead_id) == 0


def test_the_list_pages_newest_first_every_lead_once_and_filters(
    tenant: Tenant, database_url: str, service
) -> None:
    base, _ = service
    rep = tenant.add_rep("rep@acme.test", "701")
    tenant.add_pool("all", {rep: 1}, default=True)
    other = Tenant(database_url)
    other.add_pool("all", {other.add_rep("o@other.test", "702"): 1}, default=True)
    http = client(tenant.key)
    made = [create_lead(http, base, tenant, f"s-{i}") for i in range(7)]
    create_lead(client(other.key), base, other, "theirs")
    http.patch(f"{base}/v1/leads/{made[2]}", json={"status": "lost"})

    seen, cursor = [], None
    while True:
        params = {"limit": 3} | ({"cursor": cursor} if cursor else {})
        page = http.get(f"{base}/v1/leads", params=params)
        assert page.status_code == 200, page.text
        seen += [item["lead_id"] for item in page.json()["items"]]
        cursor = page.json()["next_cursor"]
        if cursor is None:
            break
    assert seen == list(reversed(made))
    item = http.get(f"{base}/v1/leads", params={"limit": 1}).json()["items"][0]
    assert set(item) >= {
        "lead_id",
        "status",
        "owner",
        "owner_state",
        "pool",
        "source",
        "source_submission_id",
        "contact",
        "hubspot_contact_id",
        "created_at",
    }
    assert item == http.get(f"{base}/v1/leads/{item['lead_id']}").json()

    def ids(**params: str) -> list[str]:
        return [i["lead_id"] for i in http.get(f"{base}/v1/leads", params=params).json()["items"]]

    assert ids(status="lost") == [made[2]]
    assert ids(source_submission_id="s-4") == [made[4]]
    assert ids(source="web-form", owner_state="assigned") == list(reversed(made))
    assert ids(owner_state="waiting") == ids(source="elsewhere") == []

    for params, field in (
        ({"limit": "0"}, "limit"),
        ({"limit": "201"}, "limit"),
        ({"limit": "x"}, "limit"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"status": "maybe"}, "status"),
        ({"owner_state": "lost"}, "owner_state"),
        ({"colour": "red"}, "colour"),
        ({"source": "web\x00form"}, "source"),  # PostgreSQL text cannot hold NUL
        ({"source_submission_id": "\x00"}, "source_submission_id"),
    ):
        refused = http.get(f"{base}/v1/leads", params=params)
        assert refused.status_code == 422, params
        assert refused.json()["fields"][0]["field"] == field


def test_the_daily_asset_releases_stale_load_once_and_zero_days_means_never(
    tenant: Tenant, service, monkeypatch
) -> None:
    base, _ = service
    rep = tenant.add_rep("rep@acme.test", "801")
    tenant.add_pool("all", {rep: 1}, default=True)
    http = client(tenant.key)
    stale, touched = (create_lead(http, base, tenant, f"s-{i}") for i in range(2))
    now = datetime.now(UTC)
    with get_session(tenant.url) as session:
        session.execute(
            update(Lead)
            .where(Lead.id.in_([uuid.UUID(stale), uuid.UUID(touched)]))
            .values(createdAt=now - timedelta(days=45))
        )
        session.execute(  # only ``stale``'s FORM is old; ``touched`` had an activity today
            update(Activity)
            .where(Activity.leadId == uuid.UUID(stale))
            .values(occurredAt=now - timedelta(days=45))
        )
    warehouse = WarehouseResource(database_url=tenant.url)

    def run() -> dict:
        result = dg.materialize([stale_lead_load], resources={"warehouse": warehouse})
        [materialisation] = result.asset_materializations_for_node("stale_lead_load")
        return {k: v.value for k, v in materialisation.metadata.items()}

    monkeypatch.setenv("MORPHEUS_LEAD_STALE_DAYS", "0")
    assert run() == {"released": 0, "stale_days": 0}
    assert tenant.open_leads()[rep] == 2
    monkeypatch.delenv("MORPHEUS_LEAD_STALE_DAYS")  # the default, 30 days
    assert run()["released"] == 1 and tenant.open_leads()[rep] == 1
    assert run()["released"] == 0 and tenant.open_leads()[rep] == 1
    assert http.get(f"{base}/v1/leads/{stale}").json()["status"] == "open"
    assert http.get(f"{base}/v1/leads/{touched}").json()["load_released_at"] is None
