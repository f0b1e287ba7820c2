"""The HubSpot client's writes, over real HTTP against the emulator: upserts that stay one
object however often they are sent (even when HubSpot applied a write and its answer was
lost), 207 answers read input by input, rate limits waited with the injected sleep, contact
lists and unique properties ensured idempotently."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
import requests

from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.platform.clients.hubspot import (
    INTENT_KEY_PROPERTY,
    LEAD_KEY_PROPERTY,
    MEMBERSHIP_CHANGE_SIZE,
    NOT_IN_ANSWER,
    BatchWriteResult,
    HubSpotClient,
    HubSpotError,
    ObjectUpsert,
)
from morpheus_pipelines.platform.clients.hubspot.objects import write_result
from tests.support.hubspot import TOKEN, RecordingSleep

DUE = "2026-12-01T09:00:00.000Z"
MakeClient = Callable[..., HubSpotClient]


@pytest.fixture
def emulator() -> Iterator[HubSpotEmulator]:
    """An empty portal with Morpheus's unique key properties (``make_client`` talks to it)."""
    with HubSpotEmulator({"token": TOKEN}, morpheus_properties=True) as emu:
        yield emu
    assert emu.errors == []


def _contact(email: str, **properties: str) -> ObjectUpsert:
    return ObjectUpsert(id_property="email", id=email, properties=properties)


def _task(key: str, **properties: str) -> ObjectUpsert:
    return ObjectUpsert(INTENT_KEY_PROPERTY, key, {"hs_timestamp": DUE} | properties)


def _call(key: str) -> ObjectUpsert:
    return ObjectUpsert(INTENT_KEY_PROPERTY, key, {"hs_timestamp": DUE, "hs_call_title": "Intro"})


# -- upserts ---------------------------------------------------------------------------------


def test_upserting_a_contact_twice_makes_one_contact(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    client = make_client()
    first = client.batch_upsert_contacts([_contact("Mei@Example.com", firstname="Mei")])
    second = client.batch_upsert_contacts([_contact("mei@example.COM", lastname="Tan")])

    assert first.errors == second.errors == {}
    assert first.ids["Mei@Example.com"] == second.ids["mei@example.COM"]
    [stored] = emulator.contacts().values()
    assert stored["properties"]["email"] == "mei@example.com"
    assert (stored["properties"]["firstname"], stored["properties"]["lastname"]) == ("Mei", "Tan")


def test_a_contact_is_upserted_by_its_lead_key(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    client = make_client()
    key = ObjectUpsert(LEAD_KEY_PROPERTY, "lead-7", {"email": "raj@example.com"})
    first = client.batch_upsert_contacts([key])
    again = client.batch_upsert_contacts([key])

    assert first.ids == again.ids
    assert len(emulator.contacts()) == 1


def test_upserting_tasks_and_calls_twice_makes_one_of_each(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    client = make_client()
    tasks = [client.batch_upsert_tasks([_task("intent-1", hs_task_subject="Call")])]
    tasks.append(client.batch_upsert_tasks([_task("intent-1", hs_task_subject="Call Mei")]))
    calls = [client.batch_upsert_calls([_call("intent-2")]) for _ in range(2)]

    assert tasks[0].ids == tasks[1].ids and set(tasks[0].ids) == {"intent-1"}
    assert calls[0].ids == calls[1].ids and set(calls[0].ids) == {"intent-2"}
    [task] = emulator.tasks().values()
    assert task["properties"]["hs_task_subject"] == "Call Mei"
    assert task["writes"] == 2
    assert len(emulator.calls()) == 1


WRITES: dict[str, Callable[[HubSpotClient], BatchWriteResult]] = {
    "contacts_batch_upsert": lambda c: c.batch_upsert_contacts([_contact("a@example.com")]),
    "tasks_batch_upsert": lambda c: c.batch_upsert_tasks([_task("intent-1")]),
    "calls_batch_upsert": lambda c: c.batch_upsert_calls([_call("intent-1")]),
}


def _stored(emulator: HubSpotEmulator, endpoint: str) -> dict[str, dict]:
    return {
        "contacts_batch_upsert": emulator.contacts,
        "tasks_batch_upsert": emulator.tasks,
        "calls_batch_upsert": emulator.calls,
    }[endpoint]()


@pytest.mark.parametrize("endpoint", WRITES)
@pytest.mark.parametrize("hold", [0.0, 2.0], ids=["reset", "read-timeout"])
def test_a_write_applied_but_its_answer_lost_is_retried_into_one_object(
    emulator: HubSpotEmulator, make_client: MakeClient, endpoint: str, hold: float
) -> None:
    client = make_client(read_timeout=0.3)
    emulator.lose_answer(endpoint, hold=hold)

    result = WRITES[endpoint](client)

    [(record_id, record)] = _stored(emulator, endpoint).items()
    assert result.errors == {}
    assert list(result.ids.values()) == [record_id]
    assert record["writes"] == 2  # applied by the lost attempt and again by the retry
    assert [r.outcome for r in emulator.log.entries(endpoint)] == ["answer_lost", "responded"]
    assert client.stats.retries == 1


def test_a_207_names_exactly_the_failed_inputs(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    emulator.fail_inputs("tasks_batch_upsert", ids=["intent-2", "intent-4"])

    result = make_client().batch_upsert_tasks([_task(f"intent-{n}") for n in range(1, 6)])

    assert set(result.errors) == {"intent-2", "intent-4"}
    assert set(result.ids) == {"intent-1", "intent-3", "intent-5"}
    assert result.errors["intent-2"].startswith("VALIDATION_ERROR: Could not write")
    assert sorted(result.ids.values()) == sorted(emulator.tasks())
    assert not result.ok


def test_a_207_of_contacts_names_inputs_in_the_case_they_were_sent(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    emulator.fail_inputs("contacts_batch_upsert", every=2)

    result = make_client().batch_upsert_contacts([_contact("A@x.io"), _contact("B@x.io")])

    assert list(result.ids) == ["A@x.io"]
    assert list(result.errors) == ["B@x.io"]


def test_an_input_the_answer_leaves_out_is_an_error(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    # A 207 that answers one input and names no other, as a broken answer might.
    emulator.fail(
        "207",
        endpoint="calls_batch_upsert",
        body={
            "status": "COMPLETE",
            "results": [{"id": "11", "properties": {INTENT_KEY_PROPERTY: "intent-1"}}],
            "errors": [{"status": "error", "category": "RATE_LIMITS", "message": "slow down"}],
            "startedAt": DUE,
            "completedAt": DUE,
        },
    )

    result = make_client().batch_upsert_calls([_call("intent-1"), _call("intent-2")])

    assert result.ids == {"intent-1": "11"}
    assert result.errors == {
        "intent-2": f"{NOT_IN_ANSWER}; errors naming no input: RATE_LIMITS: slow down"
    }


def test_every_input_lands_in_exactly_one_dict() -> None:
    result = write_result(
        ["a", "b", "c", "d"], written={"a": "1", "b": "2"}, failed={"b": "X: no"}, unattributed=[]
    )
    assert result == BatchWriteResult(
        ids={"a": "1"}, errors={"b": "X: no", "c": NOT_IN_ANSWER, "d": NOT_IN_ANSWER}
    )


@pytest.mark.parametrize(
    ("inputs", "reason"),
    [
        ([_contact(f"c{n}@x.io") for n in range(101)], "at most 100"),
        ([_contact("a@x.io"), _contact("A@X.io ")], "repeats the email"),
        ([ObjectUpsert("email", "a@x.io", {"age": 3})], "as strings"),  # type: ignore[dict-item]
        ([ObjectUpsert("email", " ", {})], "non-empty id"),
    ],
)
def test_a_batch_hubspot_would_refuse_is_refused_before_it_is_sent(
    emulator: HubSpotEmulator, make_client: MakeClient, inputs, reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        make_client().batch_upsert_contacts(inputs)
    assert len(emulator.log) == 0


def test_an_upsert_by_a_key_hubspot_does_not_know_fails_at_once_without_the_token(
    make_client: MakeClient,
) -> None:
    with pytest.raises(HubSpotError) as raised:
        make_client().batch_upsert_contacts([ObjectUpsert("firstname", "Mei", {})])

    assert raised.value.status == 400
    assert "non-unique 0-1 property firstname" in str(raised.value)
    assert TOKEN not in str(raised.value)


# -- rate limits and retries -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("inject", "expected_wait"),
    [
        (
            lambda e: e.rate_limit(
                retry_after=7, rate_headers=False, endpoint="tasks_batch_upsert"
            ),
            7,
        ),
        (lambda e: e.rate_limit(endpoint="tasks_batch_upsert"), 10.0),  # the window, remaining 0
        (lambda e: e.fail(503, endpoint="tasks_batch_upsert", retry_after=2), 2),
    ],
    ids=["429-retry-after", "429-rate-headers", "503-retry-after"],
)
def test_a_rate_limited_or_failed_write_is_waited_then_retried(
    emulator: HubSpotEmulator,
    make_client: MakeClient,
    sleeps: RecordingSleep,
    inject,
    expected_wait: float,
) -> None:
    inject(emulator)

    result = make_client().batch_upsert_tasks([_task("intent-1")])

    assert set(result.ids) == {"intent-1"}
    assert sleeps.waits == [expected_wait]
    assert emulator.log.statuses("tasks_batch_upsert")[-1] == 200
    assert len(emulator.tasks()) == 1


def test_a_bare_429_backs_off_its_own_way(
    emulator: HubSpotEmulator, make_client: MakeClient, sleeps: RecordingSleep
) -> None:
    emulator.rate_limit(rate_headers=False, endpoint="associations_associate_default")
    emulator.set_contact("501", {"email": "a@example.com"})
    task = make_client().batch_upsert_tasks([_task("intent-1")]).ids["intent-1"]

    result = make_client().associate_default("tasks", "contacts", [(task, "501")])

    assert result.ids == {f"{task}:501": "204"}
    assert len(sleeps.waits) == 1 and 0 <= sleeps.waits[0] <= 30


# -- associations ----------------------------------------------------------------------------


def test_associating_twice_is_one_association_and_unknown_ids_are_errors(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    client = make_client()
    contact = client.batch_upsert_contacts([_contact("a@example.com")]).ids["a@example.com"]
    task = client.batch_upsert_tasks([_task("intent-1")]).ids["intent-1"]
    call = client.batch_upsert_calls([_call("intent-1")]).ids["intent-1"]

    first = client.associate_default("tasks", "contacts", [(task, contact), (task, "404")])
    again = client.associate_default("tasks", "contacts", [(task, contact)])
    called = client.associate_default("calls", "contacts", [(call, contact), ("999", contact)])

    assert first.ids == again.ids == {f"{task}:{contact}": "204"}
    assert list(first.errors) == [f"{task}:404"]
    assert called.ids == {f"{call}:{contact}": "194"}
    assert list(called.errors) == [f"999:{contact}"]
    assert emulator.associations("contacts", "tasks") == {contact: {task}}
    assert emulator.associations("contacts", "calls") == {contact: {call}}


def test_a_partial_failure_of_associations_fails_that_pair_only(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    for n in (501, 502):
        emulator.set_contact(n, {"email": f"c{n}@example.com"})
    task = make_client().batch_upsert_tasks([_task("intent-1")]).ids["intent-1"]
    emulator.fail_inputs("associations_associate_default", ids=[f"{task}:502"])

    result = make_client().associate_default("tasks", "contacts", [(task, "501"), (task, "502")])

    assert set(result.ids) == {f"{task}:501"}
    assert set(result.errors) == {f"{task}:502"}
    assert emulator.associations("tasks", "contacts") == {task: {"501"}}


def test_more_pairs_than_one_batch_are_refused(make_client: MakeClient) -> None:
    with pytest.raises(ValueError, match="at most 100"):
        make_client().associate_default("tasks", "contacts", [(str(n), "1") for n in range(101)])


# -- lists -----------------------------------------------------------------------------------


def test_ensuring_a_contact_list_twice_is_one_list(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    client = make_client()
    first = client.ensure_contact_list("Mei / callbacks")
    again = client.ensure_contact_list("Mei / callbacks")

    assert first == again == emulator.list_by_name("Mei / callbacks")
    assert emulator.log.count("lists_create") == 1


def test_a_list_created_but_its_answer_lost_is_found_by_name(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    emulator.lose_answer("lists_create")

    list_id = make_client().ensure_contact_list("Callbacks")

    assert list_id == emulator.list_by_name("Callbacks")
    # The retried creation is refused as a duplicate name; the lookup finds the list.
    assert emulator.log.statuses("lists_create") == [None, 400]
    assert emulator.log.statuses("list_by_name") == [404, 200]


def test_a_dynamic_list_of_that_name_is_an_error_not_a_list_to_use(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    emulator.set_list("88", name="Callbacks", processing_type="DYNAMIC", object_type_id="0-1")

    with pytest.raises(HubSpotError, match="DYNAMIC"):
        make_client().ensure_contact_list("Callbacks")
    assert emulator.log.count("lists_create") == 0


def test_list_members_are_changed_and_cleared(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    client = make_client()
    for n in (501, 502, 503):
        emulator.set_contact(n, {"email": f"c{n}@example.com"})
    list_id = client.ensure_contact_list("Callbacks")

    added = client.change_list_members(list_id, ["501", "502", "404"], [])
    swapped = client.change_list_members(list_id, ["503"], ["501"])
    repeated = client.change_list_members(list_id, ["503"], ["501"])
    members = emulator.list_members(list_id)
    client.clear_list(list_id)

    assert (added.added_ids, added.missing_ids) == (["501", "502"], ["404"])
    assert (swapped.added_ids, swapped.removed_ids) == (["503"], ["501"])
    assert (repeated.added_ids, repeated.removed_ids) == ([], [])
    assert members == ["502", "503"]
    assert emulator.list_members(list_id) == []
    assert emulator.log.statuses("memberships_clear") == [204]


def test_a_membership_change_past_hubspots_limit_is_sent_in_chunks(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    emulator.set_contact("1", {"email": "one@example.com"})
    client = make_client()
    list_id = client.ensure_contact_list("Everyone")
    ids = [str(n) for n in range(1, MEMBERSHIP_CHANGE_SIZE + 2)]

    change = client.change_list_members(list_id, ids, [])

    sizes = [
        len(e.body["recordIdsToAdd"]) for e in emulator.log.entries("memberships_add_and_remove")
    ]
    assert sizes == [MEMBERSHIP_CHANGE_SIZE, 1]
    assert change.added_ids == ["1"]
    assert len(change.missing_ids) == MEMBERSHIP_CHANGE_SIZE


def test_a_record_both_added_and_removed_is_refused(make_client: MakeClient) -> None:
    with pytest.raises(ValueError, match="both to be added and removed"):
        make_client().change_list_members("1", ["501"], ["501"])


# -- unique properties -----------------------------------------------------------------------


def test_unique_key_properties_are_created_once_and_make_upserts_possible(
    make_client: MakeClient, emulator: HubSpotEmulator
) -> None:
    emulator.set_morpheus_properties(False)
    client = make_client()
    with pytest.raises(HubSpotError, match="non-unique 0-27 property morpheus_intent_key"):
        client.batch_upsert_tasks([_task("intent-1")])

    created = client.ensure_unique_key_properties()
    again = client.ensure_unique_key_properties()

    assert created == {
        "contacts.morpheus_lead_key": True,
        "tasks.morpheus_intent_key": True,
        "calls.morpheus_intent_key": True,
    }
    assert again == dict.fromkeys(created, False)
    assert set(client.batch_upsert_tasks([_task("intent-1")]).ids) == {"intent-1"}


def test_a_property_created_but_its_answer_lost_is_taken_as_there(
    make_client: MakeClient, emulator: HubSpotEmulator
) -> None:
    emulator.set_morpheus_properties(False)
    emulator.lose_answer("properties_create")

    created = make_client().ensure_unique_property(
        "contacts", LEAD_KEY_PROPERTY, label="Lead key", group_name="contactinformation"
    )

    # The retry is refused as existing (409) and the property read back has unique values.
    assert created is False
    assert emulator.log.statuses("properties_create") == [None, 409]
    assert emulator.properties("contacts")[LEAD_KEY_PROPERTY]["hasUniqueValue"] is True


def test_a_key_property_without_unique_values_is_an_error(
    make_client: MakeClient, emulator: HubSpotEmulator
) -> None:
    emulator.set_morpheus_properties(False)
    requests.post(
        emulator.url("/crm/v3/properties/contacts"),
        headers={"Authorization": f"Bearer {TOKEN}"},
        json={
            "name": LEAD_KEY_PROPERTY,
            "label": "Lead key",
            "type": "string",
            "fieldType": "text",
            "groupName": "contactinformation",
        },
        timeout=5,
    ).raise_for_status()

    with pytest.raises(HubSpotError, match="without unique values"):
        make_client().ensure_unique_property(
            "contacts", LEAD_KEY_PROPERTY, label="Lead key", group_name="contactinformation"
        )


# -- tasks read back -------------------------------------------------------------------------


def test_tasks_modified_since_include_the_ones_reps_completed(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    client = make_client()
    ids = client.batch_upsert_tasks([_task(f"intent-{n}") for n in range(3)]).ids
    since = datetime.now(UTC)
    emulator.complete_task(ids["intent-1"])

    pages = list(client.iter_tasks_modified_since(since, ["hs_task_status"]))

    [page] = pages
    assert [t["id"] for t in page][-1] == ids["intent-1"]
    assert page[-1]["properties"]["hs_task_status"] == "COMPLETED"
    assert emulator.log.count("engagements_search") == 1
    with pytest.raises(ValueError, match="timezone-aware"):
        client.iter_tasks_modified_since(datetime(2026, 1, 1), ["hs_task_status"])


@pytest.mark.slow
def test_the_task_search_moves_its_watermark_past_the_10000_cap(
    emulator: HubSpotEmulator, make_client: MakeClient
) -> None:
    start = datetime(2026, 11, 1, tzinfo=UTC)
    for n in range(10_050):
        emulator.set_engagement(
            "tasks", n + 1, {"hs_timestamp": DUE}, modified_at=start + timedelta(seconds=n)
        )

    seen = [
        t["id"]
        for page in make_client().iter_tasks_modified_since(start, ["hs_task_status"])
        for t in page
    ]

    assert set(seen) == {str(n + 1) for n in range(10_050)}
    # Each page is a new query from the last modification seen, so none pages past 10,000.
    assert all(int(e.body["after"]) == 0 for e in emulator.log.entries("engagements_search"))
    assert emulator.log.statuses("engagements_search").count(400) == 0
