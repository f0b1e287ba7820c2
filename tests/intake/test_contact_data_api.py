"""Contact data through the API: what the issue found stored wrong and answered 201 is now a
422 naming the field, and national numbers are read in the subscription's region."""

from __future__ import annotations

import pytest

from morpheus_pipelines.crm.steps.subscriptions import change_settings
from morpheus_pipelines.db.session import get_session
from tests.support.intake import Tenant, client


def _created(tenant: Tenant, base: str, contact: dict, submission: str = "s-1") -> dict:
    body = tenant.lead_body(submission, contact=contact)
    answer = client(tenant.key).post(f"{base}/v1/leads", json=body)
    assert answer.status_code == 201, answer.text
    return client(tenant.key).get(f"{base}/v1/leads/{answer.json()['lead_id']}").json()["contact"]


@pytest.mark.parametrize(
    ("contact", "field"),
    [
        ({"email": "a@b..com"}, "contact.email"),
        ({"email": "ana@example.com."}, "contact.email"),
        ({"email": "ana@-x.com"}, "contact.email"),
        ({"phone": "+61 4 1234"}, "contact.phone"),
        ({"phone": "0412 345 678"}, "contact.phone"),  # national, the subscription has no region
    ],
)
def test_contact_data_that_cannot_be_stored_right_is_a_422_naming_it(
    tenant: Tenant, service, contact: dict, field: str
) -> None:
    base, _ = service
    tenant.add_rep("rep@acme.test", "301")
    answer = client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body(contact=contact))
    assert answer.status_code == 422
    assert [f["field"] for f in answer.json()["fields"]] == [field]
    assert tenant.leads() == 0


def test_a_trunk_prefix_an_idn_and_an_extension_are_stored_as_the_libraries_read_them(
    tenant: Tenant, service
) -> None:
    base, _ = service
    tenant.add_rep("rep@acme.test", "301")
    contact = _created(
        tenant, base, {"email": "Ana@Exämple.com", "phone": "+61 (0)2 9876 5432 ext. 77"}
    )
    assert contact["email"] == "ana@xn--exmple-cua.com"
    assert (contact["phone"], contact["phone_extension"]) == ("+61298765432", "77")


def test_a_national_number_is_read_in_the_subscriptions_region(tenant: Tenant, service) -> None:
    base, _ = service
    tenant.add_rep("rep@acme.test", "301")
    with get_session(tenant.url) as session:
        change_settings(session, tenant.subscription_id, {"--default-region": "NZ"})
    assert _created(tenant, base, {"phone": "021 123 4567"})["phone"] == "+64211234567"
    assert _created(tenant, base, {"phone": "+61 412 345 678"}, "s-2")["phone"] == "+61412345678"
