"""The emulator's engagement search speaks HubSpot's generic object-search contract (the
contacts spec's request and response schemas, which every CRM object's search shares), keeps
its 10,000-result paging cap, and serves associations to contacts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import requests

from morpheus_pipelines.devtools.emulators import HubSpotEmulator

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
SEARCH = "/crm/v3/objects/calls/search"


def _search(since: datetime, after: int = 0, limit: int = 2) -> dict:
    return {
        "filterGroups": [
            {
                "filters": [
                    {
                        "propertyName": "hs_lastmodifieddate",
                        "operator": "GTE",
                        "value": str(int(since.timestamp() * 1000)),
                    }
                ]
            }
        ],
        "sorts": ["hs_lastmodifieddate"],  # ascending; the spec types a sort as a string
        "properties": ["hs_call_direction"],
        "limit": limit,
        "after": str(after),
    }


def test_search_filters_sorts_and_pages_as_the_spec_says(
    hubspot: HubSpotEmulator, session: requests.Session, validate
) -> None:
    for n in range(5):
        hubspot.set_engagement(
            "calls", 100 + n, {"hs_call_direction": "OUTBOUND"}, modified_at=T0 + timedelta(hours=n)
        )
    validate("contacts.json", "PublicObjectSearchRequest", _search(T0))

    first = session.post(f"{hubspot.base_url}{SEARCH}", json=_search(T0 + timedelta(hours=1)))
    body = first.json()

    assert first.status_code == 200
    validate("contacts.json", "CollectionResponseWithTotalSimplePublicObject", body)
    assert body["total"] == 4
    assert [r["id"] for r in body["results"]] == ["101", "102"]
    second = session.post(
        f"{hubspot.base_url}{SEARCH}",
        json=_search(T0 + timedelta(hours=1), after=int(body["paging"]["next"]["after"])),
    ).json()
    assert [r["id"] for r in second["results"]] == ["103", "104"]
    assert "paging" not in second


def test_search_refuses_to_page_past_ten_thousand(
    hubspot: HubSpotEmulator, session: requests.Session, validate
) -> None:
    answer = session.post(f"{hubspot.base_url}{SEARCH}", json=_search(T0, after=9_999, limit=2))
    assert answer.status_code == 400
    validate("contacts.json", "Error", answer.json())


def test_associations_name_each_engagements_contacts(
    hubspot: HubSpotEmulator, session: requests.Session
) -> None:
    hubspot.set_engagement("emails", 7, {}, contact_ids=[501, 502])
    hubspot.set_engagement("emails", 8, {})
    answer = session.post(
        f"{hubspot.base_url}/crm/v4/associations/emails/contacts/batch/read",
        json={"inputs": [{"id": "7"}, {"id": "8"}]},
    ).json()
    assert answer["status"] == "COMPLETE"
    assert [(r["from"]["id"], [t["toObjectId"] for t in r["to"]]) for r in answer["results"]] == [
        ("7", ["501", "502"])  # strings, as associations.json types toObjectId
    ]
