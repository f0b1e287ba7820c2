"""HubSpot's official Python SDK writes through the emulator's outbox endpoints as it would
through api.hubapi.com: upserts, the task search, default associations, contact lists and
properties, each answer deserialised into the SDK's own models."""

from __future__ import annotations

import pytest
from hubspot import HubSpot
from hubspot.crm.associations.v4 import (
    BatchInputPublicDefaultAssociationMultiPost,
    PublicDefaultAssociationMultiPost,
    PublicObjectId,
)
from hubspot.crm.contacts import (
    BatchInputSimplePublicObjectBatchInputUpsert,
    SimplePublicObjectBatchInputUpsert,
)
from hubspot.crm.lists import ListCreateRequest, MembershipChangeRequest
from hubspot.crm.objects.calls import (
    BatchInputSimplePublicObjectBatchInputUpsert as CallUpserts,
)
from hubspot.crm.objects.calls import (
    SimplePublicObjectBatchInputUpsert as CallUpsert,
)
from hubspot.crm.objects.tasks import (
    BatchInputSimplePublicObjectBatchInputUpsert as TaskUpserts,
)
from hubspot.crm.objects.tasks import Filter, FilterGroup, PublicObjectSearchRequest
from hubspot.crm.objects.tasks import (
    SimplePublicObjectBatchInputUpsert as TaskUpsert,
)
from hubspot.crm.properties import PropertyCreate
from hubspot.crm.properties.exceptions import ApiException as PropertyApiException

from morpheus_pipelines.devtools.emulators import HubSpotEmulator

DUE = "2026-12-01T09:00:00.000Z"


@pytest.fixture
def portal(make_hubspot) -> HubSpotEmulator:
    return make_hubspot(morpheus_properties=True)


def _client(emu: HubSpotEmulator) -> HubSpot:
    return HubSpot(access_token=emu.token, host=emu.base_url)


def _task(key: str, **properties: str) -> TaskUpsert:
    return TaskUpsert(
        id_property="morpheus_intent_key",
        id=key,
        properties={"hs_timestamp": DUE, "hs_task_subject": "Call back"} | properties,
    )


def test_sdk_upserts_contacts_by_email(portal: HubSpotEmulator) -> None:
    api = _client(portal).crm.contacts.batch_api
    body = BatchInputSimplePublicObjectBatchInputUpsert(
        inputs=[
            SimplePublicObjectBatchInputUpsert(
                id_property="email", id="Mei@Example.com", properties={"firstname": "Mei"}
            )
        ]
    )
    first = api.upsert(body)
    second = api.upsert(body)

    assert first.status == "COMPLETE"
    assert [r.new for r in first.results + second.results] == [True, False]
    assert first.results[0].id == second.results[0].id
    assert portal.contact_by_email("mei@example.com")["properties"]["firstname"] == "Mei"


def test_sdk_upserts_and_searches_tasks(portal: HubSpotEmulator) -> None:
    tasks = _client(portal).crm.objects.tasks
    written = tasks.batch_api.upsert(TaskUpserts(inputs=[_task("intent-1"), _task("intent-2")]))
    portal.complete_task(written.results[0].id)

    found = tasks.search_api.do_search(
        PublicObjectSearchRequest(
            filter_groups=[
                FilterGroup(
                    filters=[Filter(property_name="hs_lastmodifieddate", operator="GTE", value="0")]
                )
            ],
            sorts=["hs_lastmodifieddate"],
            properties=["hs_task_status"],
            limit=200,
            after="0",
        )
    )

    assert found.total == 2
    assert found.results[-1].id == written.results[0].id
    assert found.results[-1].properties["hs_task_status"] == "COMPLETED"


def test_sdk_upserts_calls(portal: HubSpotEmulator) -> None:
    api = _client(portal).crm.objects.calls.batch_api
    answer = api.upsert(
        CallUpserts(
            inputs=[
                CallUpsert(
                    id_property="morpheus_intent_key",
                    id="call-1",
                    properties={"hs_timestamp": DUE, "hs_call_direction": "OUTBOUND"},
                )
            ]
        )
    )
    assert answer.results[0].properties["morpheus_intent_key"] == "call-1"
    assert list(portal.calls()) == [answer.results[0].id]


def test_sdk_associates_a_task_with_its_contact(portal: HubSpotEmulator) -> None:
    client = _client(portal)
    task = client.crm.objects.tasks.batch_api.upsert(TaskUpserts(inputs=[_task("intent-1")]))
    portal.set_contact("501", {"email": "a@example.com"})
    pair = PublicDefaultAssociationMultiPost(
        _from=PublicObjectId(id=task.results[0].id), to=PublicObjectId(id="501")
    )

    answer = client.crm.associations.v4.batch_api.create_default(
        "tasks", "contacts", BatchInputPublicDefaultAssociationMultiPost(inputs=[pair])
    )

    spec = {(r._from.id, r.to.id): r.association_spec.association_type_id for r in answer.results}
    assert spec[(task.results[0].id, "501")] == 204
    assert portal.associations("contacts", "tasks") == {"501": {task.results[0].id}}


def test_sdk_creates_finds_fills_and_clears_a_contact_list(portal: HubSpotEmulator) -> None:
    lists = _client(portal).crm.lists
    portal.set_contact("501", {"email": "a@example.com"})
    created = lists.lists_api.create(
        ListCreateRequest(name="Rep calls", object_type_id="0-1", processing_type="MANUAL")
    )
    list_id = created.list.list_id

    found = lists.lists_api.get_by_name("Rep calls", "0-1")
    change = lists.memberships_api.add_and_remove(
        list_id, MembershipChangeRequest(record_ids_to_add=["501"], record_ids_to_remove=[])
    )
    members = portal.list_members(list_id)
    lists.memberships_api.remove_all(list_id)

    assert found.list.list_id == list_id
    assert created.list.processing_type == "MANUAL"
    assert change.records_ids_added == ["501"]
    assert members == ["501"]
    assert portal.list_members(list_id) == []


def test_sdk_creates_a_unique_property_and_gets_409_the_second_time(make_hubspot) -> None:
    portal = make_hubspot(morpheus_properties=False)
    api = _client(portal).crm.properties.core_api
    definition = PropertyCreate(
        name="morpheus_lead_key",
        label="Morpheus lead key",
        type="string",
        field_type="text",
        group_name="contactinformation",
        has_unique_value=True,
    )

    created = api.create("contacts", definition)
    read = api.get_by_name("contacts", "morpheus_lead_key")
    with pytest.raises(PropertyApiException) as again:
        api.create("contacts", definition)

    assert (created.name, created.has_unique_value) == ("morpheus_lead_key", True)
    assert read.has_unique_value is True
    assert again.value.status == 409
