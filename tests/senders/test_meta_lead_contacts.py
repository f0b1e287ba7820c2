"""A Lead Ads lead end to end, Meta's emulator posting to the service over real HTTP: the
lead exists with its owner when the webhook is answered; its answers are read from the Graph
API afterwards, retried while the API is down, and never change its owner."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import dagster as dg
import pytest
from sqlalchemy import select

from morpheus_pipelines.assets.leads.contact_retrieval import lead_contact_retrieval
from morpheus_pipelines.crm.models import Lead, LeadContactRetrieval
from morpheus_pipelines.crm.rules.contact_retrieval import MAX_ATTEMPTS
from morpheus_pipelines.crm.steps.hubspot_outbox import DrainReport, drain_outbox
from morpheus_pipelines.crm.steps.lead_contact_retrieval import retrieve_lead_contacts
from morpheus_pipelines.crm.steps.subscriptions import change_settings
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator, MetaGraphEmulator
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient
from morpheus_pipelines.platform.clients.meta_graph import MetaGraphClient
from morpheus_pipelines.resources.meta import MetaGraphResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.contact_retrieval import lead_contact_retrieval_sensor
from tests.senders.conftest import META_APP_SECRET
from tests.support.intake import Clock, Tenant

PAGE_ID = "555000111"
TOKEN = "EAAmeta-test-token"
ANSWERS = {
    "email": "Mei.Tan@Example.com",
    "phone_number": "0412 345 678",
    "full_name": "Mei Tan",
    "budget": "10k",
}


@pytest.fixture
def meta(service) -> Iterator[MetaGraphEmulator]:
    base, _ = service
    emulator = MetaGraphEmulator(
        token=TOKEN, app_secret=META_APP_SECRET, webhook_url=f"{base}/v1/webhooks/meta"
    ).start()
    try:
        yield emulator
    finally:
        emulator.stop()


def _graph(meta: MetaGraphEmulator) -> MetaGraphClient:
    return MetaGraphClient(meta.base_url, TOKEN, timeout=5)


def _lead(tenant: Tenant) -> tuple[Lead, LeadContactRetrieval]:
    with get_session(tenant.url) as session:
        lead = session.scalars(
            select(Lead).where(Lead.subscriptionId == tenant.subscription_id)
        ).one()
        return lead, session.get(LeadContactRetrieval, lead.id)


def _retrieve(tenant: Tenant, meta: MetaGraphEmulator, **at: Any):
    with _graph(meta) as graph:
        return retrieve_lead_contacts(
            lambda: get_session(tenant.url), graph, tenant.subscription_id, **at
        )


def _new_lead(tenant: Tenant, meta: MetaGraphEmulator, leadgen_id: str = "LG-100") -> int:
    rep = tenant.add_rep("rep@acme.test", "301")
    with get_session(tenant.url) as session:
        change_settings(
            session, tenant.subscription_id, {"--meta-page-id": PAGE_ID, "--default-region": "AU"}
        )
    meta.add_lead(leadgen_id, page_id=PAGE_ID, form_id="777", ad_id="888", field_data=ANSWERS)
    assert meta.deliver_leadgen(PAGE_ID, leadgen_id, form_id="777", ad_id="888") == 200
    return rep


def test_the_lead_has_its_owner_at_once_and_its_contact_after_the_retrieval(
    tenant: Tenant, meta: MetaGraphEmulator
) -> None:
    rep = _new_lead(tenant, meta)
    lead, retrieval = _lead(tenant)
    assert lead.ownerSalesRepId == rep and lead.email is None  # owner now, answers later
    report = _retrieve(tenant, meta)
    assert (report.completed, report.retried, report.failed) == (1, 0, 0)
    lead, retrieval = _lead(tenant)
    assert (lead.email, lead.phone) == ("mei.tan@example.com", "+61412345678")
    assert (lead.firstName, lead.lastName) == ("Mei", "Tan")
    assert lead.payload["answers"] == {"budget": ["10k"]}
    assert lead.ownerSalesRepId == rep and retrieval.completedAt is not None
    assert _retrieve(tenant, meta).completed == 0  # done once


def test_the_graph_api_down_leaves_the_lead_and_its_owner_and_completes_it_later(
    tenant: Tenant, meta: MetaGraphEmulator
) -> None:
    rep = _new_lead(tenant, meta)
    meta.fail(503, endpoint="lead", times=None)
    now = datetime.now(UTC)
    report = _retrieve(tenant, meta, now=now)
    assert (report.completed, report.retried) == (0, 1)
    lead, retrieval = _lead(tenant)
    assert lead.ownerSalesRepId == rep and lead.email is None
    assert retrieval.attempts == 1 and retrieval.nextAttemptAt > now
    assert _retrieve(tenant, meta, now=now).retried == 0  # not due again yet
    meta.faults.clear()
    assert _retrieve(tenant, meta, now=now + timedelta(minutes=2)).completed == 1
    lead, _ = _lead(tenant)
    assert lead.email == "mei.tan@example.com" and lead.ownerSalesRepId == rep


def test_a_lead_the_graph_api_will_never_serve_fails_visibly_and_keeps_its_owner(
    tenant: Tenant, meta: MetaGraphEmulator
) -> None:
    rep = _new_lead(tenant, meta)
    meta.remove_lead("LG-100")  # deleted on Meta's side: code 100, not worth a retry
    report = _retrieve(tenant, meta)
    assert (report.failed, report.retried) == (1, 0)
    lead, retrieval = _lead(tenant)
    assert retrieval.failedAt is not None and "Graph API 400" in retrieval.lastError
    assert lead.ownerSalesRepId == rep


def test_retries_are_bounded(tenant: Tenant, meta: MetaGraphEmulator) -> None:
    _new_lead(tenant, meta)
    meta.fail(500, endpoint="lead", times=None)
    moment = datetime.now(UTC)
    for _ in range(MAX_ATTEMPTS):
        _retrieve(tenant, meta, now=moment)
        moment += timedelta(hours=2)
    _, retrieval = _lead(tenant)
    assert retrieval.attempts == MAX_ATTEMPTS and retrieval.failedAt is not None
    assert _retrieve(tenant, meta, now=moment + timedelta(days=1)).retried == 0


def test_the_sensor_starts_the_asset_and_the_check_goes_red_for_a_lost_contact(
    tenant: Tenant, meta: MetaGraphEmulator
) -> None:
    _new_lead(tenant, meta)
    resources = {
        "warehouse": WarehouseResource(database_url=tenant.url),
        "ownership": OwnershipResource(subscription_id=str(tenant.subscription_id)),
        "meta_graph": MetaGraphResource(base_url=meta.base_url, access_token=TOKEN),
    }
    instance = dg.DagsterInstance.ephemeral()
    due = lead_contact_retrieval_sensor(
        dg.build_sensor_context(resources=resources, instance=instance)
    )
    assert isinstance(due, dg.SensorResult) and len(due.run_requests) == 1
    result = dg.materialize([lead_contact_retrieval], resources=resources)
    [materialization] = result.asset_materializations_for_node("lead_contact_retrieval")
    assert materialization.metadata["completed"].value == 1
    assert result.get_asset_check_evaluations()[0].passed
    quiet = lead_contact_retrieval_sensor(
        dg.build_sensor_context(resources=resources, instance=instance)
    )
    assert isinstance(quiet, dg.SkipReason)

    meta.add_lead("LG-200", page_id=PAGE_ID, form_id="777", field_data=ANSWERS)
    assert meta.deliver_leadgen(PAGE_ID, "LG-200", form_id="777") == 200
    meta.remove_lead("LG-200")
    result = dg.materialize([lead_contact_retrieval], resources=resources)
    [evaluation] = result.get_asset_check_evaluations()
    assert not evaluation.passed and evaluation.metadata["failed"].value == 1


def test_the_hubspot_contact_waits_for_the_answers_and_is_written_with_them(
    tenant: Tenant, meta: MetaGraphEmulator
) -> None:
    _new_lead(tenant, meta)
    with HubSpotEmulator({"token": "pat-test"}) as hubspot:

        def drain(at: datetime) -> DrainReport:
            with HubSpotClient(hubspot.base_url, "pat-test", retry_count=0) as client:
                return drain_outbox(
                    partial(get_session, tenant.url),
                    client,
                    tenant.subscription_id,
                    now=Clock(at),
                )

        now = datetime.now(UTC) + timedelta(seconds=1)
        before = drain(now)
        assert before.postponed["contact"] == 1 and hubspot.contacts() == {}
        _retrieve(tenant, meta)
        after = drain(now + timedelta(minutes=2))
        assert after.written["contact"] == 1
        (contact,) = hubspot.contacts().values()
        assert contact["properties"]["email"] == "mei.tan@example.com"
        assert contact["properties"]["hubspot_owner_id"] == "301"
