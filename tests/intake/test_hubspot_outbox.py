"""The HubSpot outbox for leads (docs/hubspot-outbox.md): a lead posted to ``morpheus serve``
over real HTTP becomes a HubSpot contact owned by its owner, written by the drain to the
HubSpot emulator over real HTTP, on the real warehouse; and what HubSpot's faults do to it."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import dagster as dg
import pytest
from sqlalchemy import func, select, update

from morpheus_pipelines.assets.hubspot.outbox import NOTHING_DEAD_CHECK, hubspot_outbox_delivery
from morpheus_pipelines.crm.models import Activity, Contact, HubSpotOutboxRow, Lead
from morpheus_pipelines.crm.repositories.hubspot_outbox import LEASE
from morpheus_pipelines.crm.rules.hubspot_outbox import MAX_ATTEMPTS, OutboxKind
from morpheus_pipelines.crm.steps.hubspot_outbox import DrainReport, drain_outbox, outbox_backlog
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from tests.support.intake import Clock, Tenant, client

TOKEN = "pat-outbox-test"


@pytest.fixture
def hubspot() -> Iterator[HubSpotEmulator]:
    with HubSpotEmulator({"token": TOKEN}) as emulator:
        yield emulator


@pytest.fixture
def seller(tenant: Tenant) -> str:
    rep = tenant.add_rep("rep@acme.example", "101")
    tenant.add_pool("default", {rep: 1}, default=True)
    return "101"


def _drain(tenant: Tenant, hubspot: HubSpotEmulator, clock: Clock | None = None) -> DrainReport:
    with HubSpotClient(
        hubspot.base_url,
        TOKEN,
        retry_count=1,
        read_timeout=2.0,
        max_backoff=0.01,
        requests_per_10s=10_000,
        sleep=lambda _: None,
    ) as hubspot_client:
        return drain_outbox(
            partial(get_session, tenant.url),
            hubspot_client,
            tenant.subscription_id,
            **({"now": clock} if clock else {}),
        )


def _after_now() -> Clock:
    """A clock the test moves, just past every row written so far."""
    return Clock(datetime.now(UTC) + timedelta(seconds=1))


def _post(service: tuple[str, Any], tenant: Tenant, submission: str, **contact: Any) -> str:
    body = tenant.lead_body(submission)
    if contact:
        body["contact"] = contact
    answer = client(tenant.key).post(f"{service[0]}/v1/leads", json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()["lead_id"]


def _rows(tenant: Tenant) -> list[HubSpotOutboxRow]:
    with get_session(tenant.url) as session:
        return list(
            session.scalars(
                select(HubSpotOutboxRow)
                .where(HubSpotOutboxRow.subscriptionId == tenant.subscription_id)
                .order_by(HubSpotOutboxRow.id)
            )
        )


def _lead(tenant: Tenant, lead_id: str) -> Lead:
    with get_session(tenant.url) as session:
        return session.get(Lead, uuid.UUID(lead_id))


def _contacts_with(hubspot: HubSpotEmulator, name: str, value: str) -> list[str]:
    return [
        contact_id
        for contact_id, contact in hubspot.contacts().items()
        if (contact["properties"].get(name) or "").lower() == value.lower()
    ]


def test_a_new_lead_becomes_a_hubspot_contact_owned_by_its_owner(
    service, tenant: Tenant, seller: str, hubspot: HubSpotEmulator
) -> None:
    lead_id = _post(service, tenant, "s-1")
    [row] = _rows(tenant)
    assert (row.kind, row.status, row.intentKey) == (
        "contact",
        "pending",
        f"lead:{lead_id}:contact",
    )

    report = _drain(tenant, hubspot)

    assert report.written == {"contact": 1}
    [contact_id] = _contacts_with(hubspot, "email", "buyer@example.com")
    properties = hubspot.contact(contact_id)["properties"]
    assert properties["hubspot_owner_id"] == seller
    assert properties["phone"] == "+6591234567"
    assert _lead(tenant, lead_id).hubspotContactId == contact_id
    [done] = _rows(tenant)
    assert (done.status, done.hubspotObjectId, done.attempts) == ("done", contact_id, 0)
    with get_session(tenant.url) as session:  # one person, one timeline
        local = session.scalars(
            select(Contact).where(
                Contact.subscriptionId == tenant.subscription_id,
                Contact.hubspotContactId == contact_id,
            )
        ).one()
        form = session.scalars(select(Activity).where(Activity.leadId == lead_id)).one()
        assert form.contactId == local.id
        assert local.hubspotOwnerId == seller


def test_a_drained_outbox_sends_nothing_more(
    service, tenant: Tenant, seller: str, hubspot: HubSpotEmulator
) -> None:
    _post(service, tenant, "s-1")
    _drain(tenant, hubspot)
    again = _drain(tenant, hubspot)
    assert (sum(again.written.values()), again.requests) == (0, 0)
    assert len(hubspot.contacts()) == 1


def test_a_replayed_delivery_queues_one_contact(
    service, tenant: Tenant, seller: str, hubspot: HubSpotEmulator
) -> None:
    first = _post(service, tenant, "s-1")
    answer = client(tenant.key).post(f"{service[0]}/v1/leads", json=tenant.lead_body("s-1"))
    assert answer.status_code == 200 and answer.json()["lead_id"] == first
    assert len(_rows(tenant)) == 1


def test_two_leads_of_one_person_are_one_contact(
    service, tenant: Tenant, seller: str, hubspot: HubSpotEmulator
) -> None:
    leads = [_post(service, tenant, f"s-{n}") for n in range(3)]
    report = _drain(tenant, hubspot)
    assert report.written == {"contact": 3}
    [contact_id] = _contacts_with(hubspot, "email", "buyer@example.com")
    assert {_lead(tenant, lead).hubspotContactId for lead in leads} == {contact_id}
    assert hubspot.log.statuses("contacts_batch_upsert") == [200]  # one batch, one input


def test_a_phone_only_lead_whose_answer_was_lost_is_one_contact(
    service, tenant: Tenant, seller: str, hubspot: HubSpotEmulator
) -> None:
    lead_id = _post(service, tenant, "s-1", phone="+65 9123 4567")
    hubspot.lose_answer("contacts_batch_upsert")  # applied, then the connection drops

    report = _drain(tenant, hubspot)

    assert report.written == {"contact": 1}, [r.lastError for r in _rows(tenant)]
    assert len(hubspot.log.statuses("contacts_batch_upsert")) == 2  # sent twice
    [contact_id] = _contacts_with(hubspot, "phone", "+6591234567")  # written once
    assert hubspot.contact(contact_id)["properties"]["morpheus_lead_key"] == f"lead:{lead_id}"
    assert _lead(tenant, lead_id).hubspotContactId == contact_id


def test_a_partial_failure_leaves_the_refused_row_pending_with_the_reason(
    service, tenant: Tenant, seller: str, hubspot: HubSpotEmulator
) -> None:
    emails = [f"p{n}@buyer.example" for n in range(3)]
    leads = [_post(service, tenant, f"s-{n}", email=e) for n, e in enumerate(emails)]
    clock = _after_now()
    hubspot.fail_inputs("contacts_batch_upsert", ids=[emails[1]])

    report = _drain(tenant, hubspot, clock)

    assert (report.written, report.failed) == ({"contact": 2}, {"contact": 1})
    by_lead = {str(row.leadId): row for row in _rows(tenant)}
    refused = by_lead[leads[1]]
    assert (refused.status, refused.attempts) == ("pending", 1)
    assert refused.lastError and refused.nextAttemptAt > clock.now
    assert _contacts_with(hubspot, "email", emails[1]) == []
    assert {by_lead[leads[0]].status, by_lead[leads[2]].status} == {"done"}

    assert sum(_drain(tenant, hubspot, clock).written.values()) == 0  # not due yet
    clock.advance(minutes=1)
    assert _drain(tenant, hubspot, clock).written == {"contact": 1}
    assert len(_contacts_with(hubspot, "email", emails[1])) == 1


def test_hubspot_down_for_an_hour_loses_nothing_and_writes_nothing_twice(
    service, tenant: Tenant, seller: str, hubspot: HubSpotEmulator
) -> None:
    _drain(tenant, hubspot)  # the portal is prepared (its key properties) before the outage
    emails = [f"p{n}@buyer.example" for n in range(150)]
    for n, email in enumerate(emails):
        _post(service, tenant, f"s-{n}", email=email)
    clock = _after_now()
    outage = hubspot.fail(503, times=None)

    first = _drain(tenant, hubspot, clock)

    assert first.stopped and first.failed == {"contact": 100}
    rows = _rows(tenant)
    assert sorted(row.attempts for row in rows) == [0] * 50 + [1] * 100  # one batch tried
    _post(service, tenant, "during-outage", email="late@buyer.example")  # intake answers
    for _ in range(12):  # a drain every five minutes for an hour
        clock.advance(minutes=5)
        assert sum(_drain(tenant, hubspot, clock).written.values()) == 0
    assert not [row for row in _rows(tenant) if row.status == "dead"]

    hubspot.faults.remove(outage)
    for _ in range(30):
        clock.advance(minutes=10)
        _drain(tenant, hubspot, clock)
        if all(row.status == "done" for row in _rows(tenant)):
            break
    assert {row.status for row in _rows(tenant)} == {"done"}
    for email in [*emails, "late@buyer.example"]:
        assert len(_contacts_with(hubspot, "email", email)) == 1


def test_a_row_hubspot_keeps_refusing_is_dead_red_on_the_check_and_requeued_by_a_person(
    service, tenant: Tenant, seller: str, hubspot: HubSpotEmulator, database_url: str
) -> None:
    lead_id = _post(service, tenant, "s-1", phone="+65 9123 4567")
    clock = _after_now()
    refusal = hubspot.fail_inputs("contacts_batch_upsert", times=None)  # a 207 every time
    for _ in range(MAX_ATTEMPTS):
        _drain(tenant, hubspot, clock)
        clock.advance(hours=2)
    [row] = _rows(tenant)
    assert (row.status, row.attempts) == ("dead", MAX_ATTEMPTS)
    assert row.lastError
    assert sum(_drain(tenant, hubspot, clock).failed.values()) == 0  # dead is not retried

    result = dg.materialize(
        [hubspot_outbox_delivery],
        resources={
            "hubspot": HubSpotResource(base_url=hubspot.base_url, private_app_token=TOKEN),
            "ownership": OwnershipResource(subscription_id=str(tenant.subscription_id)),
            "warehouse": WarehouseResource(database_url=database_url),
        },
        raise_on_error=False,
    )
    [check] = result.get_asset_check_evaluations()
    assert check.check_name == NOTHING_DEAD_CHECK and not check.passed
    assert check.metadata["dead"].value == 1

    hubspot.faults.remove(refusal)
    with get_session(tenant.url) as session:
        assert (
            CrmStore(session).outbox.requeue_dead(session, tenant.subscription_id, now=clock.now)
            == 1
        )
    assert _drain(tenant, hubspot, clock).written == {"contact": 1}
    assert _lead(tenant, lead_id).hubspotContactId is not None


def test_a_lead_rolled_back_queues_nothing(tenant: Tenant) -> None:
    with pytest.raises(RuntimeError), get_session(tenant.url) as session:
        CrmStore(session).outbox.enqueue(
            session, tenant.subscription_id, OutboxKind.CONTACT, "lead:x:contact"
        )
        raise RuntimeError("the decision failed")
    assert _rows(tenant) == []


def test_a_claimed_row_is_leased_to_one_drain_until_its_lease_runs_out(
    service, tenant: Tenant, seller: str
) -> None:
    _post(service, tenant, "s-1")
    now = datetime.now(UTC) + timedelta(seconds=1)

    def claim(at: datetime) -> list[int]:
        with get_session(tenant.url) as session:
            entries = CrmStore(session).outbox.claim_due(
                session, tenant.subscription_id, OutboxKind.CONTACT, now=at, limit=10
            )
            return [entry.id for entry in entries]

    first = claim(now)
    assert len(first) == 1
    assert claim(now) == []  # a second drain does not take it
    assert claim(now + LEASE + timedelta(seconds=1)) == first  # a dead drain's rows come back


def test_concurrent_drains_send_each_row_once(
    service, tenant: Tenant, seller: str, hubspot: HubSpotEmulator
) -> None:
    for n in range(300):
        _post(service, tenant, f"s-{n}", email=f"p{n}@buyer.example")
    reports: list[DrainReport] = []
    drains = [
        threading.Thread(target=lambda: reports.append(_drain(tenant, hubspot))) for _ in range(3)
    ]
    for drain in drains:
        drain.start()
    for drain in drains:
        drain.join()
    assert sum(sum(r.written.values()) for r in reports) == 300
    assert len(hubspot.log.statuses("contacts_batch_upsert")) == 3  # the minimum: 300 / 100
    assert len(hubspot.contacts()) == 300


def test_the_backlog_counts_what_waits(
    service, tenant: Tenant, seller: str, hubspot: HubSpotEmulator
) -> None:
    _post(service, tenant, "s-1")
    _post(service, tenant, "s-2", email="other@buyer.example")
    with get_session(tenant.url) as session:  # one of them is for later
        session.execute(
            update(HubSpotOutboxRow)
            .where(HubSpotOutboxRow.id == select(func.min(HubSpotOutboxRow.id)).scalar_subquery())
            .values(nextAttemptAt=datetime.now(UTC) + timedelta(hours=1))
        )
    backlog = outbox_backlog(partial(get_session, tenant.url), tenant.subscription_id)
    assert (backlog.pending, backlog.due, backlog.dead) == (2, 1, 0)
    _drain(tenant, hubspot)
    after = outbox_backlog(partial(get_session, tenant.url), tenant.subscription_id)
    assert (after.pending, after.done_since) == (1, 1)


def test_a_new_owner_of_a_lead_waits_for_its_contact_then_reaches_hubspot(
    service, tenant: Tenant, seller: str, hubspot: HubSpotEmulator
) -> None:
    lead_id = _post(service, tenant, "s-1")
    with get_session(tenant.url) as session:  # decided before the contact was written
        CrmStore(session).outbox.enqueue(
            session,
            tenant.subscription_id,
            OutboxKind.CONTACT_OWNER,
            f"lead:{lead_id}:owner:202",
            {"hubspot_owner_id": "202"},
            lead_id=uuid.UUID(lead_id),
        )
    with get_session(tenant.url) as session:  # its contact is not due yet: the owner waits
        session.execute(
            update(HubSpotOutboxRow)
            .where(HubSpotOutboxRow.kind == "contact")
            .values(nextAttemptAt=datetime.now(UTC) + timedelta(minutes=30))
        )
    clock = _after_now()
    first = _drain(tenant, hubspot, clock)
    assert (first.postponed, sum(first.failed.values())) == ({"contact_owner": 1}, 0)

    clock.advance(hours=1)
    second = _drain(tenant, hubspot, clock)

    assert second.written == {"contact": 1, "contact_owner": 1}
    [contact_id] = _contacts_with(hubspot, "email", "buyer@example.com")
    assert hubspot.contact(contact_id)["properties"]["hubspot_owner_id"] == "202"
    assert {row.attempts for row in _rows(tenant)} == {0}


def test_the_outbox_commands_show_and_requeue(
    service, tenant: Tenant, seller: str, hubspot: HubSpotEmulator, capsys, monkeypatch
) -> None:
    from morpheus_pipelines.cli import main

    _post(service, tenant, "s-1")
    with get_session(tenant.url) as session:
        session.execute(update(HubSpotOutboxRow).values(status="dead", lastError="refused: x"))
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", tenant.url)
    subscription = str(tenant.subscription_id)

    assert main(["outbox", "status", "--subscription", subscription]) == 0
    shown = capsys.readouterr().out
    assert "dead        1" in shown and "dead-reason 1  refused: x" in shown
    assert main(["outbox", "retry", "--subscription", subscription]) == 0
    assert capsys.readouterr().out.strip() == "requeued 1"
    assert [row.status for row in _rows(tenant)] == ["pending"]
    assert main(["outbox", "status", "--subscription", "not-a-uuid"]) == 2
    assert "--subscription" in capsys.readouterr().err
