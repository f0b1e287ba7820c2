"""Leads that wait for an owner: the step that gives them one once a rep is assignable, its
asset check, and the sensor that requests it exactly then (docs/leads.md, "Who owns a
lead")."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import dagster as dg
from sqlalchemy import select

from morpheus_pipelines.assets.leads.waiting import (
    WAITING_CHECK,
    no_lead_waits_for_an_owner,
    waiting_lead_owners,
    waiting_lead_owners_job,
)
from morpheus_pipelines.assets.reports.daily import CRM_NOTE_SOURCES
from morpheus_pipelines.crm.models import HubSpotOutboxRow, Lead
from morpheus_pipelines.crm.reports.waiting_leads import waiting_note
from morpheus_pipelines.crm.rules.hubspot_outbox import lead_owner_intent
from morpheus_pipelines.crm.rules.waiting_leads import waiting_health
from morpheus_pipelines.crm.steps.waiting_leads import waiting_operations_note
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.waiting_leads import waiting_lead_owners_sensor
from tests.support.intake import Tenant, client


def _resources(tenant: Tenant) -> dict:
    return {
        "warehouse": WarehouseResource(database_url=tenant.url),
        "ownership": OwnershipResource(subscription_id=str(tenant.subscription_id)),
    }


def _sensor(tenant: Tenant) -> dg.SensorResult | dg.SkipReason:
    return waiting_lead_owners_sensor(dg.build_sensor_context(resources=_resources(tenant)))


def _run(tenant: Tenant) -> dg.ExecuteInProcessResult:
    definitions = dg.Definitions(
        assets=[waiting_lead_owners],
        asset_checks=[no_lead_waits_for_an_owner],
        jobs=[waiting_lead_owners_job],
        resources=_resources(tenant),
    )
    return definitions.resolve_job_def("waiting_lead_owners_job").execute_in_process()


def _check(result: dg.ExecuteInProcessResult) -> dg.AssetCheckEvaluation:
    [evaluation] = [
        e for e in result.get_asset_check_evaluations() if e.check_name == WAITING_CHECK
    ]
    return evaluation


def test_a_waiting_lead_gets_an_owner_once_a_rep_is_assignable(tenant: Tenant, service) -> None:
    base, _ = service
    ana = tenant.add_rep("ana@acme.test", "101", active=False)
    tenant.add_pool("all", {ana: 1}, default=True)
    answer = client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body()).json()
    assert answer["owner_state"] == "waiting"

    skipped = _sensor(tenant)  # a lead waits, but nobody could take it: no run yet
    assert isinstance(skipped, dg.SkipReason) and "nobody is assignable" in skipped.skip_message
    red = _run(tenant)  # the step changes nothing, and the check says so
    assert _check(red).passed is False and _check(red).metadata["waiting"].value == 1

    tenant.set_active(ana, True)
    requested = _sensor(tenant)
    assert isinstance(requested, dg.SensorResult) and len(requested.run_requests) == 1
    assert _run(tenant).success

    lead_id = uuid.UUID(answer["lead_id"])
    with get_session(tenant.url) as db:
        lead = db.get(Lead, lead_id)
        owner_rows = db.scalars(
            select(HubSpotOutboxRow.intentKey).where(
                HubSpotOutboxRow.leadId == lead_id, HubSpotOutboxRow.kind == "contact_owner"
            )
        ).all()
    assert (lead.ownerSalesRepId, lead.ownerHubspotOwnerId, lead.ownerIsFallback) == (
        ana,
        "101",
        False,
    )
    assert owner_rows == [lead_owner_intent(lead_id, "101")]
    assert tenant.open_leads()[ana] == 1  # charged like a lead routed at intake
    shown = client(tenant.key).get(f"{base}/v1/leads/{lead_id}").json()
    assert shown["owner_state"] == "assigned" and shown["owner"]["hubspot_owner_id"] == "101"
    assert isinstance(_sensor(tenant), dg.SkipReason)  # nothing waits any more
    assert _check(_run(tenant)).passed is True


def test_the_oldest_waiting_lead_is_given_first(tenant: Tenant, service) -> None:
    base, _ = service
    gone = tenant.add_rep("gone@acme.test", "201", active=False)
    backup = tenant.add_rep("backup@acme.test", "202", active=False)
    tenant.add_pool("all", {gone: 1}, default=True, fallback=backup)
    session = client(tenant.key)
    ids = [
        session.post(f"{base}/v1/leads", json=tenant.lead_body(f"w-{i}")).json()["lead_id"]
        for i in range(3)
    ]
    tenant.set_active(backup, True)  # the pool's fallback rep: not charged
    assert _run(tenant).success
    with get_session(tenant.url) as db:
        owners = {
            str(lead.id): (lead.ownerHubspotOwnerId, lead.response["owner_state"])
            for lead in db.scalars(select(Lead).where(Lead.id.in_(map(uuid.UUID, ids))))
        }
    assert set(owners.values()) == {("202", "fallback")}
    assert tenant.open_leads()[backup] == 0


def test_waiting_health_is_red_only_while_a_lead_waits() -> None:
    now = datetime(2026, 1, 1, 12, tzinfo=UTC)
    assert waiting_health(0, None, now) == (True, "every open lead has an owner")
    passed, summary = waiting_health(2, now - timedelta(minutes=7), now)
    assert passed is False and "2 open lead(s)" in summary and "7 min" in summary


def test_the_daily_summary_warns_while_leads_wait(tenant: Tenant, service) -> None:
    base, _ = service
    client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body())
    now = datetime.now(UTC) + timedelta(minutes=90)

    note = waiting_operations_note(lambda: get_session(tenant.url), tenant.subscription_id, now)

    assert note.severity == "warning" and note.title == "Leads waiting for an owner"
    assert note.lines[0].startswith("1 open lead(s) have no owner; the oldest has waited 1 h")
    assert "Nobody is assignable" in note.lines[1]
    assert waiting_operations_note in CRM_NOTE_SOURCES
    tenant.add_rep("ana@acme.test", "101")
    assert (
        "within a minute"
        in waiting_operations_note(
            lambda: get_session(tenant.url), tenant.subscription_id, now
        ).lines[1]
    )


def test_the_note_is_ok_when_every_lead_has_an_owner() -> None:
    note = waiting_note(0, None, False, datetime(2026, 1, 1, tzinfo=UTC))
    assert note.severity == "ok"
