"""The emulator's deals, contacts search and deal associations speak HubSpot's contract:
requests and answers validate against deals.json, contacts.json and associations.json, the
search keeps HubSpot's page and 10,000-result limits, and a deal's stage history is served."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import requests

from morpheus_pipelines.devtools.emulators import HubSpotEmulator

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
DEALS_SEARCH = "/crm/v3/objects/deals/search"
CONTACTS_SEARCH = "/crm/v3/objects/contacts/search"
DEALS_BATCH_READ = "/crm/v3/objects/deals/batch/read"
DEAL_CONTACTS = "/crm/v4/associations/deals/contacts/batch/read"


def _ms(moment: datetime) -> str:
    return str(int(moment.timestamp() * 1000))


def _search(
    since: datetime,
    *,
    modified: str = "hs_lastmodifieddate",
    properties: list[str] = ("dealstage",),
    after: int = 0,
    limit: int = 2,
) -> dict:
    return {
        "filterGroups": [
            {"filters": [{"propertyName": modified, "operator": "GTE", "value": _ms(since)}]}
        ],
        "sorts": [modified],
        "properties": list(properties),
        "limit": limit,
        "after": str(after),
    }


def _post(hubspot: HubSpotEmulator, session: requests.Session, path: str, body: dict):
    return session.post(f"{hubspot.base_url}{path}", json=body)


@pytest.fixture
def deals(hubspot: HubSpotEmulator) -> HubSpotEmulator:
    for n in range(5):
        hubspot.add_deal(
            700 + n,
            stage="appointmentscheduled",
            owner_id="1" if n % 2 else None,
            amount=1000 * n,
            contact_ids=[501 + n],
            modified_at=T0 + timedelta(hours=n),
        )
    return hubspot


def test_deals_search_filters_sorts_and_pages_as_deals_json_says(
    deals: HubSpotEmulator, session: requests.Session, validate
) -> None:
    body = _search(T0 + timedelta(hours=1))
    validate("deals.json", "PublicObjectSearchRequest", body)

    first = _post(deals, session, DEALS_SEARCH, body)

    assert first.status_code == 200
    page = first.json()
    validate(
        "deals.json",
        "CollectionResponseWithTotalSimplePublicObject",
        page,
        nullable_properties=True,
    )
    assert page["total"] == 4
    assert [r["id"] for r in page["results"]] == ["701", "702"]
    assert page["results"][0]["properties"]["dealstage"] == "appointmentscheduled"
    second = _post(
        deals, session, DEALS_SEARCH, body | {"after": page["paging"]["next"]["after"]}
    ).json()
    assert [r["id"] for r in second["results"]] == ["703", "704"]
    assert "paging" not in second


def test_the_deals_search_answers_under_the_object_type_id_deals_json_spells(
    deals: HubSpotEmulator, session: requests.Session
) -> None:
    by_name = _post(deals, session, DEALS_SEARCH, _search(T0, limit=10)).json()
    by_id = _post(deals, session, "/crm/v3/objects/0-3/search", _search(T0, limit=10)).json()
    assert [r["id"] for r in by_id["results"]] == [r["id"] for r in by_name["results"]]
    assert len(by_id["results"]) == 5
    assert [e.endpoint for e in deals.log.entries()][-2:] == ["deals_search", "deals_search"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"limit": 201}, "limit must be between 1 and 200"),
        ({"after": "9999", "limit": 2}, "paging past 10000 results"),
        ({"sorts": [{"propertyName": "hs_lastmodifieddate", "direction": "DESCENDING"}]}, "asc"),
        (
            {"filterGroups": [{"filters": [{"propertyName": "amount", "operator": "GTE"}]}]},
            "filters on hs_lastmodifieddate only",
        ),
    ],
)
def test_the_search_refuses_what_hubspot_or_the_emulator_does_not_do(
    deals: HubSpotEmulator, session: requests.Session, validate, change: dict, message: str
) -> None:
    answer = _post(deals, session, DEALS_SEARCH, _search(T0) | change)
    assert answer.status_code == 400
    validate("deals.json", "Error", answer.json())
    assert message in answer.json()["message"]


def test_a_page_of_200_is_the_most_a_search_answers(
    hubspot: HubSpotEmulator, session: requests.Session
) -> None:
    for n in range(201):
        hubspot.add_deal(n + 1, modified_at=T0 + timedelta(seconds=n))
    page = _post(hubspot, session, DEALS_SEARCH, _search(T0, limit=200)).json()
    assert len(page["results"]) == 200
    assert page["total"] == 201
    assert page["paging"]["next"]["after"] == "200"


def test_deals_batch_read_answers_207_and_the_stage_history_newest_first(
    deals: HubSpotEmulator, session: requests.Session, validate
) -> None:
    deals.set_deal_stage(701, "closedwon", modified_at=T0 + timedelta(days=1))
    body = {
        "inputs": [{"id": "701"}, {"id": "999"}],
        "properties": ["dealstage", "pipeline", "hubspot_owner_id", "amount", "dealname"],
        "propertiesWithHistory": ["dealstage"],
    }
    validate("deals.json", "BatchReadInputSimplePublicObjectId", body)

    answer = _post(deals, session, DEALS_BATCH_READ, body)

    assert answer.status_code == 207
    validate(
        "deals.json",
        "BatchResponseSimplePublicObjectWithErrors",
        answer.json(),
        nullable_properties=True,
    )
    [deal] = answer.json()["results"]
    assert deal["properties"] | {"hs_lastmodifieddate": None, "createdate": None} == {
        "dealstage": "closedwon",
        "pipeline": "default",
        "hubspot_owner_id": "1",
        "amount": "1000",
        "dealname": "Deal 701",
        "hs_object_id": "701",
        "hs_lastmodifieddate": None,
        "createdate": None,
    }
    assert deal["properties"]["hs_lastmodifieddate"] == "2026-11-03T09:00:00.000Z"
    history = deal["propertiesWithHistory"]["dealstage"]
    assert [(h["value"], h["timestamp"]) for h in history] == [
        ("closedwon", "2026-11-03T09:00:00.000Z"),
        ("appointmentscheduled", "2026-11-02T10:00:00.000Z"),
    ]
    assert answer.json()["errors"][0]["context"] == {"ids": ["999"]}
    again = _post(deals, session, "/crm/v3/objects/0-3/batch/read", body)
    assert again.json()["results"] == answer.json()["results"]


def test_contacts_search_filters_on_lastmodifieddate(
    hubspot: HubSpotEmulator, session: requests.Session, validate
) -> None:
    hubspot.set_contact(601, {"email": "a@customer.example"}, modified_at=T0)
    hubspot.set_contact(602, {"email": "b@customer.example"}, modified_at=T0)
    hubspot.set_contact_property(602, "hubspot_owner_id", "2", modified_at=T0 + timedelta(hours=2))
    body = _search(
        T0 + timedelta(hours=1),
        modified="lastmodifieddate",
        properties=["hubspot_owner_id", "email"],
        limit=10,
    )
    validate("contacts.json", "PublicObjectSearchRequest", body)

    answer = _post(hubspot, session, CONTACTS_SEARCH, body)

    assert answer.status_code == 200
    validate(
        "contacts.json",
        "CollectionResponseWithTotalSimplePublicObject",
        answer.json(),
        nullable_properties=True,
    )
    [contact] = answer.json()["results"]
    assert contact["id"] == "602"
    assert contact["properties"]["hubspot_owner_id"] == "2"
    assert contact["properties"]["lastmodifieddate"] == "2026-11-02T11:00:00.000Z"
    wrong = _post(hubspot, session, "/crm/v3/objects/0-1/search", _search(T0))
    assert wrong.status_code == 400
    assert "filters on lastmodifieddate only" in wrong.json()["message"]


def test_set_contact_property_needs_an_existing_contact(hubspot: HubSpotEmulator) -> None:
    with pytest.raises(KeyError):
        hubspot.set_contact_property(4040, "hs_email_optout", "true")


def test_deal_contacts_validate_against_associations_json(
    deals: HubSpotEmulator, session: requests.Session, validate
) -> None:
    deals.add_deal(800, contact_ids=[601, 602])
    deals.add_deal(801)  # no contacts
    body = {"inputs": [{"id": "800"}, {"id": "801"}, {"id": "700"}]}
    validate("associations.json", "BatchInputPublicFetchAssociationsBatchRequest", body)

    answer = _post(deals, session, DEAL_CONTACTS, body)

    assert answer.status_code == 200
    validate("associations.json", "BatchResponsePublicAssociationMultiWithLabel", answer.json())
    found = {r["from"]["id"]: [t["toObjectId"] for t in r["to"]] for r in answer.json()["results"]}
    assert found == {"800": ["601", "602"], "700": ["501"]}
    by_type_ids = _post(deals, session, "/crm/v4/associations/0-3/0-1/batch/read", body)
    assert by_type_ids.json()["results"] == answer.json()["results"]


def test_a_deal_with_more_than_500_contacts_is_paged_per_record(
    hubspot: HubSpotEmulator, session: requests.Session, validate
) -> None:
    hubspot.add_deal(900, contact_ids=range(1, 502))

    first = _post(hubspot, session, DEAL_CONTACTS, {"inputs": [{"id": "900"}]}).json()
    [record] = first["results"]
    validate("associations.json", "BatchResponsePublicAssociationMultiWithLabel", first)
    after = record["paging"]["next"]["after"]
    rest = _post(hubspot, session, DEAL_CONTACTS, {"inputs": [{"id": "900", "after": after}]})

    assert len(record["to"]) == 500
    [tail] = rest.json()["results"]
    assert [t["toObjectId"] for t in tail["to"]] == ["501"]
    assert "paging" not in tail


def test_associations_of_a_type_without_them_are_not_routed(
    hubspot: HubSpotEmulator, session: requests.Session
) -> None:
    answer = _post(
        hubspot, session, "/crm/v4/associations/companies/contacts/batch/read", {"inputs": []}
    )
    assert answer.status_code == 404
