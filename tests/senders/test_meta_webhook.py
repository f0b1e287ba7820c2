"""``GET``/``POST /v1/webhooks/meta`` over real HTTP: the handshake, the signature, Lead Ads
leads with their owner in the request, WhatsApp messages on the lead's timeline."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

import pytest
import requests
from sqlalchemy import func, select

from morpheus_pipelines.crm.models import Activity, Lead, LeadContactRetrieval
from morpheus_pipelines.crm.steps.subscriptions import change_settings
from morpheus_pipelines.db.session import get_session
from tests.senders.conftest import META_APP_SECRET, META_VERIFY_TOKEN
from tests.support.intake import Tenant, client

PAGE_ID = "1234567890"
NUMBER_ID = "106540352242922"


def _signed(body: dict[str, Any], secret: str = META_APP_SECRET) -> tuple[bytes, dict[str, str]]:
    raw = json.dumps(body).encode()
    digest = hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    return raw, {"X-Hub-Signature-256": f"sha256={digest}", "Content-Type": "application/json"}


def _post(base: str, body: dict[str, Any], **signing: Any) -> requests.Response:
    raw, headers = _signed(body, **signing)
    return requests.post(f"{base}/v1/webhooks/meta", data=raw, headers=headers, timeout=10)


def _leadgen(leadgen_id: str, page_id: str = PAGE_ID) -> dict[str, Any]:
    return {
        "object": "page",
        "entry": [
            {
                "id": page_id,
                "time": int(time.time()),
                "changes": [
                    {
                        "field": "leadgen",
                        "value": {
                            "leadgen_id": leadgen_id,
                            "page_id": page_id,
                            "form_id": "555",
                            "adgroup_id": "777",
                            "ad_id": "888",
                            "created_time": int(time.time()),
                        },
                    }
                ],
            }
        ],
    }


def _whatsapp(from_wa_id: str, message_id: str, sent_at: int, text: str = "hi") -> dict[str, Any]:
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "61255501234", "phone_number_id": NUMBER_ID},
        "contacts": [{"profile": {"name": "Ana Lima"}, "wa_id": from_wa_id}],
        "messages": [
            {
                "from": from_wa_id,
                "id": message_id,
                "timestamp": str(sent_at),
                "type": "text",
                "text": {"body": text},
            }
        ],
    }
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": "WABA-1", "changes": [{"field": "messages", "value": value}]}],
    }


def _configure(tenant: Tenant) -> None:
    with get_session(tenant.url) as session:
        change_settings(
            session,
            tenant.subscription_id,
            {"--meta-page-id": PAGE_ID, "--whatsapp-phone-number-id": NUMBER_ID},
        )


def _count(tenant: Tenant, model: Any) -> int:
    with get_session(tenant.url) as session:
        return session.scalar(
            select(func.count())
            .select_from(model)
            .where(model.subscriptionId == tenant.subscription_id)
        )


def test_the_verification_handshake_answers_the_challenge_only_for_our_token(service) -> None:
    base, _ = service
    url = f"{base}/v1/webhooks/meta"
    ok = {"hub.mode": "subscribe", "hub.verify_token": META_VERIFY_TOKEN, "hub.challenge": "1158"}
    answer = requests.get(url, params=ok, timeout=10)
    assert (answer.status_code, answer.text) == (200, "1158")
    for wrong in (
        {"hub.verify_token": "guess"},
        {"hub.mode": "unsubscribe"},
        {"hub.challenge": ""},
    ):
        assert requests.get(url, params=ok | wrong, timeout=10).status_code == 403


def test_a_leadgen_change_is_a_lead_with_its_owner_and_a_pending_contact(
    tenant: Tenant, service
) -> None:
    base, _ = service
    rep = tenant.add_rep("rep@acme.test", "301")
    _configure(tenant)
    answer = _post(base, _leadgen("LG-1"))
    assert answer.status_code == 200 and answer.json()["received"] == {"leads_created": 1}
    assert _post(base, _leadgen("LG-1")).json()["received"] == {"leads_replayed": 1}
    with get_session(tenant.url) as session:
        (lead,) = session.scalars(
            select(Lead).where(Lead.subscriptionId == tenant.subscription_id)
        ).all()
        retrieval = session.get(LeadContactRetrieval, lead.id)
    assert (lead.source, lead.sourceSubmissionId) == ("meta_lead_ads", "LG-1")
    assert lead.ownerSalesRepId == rep and lead.campaignIds == ["888", "777"]
    assert retrieval.externalId == "LG-1" and retrieval.completedAt is None


def test_a_delivery_not_signed_with_our_secret_is_401_and_nothing_is_stored(
    tenant: Tenant, service
) -> None:
    base, _ = service
    tenant.add_rep("rep@acme.test", "301")
    _configure(tenant)
    raw, headers = _signed(_leadgen("LG-2"))
    url = f"{base}/v1/webhooks/meta"
    forged = _post(base, _leadgen("LG-2"), secret="someone-elses-secret")
    unsigned = requests.post(url, data=raw, headers={"Content-Type": "application/json"})
    tampered = requests.post(url, data=raw.replace(b"LG-2", b"LG-3"), headers=headers)
    assert [r.status_code for r in (forged, unsigned, tampered)] == [401, 401, 401]
    assert unsigned.json()["error"] == "missing_signature"
    assert _count(tenant, Lead) == 0
    # The same body, signed with our secret, is a lead: the 401s were the signature's.
    assert requests.post(url, data=raw, headers=headers).status_code == 200
    assert _count(tenant, Lead) == 1


def test_a_lead_of_a_page_nobody_has_is_counted_not_stored(tenant: Tenant, service) -> None:
    base, _ = service
    _configure(tenant)
    answer = _post(base, _leadgen("LG-9", page_id="999"))
    assert answer.json()["received"] == {"leads_of_unknown_page": 1}
    assert _count(tenant, Lead) == 0


def test_a_whatsapp_message_opens_the_window_of_the_lead_with_that_number(
    tenant: Tenant, service
) -> None:
    base, _ = service
    tenant.add_rep("rep@acme.test", "301")
    _configure(tenant)
    created = client(tenant.key).post(
        f"{base}/v1/leads", json=tenant.lead_body(contact={"phone": "+61 412 345 678"})
    )
    lead_id = created.json()["lead_id"]
    window = f"{base}/v1/leads/{lead_id}/whatsapp-window"
    assert client(tenant.key).get(window).json()["open"] is False
    sent_at = int(time.time()) - 60
    delivery = _whatsapp("61412345678", "wamid.ABC", sent_at)
    assert _post(base, delivery).json()["received"] == {"messages_recorded": 1}
    assert _post(base, delivery).json()["received"] == {"messages_replayed": 1}
    shown = client(tenant.key).get(window).json()
    assert shown["open"] is True and shown["opened_at"].startswith(
        time.strftime("%Y-%m-%dT%H:%M", time.gmtime(sent_at))
    )
    assert _count(tenant, Lead) == 1 and _count(tenant, Activity) == 2  # the form and the message


def test_a_whatsapp_message_from_a_new_number_is_a_new_lead(tenant: Tenant, service) -> None:
    base, _ = service
    rep = tenant.add_rep("rep@acme.test", "301")
    _configure(tenant)
    _post(base, _whatsapp("6591234567", "wamid.NEW", int(time.time())))
    with get_session(tenant.url) as session:
        (lead,) = session.scalars(
            select(Lead).where(Lead.subscriptionId == tenant.subscription_id)
        ).all()
    assert (lead.source, lead.phone, lead.firstName) == ("whatsapp", "+6591234567", "Ana Lima")
    assert lead.ownerSalesRepId == rep


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[]", b'{"object": "page"}'],
)
def test_a_signed_body_that_is_not_a_delivery_is_422(service, body: bytes) -> None:
    base, _ = service
    digest = hmac.new(META_APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
    answer = requests.post(
        f"{base}/v1/webhooks/meta",
        data=body,
        headers={"X-Hub-Signature-256": f"sha256={digest}"},
        timeout=10,
    )
    assert answer.status_code == 422


def test_a_change_we_cannot_read_does_not_lose_the_rest_of_the_delivery(
    tenant: Tenant, service
) -> None:
    base, _ = service
    tenant.add_rep("rep@acme.test", "301")
    _configure(tenant)
    delivery = _leadgen("LG-5")
    delivery["entry"][0]["changes"].insert(0, {"field": "leadgen", "value": {"page_id": PAGE_ID}})
    delivery["entry"].append({"id": PAGE_ID, "changes": [{"field": "feed", "value": {}}]})
    answer = _post(base, delivery)
    assert answer.json()["received"] == {
        "field_feed": 1,
        "leads_created": 1,
        "unreadable_leadgen": 1,
    }
