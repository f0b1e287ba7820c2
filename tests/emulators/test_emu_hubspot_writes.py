"""The HubSpot emulator's write endpoints (the ones Morpheus's outbox uses) validate their
input as HubSpot does and answer in HubSpot's shapes, checked against its OpenAPI files."""

from __future__ import annotations

from datetime import datetime

import pytest
import requests

from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.devtools.emulators.hubspot import sample_data

CONTACTS_UPSERT = "/crm/v3/objects/contacts/batch/upsert"
TASKS_UPSERT = "/crm/v3/objects/tasks/batch/upsert"
CALLS_UPSERT = "/crm/v3/objects/calls/batch/upsert"
TASKS_SEARCH = "/crm/v3/objects/tasks/search"
TASKS_TO_CONTACTS = "/crm/v4/associations/tasks/contacts/batch/associate/default"
DUE = "2026-12-01T09:00:00.000Z"


@pytest.fixture
def portal(make_hubspot) -> HubSpotEmulator:
    """The test portal, with Morpheus's unique key properties created."""
    return make_hubspot(morpheus_properties=True)


def _upsert(id_property: str, key: str, **properties: str) -> dict:
    return {"idProperty": id_property, "id": key, "properties": properties}


def _task(key: str, **properties: str) -> dict:
    return _upsert("morpheus_intent_key", key, **({"hs_timestamp": DUE} | properties))


def _post(session: requests.Session, emu: HubSpotEmulator, path: str, body) -> requests.Response:
    return session.post(emu.url(path), json=body)


# -- contacts upsert ------------------------------------------------------------------------


def test_contacts_upsert_creates_then_updates_by_email_in_any_case(
    portal: HubSpotEmulator, session, validate
) -> None:
    body = {"inputs": [_upsert("email", "Mei.Tan@Example.com", firstname="Mei")]}
    validate("contacts.json", "BatchInputSimplePublicObjectBatchInputUpsert", body)

    first = _post(session, portal, CONTACTS_UPSERT, body)
    again = _post(
        session,
        portal,
        CONTACTS_UPSERT,
        {"inputs": [_upsert("email", "mei.tan@example.COM", lastname="Tan")]},
    )

    assert first.status_code == again.status_code == 200
    validate("contacts.json", "BatchResponseSimplePublicUpsertObject", first.json())
    validate("contacts.json", "BatchResponseSimplePublicUpsertObject", again.json())
    [created], [updated] = first.json()["results"], again.json()["results"]
    assert (created["new"], updated["new"]) == (True, False)
    assert created["id"] == updated["id"]
    assert updated["properties"]["email"] == "mei.tan@example.com"
    assert list(portal.contacts()) == [created["id"]]
    stored = portal.contact_by_email("MEI.TAN@example.com")
    assert stored["properties"].items() >= {"firstname": "Mei", "lastname": "Tan"}.items()
    assert stored["writes"] == 2


def test_contacts_upsert_by_the_lead_key(portal: HubSpotEmulator, session, validate) -> None:
    inputs = [_upsert("morpheus_lead_key", "lead-1", email="a@example.com", firstname="A")]
    first = _post(session, portal, CONTACTS_UPSERT, {"inputs": inputs}).json()
    inputs = [_upsert("morpheus_lead_key", "lead-1", firstname="Ana")]
    second = _post(session, portal, CONTACTS_UPSERT, {"inputs": inputs}).json()

    validate("contacts.json", "BatchResponseSimplePublicUpsertObject", second)
    assert first["results"][0]["id"] == second["results"][0]["id"]
    assert portal.contact_by_email("a@example.com")["properties"]["firstname"] == "Ana"


@pytest.mark.parametrize(
    ("inputs", "reason"),
    [
        ([_upsert("firstname", "Mei")], "non-unique 0-1 property firstname"),
        ([_upsert("hs_object_id", "1")], "non-unique 0-1 property hs_object_id"),
        ([{"id": "a@example.com", "properties": {}}], "needs an 'idProperty'"),
        ([_upsert("email", f"c{i}@example.com") for i in range(101)], "limit of 100"),
        ([_upsert("email", "a@example.com"), _upsert("email", "A@example.com")], "Duplicate"),
        ([{"idProperty": "email", "id": "a@example.com", "properties": {"n": 1}}], "strings"),
        ([_upsert("email", "a@example.com", email="b@example.com")], "differs from the input"),
    ],
)
def test_contacts_upsert_refuses_a_malformed_batch_whole(
    portal: HubSpotEmulator, session, validate, inputs, reason
) -> None:
    answer = _post(session, portal, CONTACTS_UPSERT, {"inputs": inputs})

    assert answer.status_code == 400
    validate("contacts.json", "Error", answer.json())
    assert answer.json()["category"] == "VALIDATION_ERROR"
    assert reason in answer.json()["message"]
    assert portal.contacts() == {}


def test_an_upsert_keyed_by_a_property_not_created_is_refused(
    make_hubspot, session, validate
) -> None:
    portal = make_hubspot(morpheus_properties=False)
    keyed = _post(
        session, portal, CONTACTS_UPSERT, {"inputs": [_upsert("morpheus_lead_key", "lead-1")]}
    )
    written = _post(
        session,
        portal,
        CONTACTS_UPSERT,
        {"inputs": [_upsert("email", "a@example.com", morpheus_lead_key="lead-1")]},
    )

    assert keyed.status_code == written.status_code == 400
    validate("contacts.json", "Error", keyed.json())
    assert "non-unique 0-1 property morpheus_lead_key" in keyed.json()["message"]
    assert "PROPERTY_DOESNT_EXIST" in written.json()["message"]


def test_one_batch_reaching_the_same_new_contact_by_two_keys_is_refused(
    portal: HubSpotEmulator, session
) -> None:
    inputs = [
        _upsert("email", "a@example.com", morpheus_lead_key="lead-1"),
        _upsert("morpheus_lead_key", "lead-1", firstname="A"),
    ]
    answer = _post(session, portal, CONTACTS_UPSERT, {"inputs": inputs})

    assert answer.status_code == 400
    assert "Duplicate IDs" in answer.json()["message"]
    assert portal.contacts() == {}


def test_a_unique_value_another_contact_holds_is_refused(portal: HubSpotEmulator, session) -> None:
    inputs = [_upsert("email", "a@example.com", morpheus_lead_key="lead-1")]
    assert _post(session, portal, CONTACTS_UPSERT, {"inputs": inputs}).status_code == 200

    inputs = [_upsert("email", "b@example.com", morpheus_lead_key="lead-1")]
    taken = _post(session, portal, CONTACTS_UPSERT, {"inputs": inputs})

    assert taken.status_code == 400
    assert "morpheus_lead_key" in taken.json()["message"]
    assert portal.contact_by_email("b@example.com") is None


# -- tasks and calls ------------------------------------------------------------------------


def test_tasks_upsert_by_intent_key_validates_and_is_idempotent(
    portal: HubSpotEmulator, session, validate
) -> None:
    body = {"inputs": [_task("intent-1", hs_task_subject="Call Mei", hs_task_status="NOT_STARTED")]}
    validate("tasks.json", "BatchInputSimplePublicObjectBatchInputUpsert", body)

    first = _post(session, portal, TASKS_UPSERT, body)
    again = _post(session, portal, TASKS_UPSERT, body)

    assert first.status_code == again.status_code == 200
    validate("tasks.json", "BatchResponseSimplePublicUpsertObject", first.json())
    [task_id] = portal.tasks()
    assert first.json()["results"][0]["id"] == again.json()["results"][0]["id"] == task_id
    stored = portal.tasks()[task_id]
    assert stored["properties"]["hs_task_subject"] == "Call Mei"
    assert stored["writes"] == 2


@pytest.mark.parametrize(
    ("inputs", "reason"),
    [
        ([_upsert("morpheus_intent_key", "i-1", hs_task_subject="x")], "without hs_timestamp"),
        ([_task("i-1", hs_task_status="DONE")], "INVALID_OPTION"),
        ([_task("i-1", hs_task_priority="URGENT")], "INVALID_OPTION"),
        ([_task("i-1", hs_timestamp="next tuesday")], "INVALID_DATETIME"),
        ([_upsert("hs_task_subject", "x", hs_timestamp=DUE)], "non-unique 0-27 property"),
    ],
)
def test_tasks_upsert_refuses_what_hubspot_refuses(
    portal: HubSpotEmulator, session, validate, inputs, reason
) -> None:
    answer = _post(session, portal, TASKS_UPSERT, {"inputs": inputs})

    assert answer.status_code == 400
    validate("tasks.json", "Error", answer.json())
    assert reason in answer.json()["message"]
    assert portal.tasks() == {}


def test_an_existing_task_updates_without_hs_timestamp(portal: HubSpotEmulator, session) -> None:
    _post(session, portal, TASKS_UPSERT, {"inputs": [_task("intent-1")]})
    inputs = [_upsert("morpheus_intent_key", "intent-1", hs_task_status="COMPLETED")]

    assert _post(session, portal, TASKS_UPSERT, {"inputs": inputs}).status_code == 200
    [task] = portal.tasks().values()
    assert task["properties"]["hs_task_status"] == "COMPLETED"


def test_calls_upsert_validates(portal: HubSpotEmulator, session, validate) -> None:
    body = {
        "inputs": [
            _upsert(
                "morpheus_intent_key",
                "call-1",
                hs_timestamp="1764579600000",
                hs_call_title="Intro call",
                hs_call_direction="OUTBOUND",
                hs_call_status="COMPLETED",
                hs_call_duration="61000",
            )
        ]
    }
    answer = _post(session, portal, CALLS_UPSERT, body)
    refused = _post(
        session, portal, CALLS_UPSERT, {"inputs": [_task("call-2", hs_call_direction="SIDEWAYS")]}
    )

    assert answer.status_code == 200
    validate("calls.json", "BatchResponseSimplePublicUpsertObject", answer.json())
    [call] = portal.calls().values()
    assert call["properties"]["hs_call_duration"] == "61000"
    assert refused.status_code == 400


def _modified_since(ms: int, operator: str = "GTE", *, after: int = 0, limit: int = 200) -> dict:
    return {
        "filterGroups": [
            {
                "filters": [
                    {"propertyName": "hs_lastmodifieddate", "operator": operator, "value": str(ms)}
                ]
            }
        ],
        "sorts": ["hs_lastmodifieddate"],
        "properties": ["hs_task_status"],
        "limit": limit,
        "after": str(after),
    }


def test_tasks_search_sees_a_completed_task_move_to_the_end(
    portal: HubSpotEmulator, session, validate
) -> None:
    _post(session, portal, TASKS_UPSERT, {"inputs": [_task(f"intent-{n}") for n in range(3)]})
    first_id = next(iter(portal.tasks()))
    before = portal.tasks()[first_id]["properties"]["hs_lastmodifieddate"]
    portal.complete_task(first_id)
    after = portal.tasks()[first_id]["properties"]["hs_lastmodifieddate"]
    since = int(datetime.fromisoformat(before.replace("Z", "+00:00")).timestamp() * 1000)
    request = _modified_since(since, "GT")
    validate("tasks.json", "PublicObjectSearchRequest", request)

    answer = _post(session, portal, TASKS_SEARCH, request)

    assert answer.status_code == 200
    validate("tasks.json", "CollectionResponseWithTotalSimplePublicObject", answer.json())
    results = answer.json()["results"]
    assert after > before
    assert results[-1]["id"] == first_id
    assert results[-1]["properties"]["hs_task_status"] == "COMPLETED"


def test_tasks_search_keeps_the_200_and_10000_limits(portal: HubSpotEmulator, session) -> None:
    too_big = _post(session, portal, TASKS_SEARCH, _modified_since(0, limit=201))
    too_far = _post(session, portal, TASKS_SEARCH, _modified_since(0, after=9_900, limit=200))

    assert too_big.status_code == too_far.status_code == 400
    assert "10000" in too_far.json()["message"]


# -- associations ----------------------------------------------------------------------------


def _task_and_contact(session, portal: HubSpotEmulator) -> tuple[str, str]:
    task = _post(session, portal, TASKS_UPSERT, {"inputs": [_task("intent-1")]}).json()
    contact = _post(
        session, portal, CONTACTS_UPSERT, {"inputs": [_upsert("email", "a@example.com")]}
    ).json()
    return task["results"][0]["id"], contact["results"][0]["id"]


def test_default_association_validates_is_idempotent_and_is_read_back(
    portal: HubSpotEmulator, session, validate
) -> None:
    task_id, contact_id = _task_and_contact(session, portal)
    body = {"inputs": [{"from": {"id": task_id}, "to": {"id": contact_id}}]}
    validate("associations.json", "BatchInputPublicDefaultAssociationMultiPost", body)

    first = _post(session, portal, TASKS_TO_CONTACTS, body)
    again = _post(session, portal, TASKS_TO_CONTACTS, body)
    read = _post(
        session,
        portal,
        "/crm/v4/associations/tasks/contacts/batch/read",
        {"inputs": [{"id": task_id}]},
    ).json()

    assert first.status_code == again.status_code == 200
    validate("associations.json", "BatchResponsePublicDefaultAssociation", first.json())
    specs = {
        (r["from"]["id"], r["to"]["id"]): r["associationSpec"]["associationTypeId"]
        for r in first.json()["results"]
    }
    assert specs == {(task_id, contact_id): 204, (contact_id, task_id): 203}
    assert portal.associations("tasks", "contacts") == {task_id: {contact_id}}
    assert portal.associations("contacts", "tasks") == {contact_id: {task_id}}
    assert [t["toObjectId"] for t in read["results"][0]["to"]] == [contact_id]  # a string


def test_associating_an_unknown_record_fails_that_input_only(
    portal: HubSpotEmulator, session, validate
) -> None:
    task_id, contact_id = _task_and_contact(session, portal)
    body = {
        "inputs": [
            {"from": {"id": task_id}, "to": {"id": contact_id}},
            {"from": {"id": task_id}, "to": {"id": "404"}},
            {"from": {"id": "999"}, "to": {"id": contact_id}},
        ]
    }
    answer = _post(session, portal, TASKS_TO_CONTACTS, body)

    assert answer.status_code == 207
    validate("associations.json", "BatchResponsePublicDefaultAssociation", answer.json())
    contexts = [e["context"] for e in answer.json()["errors"]]
    assert contexts == [{"fromObjectId": ["999"]}, {"toObjectId": ["404"]}]
    assert portal.associations("tasks", "contacts") == {task_id: {contact_id}}


def test_an_association_type_without_a_default_is_refused(
    portal: HubSpotEmulator, session, validate
) -> None:
    answer = _post(
        session,
        portal,
        "/crm/v4/associations/tasks/owners/batch/associate/default",
        {"inputs": [{"from": {"id": "1"}, "to": {"id": "2"}}]},
    )
    assert answer.status_code == 400
    validate("associations.json", "Error", answer.json())


# -- lists -----------------------------------------------------------------------------------


def _create_list(session, portal: HubSpotEmulator, name: str, **extra) -> requests.Response:
    body = {"name": name, "objectTypeId": "0-1", "processingType": "MANUAL"} | extra
    return _post(session, portal, "/crm/v3/lists", body)


def test_a_contact_list_is_created_found_by_name_and_its_name_is_unique(
    portal: HubSpotEmulator, session, validate
) -> None:
    request = {"name": "Rep: Mei / calls", "objectTypeId": "0-1", "processingType": "MANUAL"}
    validate("lists.json", "ListCreateRequest", request)

    created = _post(session, portal, "/crm/v3/lists", request)
    found = session.get(
        portal.url("/crm/v3/lists/object-type-id/0-1/name/Rep%3A%20Mei%20%2F%20calls")
    )
    duplicate = _create_list(session, portal, "rep: mei / CALLS")
    missing = session.get(portal.url("/crm/v3/lists/object-type-id/0-1/name/Nobody"))

    assert created.status_code == found.status_code == 200
    validate("lists.json", "ListCreateResponse", created.json())
    validate("lists.json", "ListFetchResponse", found.json())
    list_id = created.json()["list"]["listId"]
    assert found.json()["list"]["listId"] == list_id
    assert portal.list_by_name("Rep: Mei / calls") == list_id
    assert duplicate.status_code == 400
    validate("lists.json", "Error", duplicate.json())
    assert "already exists" in duplicate.json()["message"]
    assert missing.status_code == 404
    validate("lists.json", "Error", missing.json())


def test_memberships_add_and_remove_and_clear(portal: HubSpotEmulator, session, validate) -> None:
    for n in range(3):
        portal.set_contact(f"50{n}", {"email": f"c{n}@example.com"})
    list_id = _create_list(session, portal, "Callbacks").json()["list"]["listId"]
    url = portal.url(f"/crm/v3/lists/{list_id}/memberships/add-and-remove")
    change = {"recordIdsToAdd": ["500", "501", "404"], "recordIdsToRemove": []}
    validate("lists.json", "MembershipChangeRequest", change)

    added = session.put(url, json=change)
    swapped = session.put(url, json={"recordIdsToAdd": ["502"], "recordIdsToRemove": ["500"]})
    repeated = session.put(url, json={"recordIdsToAdd": ["502"], "recordIdsToRemove": ["500"]})

    assert added.status_code == swapped.status_code == 200
    validate("lists.json", "MembershipsUpdateResponse", added.json())
    assert added.json()["recordsIdsAdded"] == ["500", "501"]
    assert added.json()["recordIdsMissing"] == ["404"]
    assert swapped.json() == {
        "recordsIdsAdded": ["502"],
        "recordIdsRemoved": ["500"],
        "recordIdsMissing": [],
    }
    assert repeated.json()["recordsIdsAdded"] == repeated.json()["recordIdsRemoved"] == []
    assert portal.list_members(list_id) == ["501", "502"]

    cleared = session.delete(portal.url(f"/crm/v3/lists/{list_id}/memberships"))

    assert cleared.status_code == 204
    assert cleared.content == b""
    assert portal.list_members(list_id) == []


@pytest.mark.parametrize(
    "body",
    [
        {"recordIdsToAdd": ["1"]},
        {"recordIdsToAdd": [1], "recordIdsToRemove": []},
        {"recordIdsToAdd": [str(i) for i in range(100_001)], "recordIdsToRemove": []},
    ],
    ids=["missing-array", "numbers", "over-100000"],
)
def test_a_malformed_membership_change_is_refused(
    portal: HubSpotEmulator, session, validate, body
) -> None:
    list_id = _create_list(session, portal, "Callbacks").json()["list"]["listId"]
    answer = session.put(
        portal.url(f"/crm/v3/lists/{list_id}/memberships/add-and-remove"), json=body
    )
    assert answer.status_code == 400
    validate("lists.json", "Error", answer.json())


def test_dynamic_and_unknown_lists_refuse_membership_writes(
    portal: HubSpotEmulator, session
) -> None:
    portal.set_list("78", processing_type="DYNAMIC", object_type_id="0-1")
    change = {"recordIdsToAdd": [], "recordIdsToRemove": []}

    changed = session.put(portal.url("/crm/v3/lists/78/memberships/add-and-remove"), json=change)
    dynamic = session.delete(portal.url("/crm/v3/lists/78/memberships"))
    unknown = session.delete(portal.url("/crm/v3/lists/4242/memberships"))

    assert changed.status_code == dynamic.status_code == 400
    assert "DYNAMIC" in dynamic.json()["message"]
    assert unknown.status_code == 404


def test_a_list_of_100000_members_cannot_be_cleared_at_once(
    portal: HubSpotEmulator, session
) -> None:
    portal.set_list("79", object_type_id="0-1", members=[str(i) for i in range(100_000)])
    answer = session.delete(portal.url("/crm/v3/lists/79/memberships"))
    assert answer.status_code == 400
    assert len(portal.list_members("79")) == 100_000


# -- properties ------------------------------------------------------------------------------


def _property(name: str, **extra) -> dict:
    return {
        "name": name,
        "label": "Morpheus lead key",
        "type": "string",
        "fieldType": "text",
        "groupName": "contactinformation",
        "hasUniqueValue": True,
    } | extra


def test_a_unique_property_is_created_once(make_hubspot, session, validate) -> None:
    portal = make_hubspot(morpheus_properties=False)
    created = _post(session, portal, "/crm/v3/properties/contacts", _property("morpheus_lead_key"))
    again = _post(session, portal, "/crm/v3/properties/contacts", _property("morpheus_lead_key"))
    read = session.get(portal.url("/crm/v3/properties/contacts/morpheus_lead_key"))

    assert created.status_code == 201
    assert created.json()["hasUniqueValue"] is True
    assert read.json() == created.json()
    assert again.status_code == 409
    validate("contacts.json", "Error", again.json())
    assert again.json()["category"] == "OBJECT_ALREADY_EXISTS"
    assert "morpheus_lead_key" in portal.unique_properties("contacts")


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/crm/v3/properties/contacts", _property("Bad Name"), 400),
        ("/crm/v3/properties/contacts", {"name": "x_key"}, 400),
        ("/crm/v3/properties/contacts", _property("email"), 409),
        ("/crm/v3/properties/widgets", _property("x_key"), 400),
    ],
    ids=["name", "required-fields", "built-in", "object-type"],
)
def test_a_bad_property_is_refused(portal: HubSpotEmulator, session, path, body, status) -> None:
    assert _post(session, portal, path, body).status_code == status


def test_the_sample_portal_already_has_the_unique_properties() -> None:
    portal = HubSpotEmulator(sample_data())
    assert portal.unique_properties("contacts") == {"email", "morpheus_lead_key"}
    assert portal.unique_properties("tasks") == {"morpheus_intent_key"}
    assert portal.unique_properties("calls") == {"morpheus_intent_key"}
    assert (
        HubSpotEmulator(sample_data(), morpheus_properties=False).unique_properties("tasks")
        == set()
    )


# -- faults ----------------------------------------------------------------------------------


def test_a_partial_failure_fails_the_named_inputs_and_writes_the_rest(
    portal: HubSpotEmulator, session, validate
) -> None:
    fault = portal.fail_inputs("contacts_batch_upsert", ids=["B@example.com"])
    inputs = [_upsert("email", f"{c}@example.com") for c in "abc"]

    answer = _post(session, portal, CONTACTS_UPSERT, {"inputs": inputs})

    assert answer.status_code == 207
    validate("contacts.json", "BatchResponseSimplePublicUpsertObjectWithErrors", answer.json())
    [error] = answer.json()["errors"]
    assert error["context"] == {"ids": ["b@example.com"]}
    emails = sorted(r["properties"]["email"] for r in answer.json()["results"])
    assert emails == ["a@example.com", "c@example.com"]
    assert portal.contact_by_email("b@example.com") is None
    assert fault.fired == 1
    assert _post(session, portal, CONTACTS_UPSERT, {"inputs": inputs}).status_code == 200


def test_a_partial_failure_can_fail_every_kth_input(
    portal: HubSpotEmulator, session, validate
) -> None:
    portal.fail_inputs("tasks_batch_upsert", every=2)
    answer = _post(session, portal, TASKS_UPSERT, {"inputs": [_task(f"i-{n}") for n in range(5)]})

    assert answer.status_code == 207
    validate("tasks.json", "BatchResponseSimplePublicUpsertObjectWithErrors", answer.json())
    assert answer.json()["errors"][0]["context"]["ids"] == ["i-1", "i-3"]
    assert len(portal.tasks()) == 3


def test_a_partial_failure_of_associations_names_the_pair(
    portal: HubSpotEmulator, session, validate
) -> None:
    task_id, contact_id = _task_and_contact(session, portal)
    portal.fail_inputs("associations_associate_default", ids=[f"{task_id}:{contact_id}"])
    body = {"inputs": [{"from": {"id": task_id}, "to": {"id": contact_id}}]}

    answer = _post(session, portal, TASKS_TO_CONTACTS, body)

    assert answer.status_code == 207
    validate("associations.json", "BatchResponsePublicDefaultAssociation", answer.json())
    assert answer.json()["errors"][0]["context"] == {
        "fromObjectId": [task_id],
        "toObjectId": [contact_id],
    }
    assert portal.associations("tasks", "contacts") == {}


def test_a_partial_failure_needs_a_batch_write_endpoint(portal: HubSpotEmulator) -> None:
    with pytest.raises(ValueError, match="need one of the endpoints"):
        portal.fail_inputs("memberships_add_and_remove")
    with pytest.raises(ValueError, match="need one of the endpoints"):
        portal.fail("partial_failure")
    with pytest.raises(ValueError, match="every is 1-based"):
        portal.fail_inputs("tasks_batch_upsert", every=0)


def test_a_lost_answer_leaves_the_write_applied(portal: HubSpotEmulator, session) -> None:
    portal.lose_answer("contacts_batch_upsert")

    with pytest.raises(requests.ConnectionError):
        _post(session, portal, CONTACTS_UPSERT, {"inputs": [_upsert("email", "a@example.com")]})

    record = portal.log.last("contacts_batch_upsert")
    assert (record.outcome, record.status, record.fault) == ("answer_lost", None, "answer_lost")
    assert portal.contact_by_email("a@example.com")["writes"] == 1


def test_a_held_answer_times_the_client_out_after_the_write(
    portal: HubSpotEmulator, session
) -> None:
    portal.lose_answer("tasks_batch_upsert", hold=5.0)

    with pytest.raises(requests.ReadTimeout):
        session.post(portal.url(TASKS_UPSERT), json={"inputs": [_task("i-1")]}, timeout=(1, 0.2))

    assert portal.log.wait_until(lambda rs: rs[-1].outcome == "answer_lost", timeout=5)
    assert len(portal.tasks()) == 1


def _endpoint_requests(portal: HubSpotEmulator) -> dict[str, tuple[str, str, object]]:
    """(method, path, body) of one valid request per new endpoint."""
    portal.set_contact("501", {"email": "a@example.com"})
    portal.set_engagement("tasks", 901, {"hs_timestamp": DUE})
    portal.set_list("77", name="Callbacks", object_type_id="0-1")
    return {
        "contacts_batch_upsert": (
            "POST",
            CONTACTS_UPSERT,
            {"inputs": [_upsert("email", "b@x.io")]},
        ),
        "tasks_batch_upsert": ("POST", TASKS_UPSERT, {"inputs": [_task("i-1")]}),
        "calls_batch_upsert": ("POST", CALLS_UPSERT, {"inputs": [_task("c-1")]}),
        "engagements_search": ("POST", TASKS_SEARCH, _modified_since(0)),
        "associations_associate_default": (
            "POST",
            TASKS_TO_CONTACTS,
            {"inputs": [{"from": {"id": "901"}, "to": {"id": "501"}}]},
        ),
        "lists_create": (
            "POST",
            "/crm/v3/lists",
            {"name": "New", "objectTypeId": "0-1", "processingType": "MANUAL"},
        ),
        "list_by_name": ("GET", "/crm/v3/lists/object-type-id/0-1/name/Callbacks", None),
        "memberships_add_and_remove": (
            "PUT",
            "/crm/v3/lists/77/memberships/add-and-remove",
            {"recordIdsToAdd": ["501"], "recordIdsToRemove": []},
        ),
        "memberships_clear": ("DELETE", "/crm/v3/lists/77/memberships", None),
        "properties_create": ("POST", "/crm/v3/properties/calls", _property("x_key")),
        "property_read": ("GET", "/crm/v3/properties/contacts/morpheus_lead_key", None),
    }


NEW_ENDPOINTS = [
    "contacts_batch_upsert",
    "tasks_batch_upsert",
    "calls_batch_upsert",
    "engagements_search",
    "associations_associate_default",
    "lists_create",
    "list_by_name",
    "memberships_add_and_remove",
    "memberships_clear",
    "properties_create",
    "property_read",
]


@pytest.mark.parametrize("endpoint", NEW_ENDPOINTS)
def test_generic_faults_fire_on_every_new_endpoint(
    portal: HubSpotEmulator, session, validate, endpoint: str
) -> None:
    method, path, body = _endpoint_requests(portal)[endpoint]

    def send(timeout: float = 5.0) -> requests.Response:
        return session.request(method, portal.url(path), json=body, timeout=(1, timeout))

    portal.rate_limit(retry_after=3, endpoint=endpoint)
    portal.rate_limit(rate_headers=False, endpoint=endpoint)
    portal.fail(503, endpoint=endpoint)
    portal.slow(0.3, endpoint=endpoint)

    with_retry_after, bare, unavailable = send(), send(), send()
    with pytest.raises(requests.ReadTimeout):
        send(timeout=0.1)
    assert portal.log.wait_until(lambda rs: rs[-1].outcome == "responded", timeout=5)
    recovered = send()

    assert with_retry_after.status_code == bare.status_code == 429
    assert with_retry_after.headers["Retry-After"] == "3"
    assert "Retry-After" not in bare.headers
    assert bare.json()["policyName"] == "TEN_SECONDLY_ROLLING"
    assert unavailable.status_code == 503
    validate("contacts.json", "Error", unavailable.json())
    # The slow answer was a normal one, late: a creation it carried exists by now.
    assert recovered.status_code == {
        "lists_create": 400,
        "properties_create": 409,
        "memberships_clear": 204,
    }.get(endpoint, 200)
    assert [r.endpoint for r in portal.log.entries()] == [endpoint] * 5
