"""``POST /v1/webhooks/google-ads`` over real HTTP: the key picks the subscription, the lead
gets its owner in the request, a replay is one lead, a test lead reaches no rep."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import requests
from sqlalchemy import select

from morpheus_pipelines.crm.models import HubSpotOutboxRow, Lead, SalesRep
from morpheus_pipelines.crm.steps.subscriptions import SubscriptionRefused, change_settings
from morpheus_pipelines.db.session import get_session
from tests.support.intake import Tenant, client

KEY = "google-lead-form-key-1"


def _delivery(lead_id: str = "TeSter-123-ABCDEFGHIJKLMNOPQRSTUVWXYZ", **overrides: Any) -> dict:
    body = {
        "lead_id": lead_id,
        "user_column_data": [
            {"column_name": "User Email", "string_value": "Ana@Exämple.com", "column_id": "EMAIL"},
            {
                "column_name": "User Phone",
                "string_value": "0412 345 678",
                "column_id": "PHONE_NUMBER",
            },
            {"column_name": "Full Name", "string_value": "Ana Lima", "column_id": "FULL_NAME"},
            {"column_name": "Budget?", "string_value": "10k", "column_id": "budget"},
        ],
        "api_version": "1.0",
        "form_id": 40000000001,
        "campaign_id": 20000000002,
        "google_key": KEY,
        "is_test": False,
        "gcl_id": "gclid-1",
        "adgroup_id": 30000000003,
        "creative_id": 50000000004,
    }
    return body | overrides


def _with_key(tenant: Tenant) -> None:
    with get_session(tenant.url) as session:
        change_settings(
            session, tenant.subscription_id, {"--google-ads-key": KEY, "--default-region": "AU"}
        )


def _leads(tenant: Tenant) -> list[Lead]:
    with get_session(tenant.url) as session:
        return list(
            session.scalars(select(Lead).where(Lead.subscriptionId == tenant.subscription_id))
        )


def test_a_lead_form_delivery_is_a_lead_with_its_owner_and_a_replay_is_the_same_lead(
    tenant: Tenant, service
) -> None:
    base, _ = service
    rep = tenant.add_rep("rep@acme.test", "301")
    _with_key(tenant)
    first = requests.post(f"{base}/v1/webhooks/google-ads", json=_delivery(), timeout=10)
    again = requests.post(f"{base}/v1/webhooks/google-ads", json=_delivery(), timeout=10)
    assert first.status_code == again.status_code == 200
    assert first.json()["owner"]["sales_rep_id"] == rep
    assert again.json()["lead_id"] == first.json()["lead_id"]
    (lead,) = _leads(tenant)
    assert (lead.source, lead.sourceSubmissionId) == ("google_ads", _delivery()["lead_id"])
    assert (lead.email, lead.phone) == ("ana@xn--exmple-cua.com", "+61412345678")
    assert (lead.firstName, lead.lastName) == ("Ana", "Lima")
    assert lead.campaignIds == ["20000000002", "30000000003"]
    assert lead.payload["google_ads"]["answers"] == {"BUDGET": "10k"}
    with get_session(tenant.url) as session:
        assert session.get(SalesRep, rep).openLeads == 1  # charged once, not per delivery


def test_an_unknown_or_missing_key_is_401_and_nothing_is_stored(tenant: Tenant, service) -> None:
    base, _ = service
    tenant.add_rep("rep@acme.test", "301")
    _with_key(tenant)
    for body in (_delivery(google_key="not-the-key"), _delivery(google_key=None), {"x": 1}):
        answer = requests.post(f"{base}/v1/webhooks/google-ads", json=body, timeout=10)
        assert answer.status_code == 401
        assert answer.json()["error"] == "unknown_google_key"
    garbage = requests.post(f"{base}/v1/webhooks/google-ads", data=b"\xff{", timeout=10)
    assert garbage.status_code == 401
    assert _leads(tenant) == []


def test_a_test_lead_is_stored_closed_and_reaches_no_rep(tenant: Tenant, service) -> None:
    base, _ = service
    rep = tenant.add_rep("rep@acme.test", "301")
    _with_key(tenant)
    answer = requests.post(
        f"{base}/v1/webhooks/google-ads", json=_delivery("test-lead-1", is_test=True), timeout=10
    )
    assert answer.status_code == 200 and answer.json()["is_test"] is True
    shown = client(tenant.key).get(f"{base}/v1/leads/{answer.json()['lead_id']}").json()
    assert (shown["is_test"], shown["status"], shown["owner"]) == (True, "closed", None)
    (lead,) = _leads(tenant)
    assert lead.isTest and lead.status == "closed" and lead.ownerSalesRepId is None
    assert lead.phone == "+61412345678"  # normalised as every lead's, test or not
    with get_session(tenant.url) as session:
        assert session.get(SalesRep, rep).openLeads == 0
        outbox = session.scalars(
            select(HubSpotOutboxRow).where(HubSpotOutboxRow.leadId == lead.id)
        ).all()
        assert outbox == []  # never written to HubSpot


def test_an_answer_that_is_not_a_phone_is_kept_and_the_lead_is_still_made(
    tenant: Tenant, service
) -> None:
    base, _ = service
    tenant.add_rep("rep@acme.test", "301")
    _with_key(tenant)
    body = _delivery("odd-phone")
    body["user_column_data"][1]["string_value"] = "call after 5"
    answer = requests.post(f"{base}/v1/webhooks/google-ads", json=body, timeout=10)
    assert answer.status_code == 200 and answer.json()["owner"] is not None
    (lead,) = _leads(tenant)
    assert lead.phone is None and lead.payload["rejected_contact"] == {"phone": "call after 5"}


def test_a_delivery_we_cannot_store_names_the_field(tenant: Tenant, service) -> None:
    base, _ = service
    _with_key(tenant)
    for body, field in (
        (_delivery(lead_id=None), "lead_id"),
        (_delivery(is_test="yes"), "is_test"),
        (_delivery(user_column_data=[{"string_value": "x"}]), "user_column_data.0.column_id"),
    ):
        answer = requests.post(f"{base}/v1/webhooks/google-ads", json=body, timeout=10)
        assert answer.status_code == 422
        assert answer.json()["fields"][0]["field"] == field
    assert _leads(tenant) == []


def test_one_key_belongs_to_one_subscription(tenant: Tenant, database_url: str) -> None:
    other = Tenant(database_url, subscription_id=uuid.uuid4())
    _with_key(tenant)
    with get_session(database_url) as session, pytest.raises(SubscriptionRefused, match="already"):
        change_settings(session, other.subscription_id, {"--google-ads-key": KEY})
