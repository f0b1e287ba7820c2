"""HubSpot's official Python SDK talks to the emulator as it would to api.hubapi.com."""

from __future__ import annotations

import pytest
from hubspot import HubSpot
from hubspot.crm.companies import BatchReadInputSimplePublicObjectId, SimplePublicObjectId
from hubspot.crm.lists.exceptions import ApiException

from morpheus_pipelines.devtools.emulators import HubSpotEmulator

LIST_ID = "19544"


def _client(emu: HubSpotEmulator, token: str | None = None) -> HubSpot:
    # Every SDK Configuration takes ``host``; DiscoveryBase passes extra kwargs through.
    return HubSpot(access_token=token or emu.token, host=emu.base_url)


def test_sdk_reads_list(hubspot: HubSpotEmulator) -> None:
    fetched = _client(hubspot).crm.lists.lists_api.get_by_id(LIST_ID)
    assert fetched.list.list_id == LIST_ID
    assert fetched.list.processing_status == "COMPLETE"
    assert fetched.list.size == 260
    assert fetched.list.object_type_id == "0-2"


def test_sdk_pages_memberships(hubspot: HubSpotEmulator) -> None:
    api = _client(hubspot).crm.lists.memberships_api
    ids: list[str] = []
    after = None
    while True:
        page = api.get_page(LIST_ID, limit=250, **({"after": after} if after else {}))
        ids += [m.record_id for m in page.results]
        if page.paging is None or page.paging.next is None:
            break
        after = page.paging.next.after
    assert ids == [str(1000 + i) for i in range(260)]
    assert hubspot.log.statuses("memberships") == [200, 200]


def test_sdk_batch_reads_companies(hubspot: HubSpotEmulator) -> None:
    api = _client(hubspot).crm.companies.batch_api
    body = BatchReadInputSimplePublicObjectId(
        inputs=[SimplePublicObjectId(id=str(1000 + i)) for i in range(100)],
        properties=["name", "domain", "portal_id__c", "website"],
        properties_with_history=[],
    )
    result = api.read(body)
    assert result.status == "COMPLETE"
    assert len(result.results) == 100
    first = result.results[0]
    assert first.id == "1000"
    assert first.properties["portal_id__c"] == "500000"
    assert first.properties["domain"] == "company0.com.sg"
    (entry,) = hubspot.log.entries("batch_read")
    assert entry.body["propertiesWithHistory"] == []


def test_sdk_batch_read_207_deserialises_errors(hubspot: HubSpotEmulator) -> None:
    hubspot.remove_company("1001")
    body = BatchReadInputSimplePublicObjectId(
        inputs=[SimplePublicObjectId(id="1000"), SimplePublicObjectId(id="1001")],
        properties=["name"],
        properties_with_history=[],
    )
    result = _client(hubspot).crm.companies.batch_api.read(body)
    assert [r.id for r in result.results] == ["1000"]
    assert result.errors[0].category == "OBJECT_NOT_FOUND"
    assert result.errors[0].context == {"ids": ["1001"]}


def test_sdk_reads_owners(hubspot: HubSpotEmulator) -> None:
    page = _client(hubspot).crm.owners.owners_api.get_page(limit=100)
    assert [o.email for o in page.results] == ["mei@example.com", "raj@example.com"]


def test_sdk_wrong_token_is_401(hubspot: HubSpotEmulator) -> None:
    with pytest.raises(ApiException) as info:
        _client(hubspot, token="wrong").crm.lists.lists_api.get_by_id(LIST_ID)
    assert info.value.status == 401
