"""The slow path after creation (docs/leads.md, "After creation"): enrichment through the
Domain Intelligence emulator, scores, duplicates against older contacts; none of it changes
the owner, and a re-run changes nothing."""

from __future__ import annotations

import uuid

import dagster as dg
from sqlalchemy import select

from morpheus_pipelines.assets.leads.follow_up import (
    lead_duplicates,
    lead_enrichment,
    lead_scores,
)
from morpheus_pipelines.crm.models import Contact, Lead, LeadDuplicate, LeadEnrichment, LeadScore
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import DomainIntelEmulator
from morpheus_pipelines.resources.domain_intelligence import DomainIntelligenceResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.leads import new_leads
from tests.support.intake import Tenant, client

KNOWN = {"sakura.co.jp": {"company_name": "Sakura KK", "employee_count": 120}}


def _materialize(url: str, domain_intelligence_url: str = "") -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [lead_enrichment, lead_scores, lead_duplicates],
        resources={
            "warehouse": WarehouseResource(database_url=url),
            "domain_intelligence": DomainIntelligenceResource(base_url=domain_intelligence_url),
        },
    )


def _post(base: str, tenant: Tenant, submission: str, email: str, phone: str | None) -> str:
    body = tenant.lead_body(submission, contact={"email": email, "phone": phone})
    return client(tenant.key).post(f"{base}/v1/leads", json=body).json()["lead_id"]


def _rows(url: str, model) -> dict:
    with get_session(url) as session:
        return {row.leadId: row for row in session.scalars(select(model))}


def test_leads_are_enriched_scored_and_matched_without_changing_their_owner(
    tenant: Tenant, service
) -> None:
    base, _ = service
    tenant.add_rep("ana@acme.test", "101")
    with get_session(tenant.url) as session:
        session.add(Contact(subscriptionId=tenant.subscription_id, email="kenji@sakura.co.jp"))
    company = uuid.UUID(_post(base, tenant, "1", "kenji@sakura.co.jp", "+81 90 1234 5678"))
    personal = uuid.UUID(_post(base, tenant, "2", "someone@gmail.com", None))
    owners_before = {lead: _owner(tenant, lead) for lead in (company, personal)}

    with DomainIntelEmulator({"domains": KNOWN}) as emulator:
        result = _materialize(tenant.url, emulator.base_url)
        assert result.success
        asked = [e.body["inputs"] for e in emulator.log.entries("enrich")]

    enrichment = _rows(tenant.url, LeadEnrichment)
    assert enrichment[company].status == "enriched"
    assert enrichment[company].companyName == "Sakura KK"
    assert enrichment[personal].status == "personal_email"
    assert [[i["email_domain"] for i in batch] for batch in asked] == [["sakura.co.jp"]]
    scores = _rows(tenant.url, LeadScore)
    assert scores[company].score == 40 + 25 + 20
    assert scores[personal].score == 0 and scores[personal].reasons == []
    duplicates = _rows(tenant.url, LeadDuplicate)
    assert duplicates[company].matchedOn == "email" and duplicates[company].contactId
    assert duplicates[personal].matchedOn == "none"
    assert {lead: _owner(tenant, lead) for lead in owners_before} == owners_before

    again = _materialize(tenant.url)  # nothing new: nothing asked, nothing changed
    counts = {
        e.asset_key.to_user_string(): e.materialization.metadata["dagster/row_count"].value
        for e in again.get_asset_materialization_events()
    }
    assert counts == {"lead_enrichment": 0, "lead_scores": 0, "lead_duplicates": 0}


def test_without_the_service_leads_wait_as_unavailable_and_are_enriched_later(
    tenant: Tenant, service
) -> None:
    base, _ = service
    lead = uuid.UUID(_post(base, tenant, "1", "kenji@sakura.co.jp", None))
    _materialize(tenant.url)  # no Domain Intelligence configured
    assert _rows(tenant.url, LeadEnrichment)[lead].status == "unavailable"
    assert _rows(tenant.url, LeadScore)[lead].score == 0

    with DomainIntelEmulator({"domains": KNOWN}) as emulator:
        _materialize(tenant.url, emulator.base_url)
    assert _rows(tenant.url, LeadEnrichment)[lead].status == "enriched"
    assert _rows(tenant.url, LeadScore)[lead].score == 40 + 25  # re-scored


def test_the_sensor_asks_for_a_run_only_while_leads_wait(tenant: Tenant, service) -> None:
    base, _ = service
    resources = {"warehouse": WarehouseResource(database_url=tenant.url)}
    assert isinstance(new_leads(dg.build_sensor_context(resources=resources)), dg.SkipReason)
    _post(base, tenant, "1", "kenji@sakura.co.jp", None)
    requested = new_leads(dg.build_sensor_context(resources=resources))
    assert len(requested.run_requests) == 1
    _materialize(tenant.url)
    # only the enrichment waits (unavailable): still work, same key, so no second run
    later = new_leads(dg.build_sensor_context(resources=resources))
    assert later.run_requests[0].run_key == requested.run_requests[0].run_key


def _owner(tenant: Tenant, lead_id: uuid.UUID) -> tuple:
    with get_session(tenant.url) as session:
        lead = session.get(Lead, lead_id)
        return lead.ownerSalesRepId, lead.ownerHubspotOwnerId


def test_a_duplicate_of_an_earlier_open_lead_keeps_one_owner_and_one_timeline(
    tenant: Tenant, service
) -> None:
    """The same person through two sources: the second lead takes the first one's owner (the
    load charge moves with it, HubSpot is told through the outbox), its form shows on the
    first lead's timeline, and the match is recorded; another subscription's lead with the
    same address is never a match."""
    from morpheus_pipelines.crm.models import HubSpotOutboxRow

    base, app = service
    ana = tenant.add_rep("ana@acme.test", "101")
    ben = tenant.add_rep("ben@acme.test", "102")
    other = Tenant(tenant.url)
    other.add_rep("zoe@other.test", "777")
    app.state.keys.expire()
    first = uuid.UUID(_post(base, tenant, "web-1", "Pat@Buyer.example", "+65 9123 4567"))
    theirs = uuid.UUID(_post(base, other, "web-1", "pat@buyer.example", None))
    # The same person by phone, through another source: charged to the other rep at intake.
    body = tenant.lead_body("ads-1", contact={"email": "pat.w@gmail.com", "phone": "+6591234567"})
    second = uuid.UUID(
        client(tenant.key).post(f"{base}/v1/leads", json=body | {"source": "ads"}).json()["lead_id"]
    )
    assert {_owner(tenant, first)[0], _owner(tenant, second)[0]} == {ana, ben}
    owner = _owner(tenant, first)

    result = _materialize(tenant.url)

    assert _owner(tenant, second) == owner  # one owner: the earlier lead's
    assert tenant.open_leads() == {
        ana: 2 if owner[0] == ana else 0,
        ben: 2 if owner[0] == ben else 0,
    }
    duplicates = _rows(tenant.url, LeadDuplicate)
    assert duplicates[second].duplicateOfLeadId == first
    assert duplicates[second].matchedOn == "phone"
    assert duplicates[first].duplicateOfLeadId is None
    assert duplicates[theirs].duplicateOfLeadId is None  # never another subscription's
    timeline = client(tenant.key).get(f"{base}/v1/leads/{first}/timeline").json()["items"]
    assert [item["channel"] for item in timeline] == ["form", "form"]
    with get_session(tenant.url) as session:
        queued = session.scalars(
            select(HubSpotOutboxRow).where(HubSpotOutboxRow.leadId == second)
        ).all()
    assert [(row.kind, row.payload) for row in queued if row.kind == "contact_owner"][-1] == (
        "contact_owner",
        {"hubspot_owner_id": owner[1]},
    )
    [event] = [
        e for e in result.get_asset_materialization_events() if "duplicates" in str(e.asset_key)
    ]
    assert event.materialization.metadata["leads_by_match"].value["duplicate_of_open_lead"] == 1

    # A re-run changes nothing: the load moved once.
    _materialize(tenant.url)
    assert _owner(tenant, second) == owner
    assert sum(tenant.open_leads().values()) == 2
