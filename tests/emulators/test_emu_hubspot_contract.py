"""HubSpot emulator responses validate against HubSpot's own OpenAPI files."""

from __future__ import annotations

import pytest
import requests

from morpheus_pipelines.devtools.emulators import HubSpotEmulator

LIST_ID = "19544"
BATCH_READ = "/crm/v3/objects/companies/batch/read"
SYNC_PROPERTIES = [
    "hs_object_id",
    "portal_id__c",
    "account_id__c",
    "domain",
    "website",
    "hs_additional_domains",
    "name",
    "account_allias__c",
    "hs_lastmodifieddate",
]


def _batch_body(ids: list[str], properties: list[str] = SYNC_PROPERTIES) -> dict:
    return {
        "inputs": [{"id": i} for i in ids],
        "properties": properties,
        "propertiesWithHistory": [],
    }


def test_list_response_validates(hubspot: HubSpotEmulator, session, validate) -> None:
    resp = session.get(hubspot.url(f"/crm/v3/lists/{LIST_ID}"))
    assert resp.status_code == 200
    body = resp.json()
    validate("lists.json", "ListFetchResponse", body)
    lst = body["list"]
    assert lst["listId"] == LIST_ID
    assert lst["processingStatus"] == "COMPLETE"
    assert lst["objectTypeId"] == "0-2"
    assert lst["size"] == 260
    assert lst["additionalProperties"]["hs_list_size"] == "260"


def test_unknown_list_is_404_error_body(hubspot: HubSpotEmulator, session, validate) -> None:
    resp = session.get(hubspot.url("/crm/v3/lists/424242"))
    assert resp.status_code == 404
    validate("lists.json", "Error", resp.json())
    assert resp.json()["category"] == "OBJECT_NOT_FOUND"


def test_memberships_page_to_completion_at_limit_250(
    hubspot: HubSpotEmulator, session, validate
) -> None:
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        params = {"limit": 250} | ({"after": after} if after else {})
        resp = session.get(hubspot.url(f"/crm/v3/lists/{LIST_ID}/memberships"), params=params)
        assert resp.status_code == 200
        body = resp.json()
        validate("lists.json", "ApiCollectionResponseJoinTimeAndRecordId", body)
        seen += [r["recordId"] for r in body["results"]]
        pages += 1
        after = body.get("paging", {}).get("next", {}).get("after")
        if not after:
            break
    assert pages == 2
    assert seen == [str(1000 + i) for i in range(260)]  # ascending recordId, no gaps
    assert [e.page for e in hubspot.log.entries("memberships")] == [0, 1]


def test_memberships_default_limit_is_100(hubspot: HubSpotEmulator, session) -> None:
    body = session.get(hubspot.url(f"/crm/v3/lists/{LIST_ID}/memberships")).json()
    assert len(body["results"]) == 100
    assert "after" in body["paging"]["next"]


@pytest.mark.parametrize("params", [{"limit": 251}, {"limit": 0}, {"after": "!!not-base64"}])
def test_memberships_bad_paging_is_400(
    hubspot: HubSpotEmulator, session, validate, params: dict
) -> None:
    resp = session.get(hubspot.url(f"/crm/v3/lists/{LIST_ID}/memberships"), params=params)
    assert resp.status_code == 400
    validate("lists.json", "Error", resp.json())
    assert resp.json()["category"] == "VALIDATION_ERROR"


def test_memberships_before_pages_backwards(hubspot: HubSpotEmulator, session) -> None:
    url = hubspot.url(f"/crm/v3/lists/{LIST_ID}/memberships")
    first = session.get(url, params={"limit": 3}).json()
    cursor = first["paging"]["next"]["after"]
    second = session.get(url, params={"limit": 3, "after": cursor}).json()
    back = session.get(url, params={"limit": 3, "before": cursor}).json()
    assert [r["recordId"] for r in second["results"]] == ["1003", "1004", "1005"]
    # The cursor names record 1002 (exclusive bound): before it come 1001 and 1000, descending.
    assert [r["recordId"] for r in back["results"]] == ["1001", "1000"]


def test_batch_read_200_validates_strictly(hubspot: HubSpotEmulator, session, validate) -> None:
    resp = session.post(hubspot.url(BATCH_READ), json=_batch_body(["1000", "1001"]))
    assert resp.status_code == 200
    body = resp.json()
    validate("companies.json", "BatchResponseSimplePublicObject", body)
    assert body["status"] == "COMPLETE"
    props = {r["id"]: r["properties"] for r in body["results"]}
    assert props["1000"]["portal_id__c"] == "500000"
    assert props["1000"]["hs_object_id"] == "1000"
    assert set(SYNC_PROPERTIES) <= set(props["1001"])


def test_batch_read_null_properties(
    hubspot: HubSpotEmulator, session, validate, schema_errors
) -> None:
    hubspot.clear_property("1000", "website")
    body = session.post(hubspot.url(BATCH_READ), json=_batch_body(["1000"])).json()
    assert body["results"][0]["properties"]["website"] is None
    # HubSpot documents null for empty requested properties; its spec says "string" only.
    errors = schema_errors("companies.json", "BatchResponseSimplePublicObject", body)
    assert errors
    assert all(e.startswith("None ") for e in errors)
    validate("companies.json", "BatchResponseSimplePublicObject", body, nullable_properties=True)


@pytest.mark.parametrize(("mode", "expected"), [("omit", "absent"), ("empty", "")])
def test_batch_read_cleared_property_modes_validate_strictly(
    make_hubspot, session, validate, mode: str, expected: str
) -> None:
    emu = make_hubspot(cleared_properties=mode)
    emu.clear_property("1000", "website")
    body = session.post(emu.url(BATCH_READ), json=_batch_body(["1000"])).json()
    validate("companies.json", "BatchResponseSimplePublicObject", body)
    props = body["results"][0]["properties"]
    assert props.get("website", "absent") == expected


def test_batch_read_207_validates_and_names_missing_ids(
    hubspot: HubSpotEmulator, session, validate
) -> None:
    resp = session.post(hubspot.url(BATCH_READ), json=_batch_body(["1000", "77", "88"]))
    assert resp.status_code == 207
    body = resp.json()
    validate("companies.json", "BatchResponseSimplePublicObjectWithErrors", body)
    assert [r["id"] for r in body["results"]] == ["1000"]
    (error,) = body["errors"]
    assert error["category"] == "OBJECT_NOT_FOUND"
    assert error["status"] == "error"
    assert error["context"] == {"ids": ["77", "88"]}


def test_batch_read_without_properties_returns_defaults(hubspot: HubSpotEmulator, session) -> None:
    body = session.post(hubspot.url(BATCH_READ), json=_batch_body(["1000"], [])).json()
    assert set(body["results"][0]["properties"]) == {
        "createdate",
        "domain",
        "hs_lastmodifieddate",
        "hs_object_id",
        "name",
    }


def test_batch_read_rejects_more_than_100_inputs(
    hubspot: HubSpotEmulator, session, validate
) -> None:
    ids = [str(1000 + i) for i in range(101)]
    resp = session.post(hubspot.url(BATCH_READ), json=_batch_body(ids))
    assert resp.status_code == 400
    validate("companies.json", "Error", resp.json())
    assert "100" in resp.json()["message"]
    assert session.post(hubspot.url(BATCH_READ), json=_batch_body(ids[:100])).status_code == 200


@pytest.mark.parametrize("missing", ["inputs", "properties", "propertiesWithHistory"])
def test_batch_read_requires_spec_fields(hubspot: HubSpotEmulator, session, missing: str) -> None:
    body = _batch_body(["1000"])
    del body[missing]
    resp = session.post(hubspot.url(BATCH_READ), json=body)
    assert resp.status_code == 400
    assert missing in resp.json()["message"]


def test_owners_pages_validate(hubspot: HubSpotEmulator, session, validate) -> None:
    url = hubspot.url("/crm/v3/owners")
    first = session.get(url, params={"limit": 1}).json()
    validate("owners.json", "CollectionResponsePublicOwnerForwardPaging", first)
    second = session.get(url, params={"limit": 1, "after": first["paging"]["next"]["after"]})
    body = second.json()
    validate("owners.json", "CollectionResponsePublicOwnerForwardPaging", body)
    assert [o["email"] for o in first["results"] + body["results"]] == [
        "mei@example.com",
        "raj@example.com",
    ]
    assert "paging" not in body
    archived = session.get(url, params={"archived": "true"}).json()
    assert [o["id"] for o in archived["results"]] == ["3"]


def test_401_body_validates_against_error_schema(hubspot: HubSpotEmulator, validate) -> None:
    resp = requests.get(hubspot.url(f"/crm/v3/lists/{LIST_ID}"), timeout=5)
    assert resp.status_code == 401
    body = resp.json()
    for spec in ("lists.json", "companies.json", "owners.json"):
        validate(spec, "Error", body)
    assert body["status"] == "error"
    assert body["category"] == "INVALID_AUTHENTICATION"
    assert body["message"].startswith("Authentication credentials not found")


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_5xx_bodies_validate_against_error_schema(
    hubspot: HubSpotEmulator, session, validate, status: int
) -> None:
    hubspot.fail(status)
    resp = session.get(hubspot.url(f"/crm/v3/lists/{LIST_ID}"))
    assert resp.status_code == status
    validate("lists.json", "Error", resp.json())


def test_429_body_matches_hubspot_not_the_error_schema(
    hubspot: HubSpotEmulator, session, schema_errors
) -> None:
    hubspot.rate_limit("TEN_SECONDLY_ROLLING")
    body = session.get(hubspot.url(f"/crm/v3/lists/{LIST_ID}")).json()
    # HubSpot's 429 carries errorType/policyName, not the Error schema's "category": the only
    # schema violation is that missing field.
    assert schema_errors("lists.json", "Error", body) == ["'category' is a required property"]
    assert body["errorType"] == "RATE_LIMIT"


CONTACTS_UPDATE = "/crm/v3/objects/contacts/batch/update"


def _contacts(hubspot: HubSpotEmulator, *ids: str) -> None:
    for contact_id in ids:
        hubspot.set_contact(contact_id, {"email": f"c{contact_id}@example.com"})


def test_contacts_batch_update_validates_and_writes(
    hubspot: HubSpotEmulator, session, validate
) -> None:
    _contacts(hubspot, "501", "502")
    body = {
        "inputs": [
            {"id": "501", "properties": {"hubspot_owner_id": "7", "call_assigned_to": "7"}},
            {"id": "502", "properties": {"call_assigned_to": "8"}},
        ]
    }
    resp = session.post(hubspot.url(CONTACTS_UPDATE), json=body)
    assert resp.status_code == 200
    validate("contacts.json", "BatchResponseSimplePublicObject", resp.json())
    assert hubspot.contact("501")["properties"]["hubspot_owner_id"] == "7"
    assert hubspot.contact("502")["properties"]["call_assigned_to"] == "8"
    assert hubspot.contact("502")["writes"] == 1


def test_contacts_batch_update_names_unknown_ids_in_a_207(
    hubspot: HubSpotEmulator, session, validate
) -> None:
    _contacts(hubspot, "501")
    body = {"inputs": [{"id": i, "properties": {"call_assigned_to": "7"}} for i in ("501", "9")]}
    resp = session.post(hubspot.url(CONTACTS_UPDATE), json=body)
    assert resp.status_code == 207
    payload = resp.json()
    validate("contacts.json", "BatchResponseSimplePublicObjectWithErrors", payload)
    assert payload["errors"][0]["context"]["ids"] == ["9"]
    assert [r["id"] for r in payload["results"]] == ["501"]


CONTACTS_READ = "/crm/v3/objects/contacts/batch/read"
SEGMENT_PROPERTIES = [
    "email",
    "phone",
    "hubspot_owner_id",
    "call_assigned_to",
    "lifecyclestage",
    "hs_email_optout",
]


def test_contacts_batch_read_validates_with_the_segment_properties(
    hubspot: HubSpotEmulator, session, validate
) -> None:
    values = {
        "email": "a@example.com",
        "phone": "+15550100",
        "hubspot_owner_id": "7",
        "call_assigned_to": "7",
        "lifecyclestage": "lead",
        "hs_email_optout": "false",
    }
    hubspot.set_contact("601", values)
    resp = session.post(hubspot.url(CONTACTS_READ), json=_batch_body(["601"], SEGMENT_PROPERTIES))
    assert resp.status_code == 200
    validate("contacts.json", "BatchResponseSimplePublicObject", resp.json())
    [found] = resp.json()["results"]
    assert {k: found["properties"][k] for k in SEGMENT_PROPERTIES} == values


def test_contacts_batch_read_names_unknown_ids_and_unset_properties_are_null(
    hubspot: HubSpotEmulator, session, validate
) -> None:
    hubspot.set_contact("601", {"email": "a@example.com"})
    body = _batch_body(["601", "999"], SEGMENT_PROPERTIES)
    resp = session.post(hubspot.url(CONTACTS_READ), json=body)
    assert resp.status_code == 207
    payload = resp.json()
    validate(
        "contacts.json",
        "BatchResponseSimplePublicObjectWithErrors",
        payload,
        nullable_properties=True,
    )
    assert payload["errors"][0]["context"]["ids"] == ["999"]
    assert payload["results"][0]["properties"]["phone"] is None


@pytest.mark.parametrize(
    ("inputs", "reason"),
    [
        ([{"id": str(i), "properties": {}} for i in range(101)], "exceeds the limit of 100"),
        ([{"id": "1", "properties": {}}, {"id": "1", "properties": {}}], "Duplicate IDs"),
        ([{"id": "1", "properties": {"hubspot_owner_id": 7}}], "must map names to strings"),
        ([{"properties": {}}], "needs an 'id'"),
    ],
)
def test_contacts_batch_update_rejects_a_malformed_batch(
    hubspot: HubSpotEmulator, session, validate, inputs, reason
) -> None:
    resp = session.post(hubspot.url(CONTACTS_UPDATE), json={"inputs": inputs})
    assert resp.status_code == 400
    validate("contacts.json", "Error", resp.json())
    assert reason in resp.json()["message"]


def test_memberships_add_validates_and_adding_twice_adds_nothing(
    hubspot: HubSpotEmulator, session, validate
) -> None:
    _contacts(hubspot, "501", "502")
    hubspot.set_list("77", name="Rep list", object_type_id="0-1")
    url = hubspot.url("/crm/v3/lists/77/memberships/add")

    first = session.put(url, json=["501", "502", "404"])
    assert first.status_code == 200
    validate("lists.json", "MembershipsUpdateResponse", first.json())
    assert first.json()["recordsIdsAdded"] == ["501", "502"]
    assert first.json()["recordIdsMissing"] == ["404"]
    again = session.put(url, json=["501"]).json()
    assert again["recordsIdsAdded"] == []
    assert hubspot.list_members("77") == ["501", "502"]


def test_memberships_add_refuses_unknown_and_dynamic_lists(
    hubspot: HubSpotEmulator, session, validate
) -> None:
    missing = session.put(hubspot.url("/crm/v3/lists/4242/memberships/add"), json=["1"])
    assert missing.status_code == 404
    validate("lists.json", "Error", missing.json())
    hubspot.set_list("78", processing_type="DYNAMIC", object_type_id="0-1")
    dynamic = session.put(hubspot.url("/crm/v3/lists/78/memberships/add"), json=["1"])
    assert dynamic.status_code == 400
    assert "DYNAMIC" in dynamic.json()["message"]
