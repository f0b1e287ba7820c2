"""How each kind of HubSpot outbox row is sent (docs/hubspot-outbox.md, "What each kind
writes"): one batch call per batch of rows, every write an upsert or a membership change that
can be repeated, and what HubSpot answered for each row.

:class:`OutboxSenders` has one method per kind. Each returns :class:`Sent`: the HubSpot id of
every row written, HubSpot's reason for every row refused, and the rows that wait for another
(a task whose contact has no HubSpot id yet). HubSpot being unavailable (429, 5xx, timeouts,
after the client's retries) raises :class:`Unavailable`, which stops the drain.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from morpheus_pipelines.crm.repositories.hubspot_outbox import OutboxEntry
from morpheus_pipelines.crm.rules.hubspot_outbox import (
    INTENT_KEY_PROPERTY,
    OutboxKind,
    call_list_name,
    call_properties,
    contact_key,
    contact_properties,
    rep_list_name,
    task_properties,
)
from morpheus_pipelines.platform.clients.hubspot import (
    BatchWriteResult,
    HubSpotClient,
    HubSpotError,
    ObjectUpsert,
)

T = TypeVar("T")
Subjects = dict[int, dict[str, Any]]
UNAVAILABLE = frozenset({None, 429}) | frozenset(range(500, 600))


class Unavailable(Exception):
    """HubSpot did not answer the batch (after the client's retries): stop the drain."""


@dataclass(frozen=True)
class Sent:
    """A batch's outcome: object id per done row, reason per failed row, reason per row
    that waits for something else."""

    done: dict[int, str | None] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)
    waiting: dict[int, str] = field(default_factory=dict)


def call(action: Callable[..., T], *args: Any) -> T:
    """``action(*args)``; HubSpot being unavailable stops the drain, a refusal is the
    caller's."""
    try:
        return action(*args)
    except HubSpotError as exc:
        if exc.status in UNAVAILABLE:
            raise Unavailable(str(exc)) from exc
        raise


def refused(entries: Sequence[OutboxEntry], exc: HubSpotError) -> Sent:
    return Sent(failed={entry.id: str(exc) for entry in entries})


def settle(
    entries: Sequence[OutboxEntry],
    keys: Mapping[int, str],
    result: BatchWriteResult,
    waiting: Mapping[int, str],
) -> Sent:
    """Each sent row is done with its object's id or failed with HubSpot's reason."""
    done: dict[int, str | None] = {}
    failed: dict[int, str] = {}
    for entry in entries:
        if entry.id in waiting:
            continue
        key = keys[entry.id]
        if key in result.ids:
            done[entry.id] = result.ids[key]
        else:
            failed[entry.id] = result.errors.get(key, "not in HubSpot's answer")
    return Sent(done=done, failed=failed, waiting=dict(waiting))


class OutboxSenders:
    """The HubSpot writes of each kind of row, through ``client``."""

    def __init__(self, client: HubSpotClient) -> None:
        self.client = client

    def send(self, kind: OutboxKind, entries: Sequence[OutboxEntry], subjects: Subjects) -> Sent:
        senders = {
            OutboxKind.CONTACT: self.contacts,
            OutboxKind.CONTACT_OWNER: self.contact_owners,
            OutboxKind.TASK: self.tasks,
            OutboxKind.CALL: self.calls,
            OutboxKind.CALL_LIST: self.call_lists,
            OutboxKind.REP_LIST: self.rep_lists,
        }
        return senders[kind](entries, subjects)

    def contacts(self, entries: Sequence[OutboxEntry], subjects: Subjects) -> Sent:
        # A lead whose sender keeps its answers (Meta Lead Ads) is written once they are read,
        # so HubSpot's first contact has the person's email and phone.
        waiting = {
            entry.id: "waiting for the lead's contact from its sender"
            for entry in entries
            if subjects[entry.id].get("contact_pending")
        }
        entries = [entry for entry in entries if entry.id not in waiting]
        if not entries:
            return Sent(waiting=waiting)
        keys: dict[int, str] = {}
        inputs: dict[str, ObjectUpsert] = {}
        for entry in entries:
            lead = subjects[entry.id]
            key, id_property = contact_key(lead)
            keys[entry.id] = key
            # Two leads of one person in a batch are one input: HubSpot refuses a batch that
            # names the same contact twice.
            inputs.setdefault(
                key,
                ObjectUpsert(id=key, id_property=id_property, properties=contact_properties(lead)),
            )
        try:
            result = call(self.client.batch_upsert_contacts, list(inputs.values()))
        except HubSpotError as exc:
            return Sent(failed=refused(entries, exc).failed, waiting=waiting)
        return settle(entries, keys, result, waiting)

    def contact_owners(self, entries: Sequence[OutboxEntry], subjects: Subjects) -> Sent:
        waiting = {
            entry.id: "waiting for the lead's HubSpot contact"
            for entry in entries
            if not subjects[entry.id].get("hubspot_contact_id")
        }
        updates = {
            subjects[entry.id]["hubspot_contact_id"]: {
                "hubspot_owner_id": str(entry.payload["hubspot_owner_id"])
            }
            for entry in entries
            if entry.id not in waiting
        }
        if not updates:
            return Sent(waiting=waiting)
        try:
            answer = call(self.client.batch_update_contacts, list(updates.items()))
        except HubSpotError as exc:
            return refused([e for e in entries if e.id not in waiting], exc)
        result = BatchWriteResult(
            ids={contact_id: contact_id for contact_id in answer.updated_ids},
            errors={contact_id: "HubSpot has no such contact" for contact_id in answer.missing_ids},
        )
        keys = {
            entry.id: subjects[entry.id]["hubspot_contact_id"]
            for entry in entries
            if entry.id not in waiting
        }
        return settle(entries, keys, result, waiting)

    def tasks(self, entries: Sequence[OutboxEntry], subjects: Subjects) -> Sent:
        return self._engagements(
            entries, subjects, self.client.batch_upsert_tasks, task_properties, "tasks"
        )

    def calls(self, entries: Sequence[OutboxEntry], subjects: Subjects) -> Sent:
        return self._engagements(
            entries, subjects, self.client.batch_upsert_calls, call_properties, "calls"
        )

    def _engagements(
        self,
        entries: Sequence[OutboxEntry],
        subjects: Subjects,
        upsert: Callable[[list[ObjectUpsert]], BatchWriteResult],
        build: Callable[[dict[str, Any]], dict[str, str]],
        object_type: str,
    ) -> Sent:
        """Tasks and calls: upserted by their intent key, then linked to their contact."""
        waiting = {
            entry.id: "waiting for the contact's HubSpot id"
            for entry in entries
            if not subjects[entry.id].get("hubspot_contact_id")
        }
        ready = [entry for entry in entries if entry.id not in waiting]
        if not ready:
            return Sent(waiting=waiting)
        keys = {entry.id: subjects[entry.id]["intent_key"] for entry in ready}
        inputs = [
            ObjectUpsert(
                id=keys[entry.id],
                id_property=INTENT_KEY_PROPERTY,
                properties=build(subjects[entry.id]) | {INTENT_KEY_PROPERTY: keys[entry.id]},
            )
            for entry in ready
        ]
        try:
            result = call(upsert, inputs)
            pairs = [
                (result.ids[keys[e.id]], subjects[e.id]["hubspot_contact_id"])
                for e in ready
                if keys[e.id] in result.ids
            ]
            linked = call(self.client.associate_default, object_type, "contacts", pairs)
        except HubSpotError as exc:
            return refused(ready, exc)
        # Written but not linked to its contact: not done, the retry links it.
        unlinked = {
            key: linked.errors.get(f"{object_id}:{contact}", "not associated with its contact")
            for key, object_id, contact in (
                (keys[e.id], result.ids[keys[e.id]], subjects[e.id]["hubspot_contact_id"])
                for e in ready
                if keys[e.id] in result.ids
            )
            if f"{object_id}:{contact}" not in linked.ids
        }
        merged = BatchWriteResult(
            ids={k: v for k, v in result.ids.items() if k not in unlinked},
            errors=dict(result.errors) | unlinked,
        )
        return settle(entries, keys, merged, waiting)

    def call_lists(self, entries: Sequence[OutboxEntry], subjects: Subjects) -> Sent:
        done: dict[int, str | None] = {}
        failed: dict[int, str] = {}
        for entry in entries:
            rep = subjects[entry.id]
            try:
                list_id = rep.get("call_list_id") or call(
                    self.client.ensure_contact_list, call_list_name(rep["email"])
                )
                wanted = {str(c) for c in entry.payload.get("contact_ids", [])}
                current = call(self._list_members, list_id)
                call(
                    self.client.change_list_members,
                    list_id,
                    sorted(wanted - current),
                    sorted(current - wanted),
                )
            except HubSpotError as exc:
                failed[entry.id] = str(exc)
                continue
            done[entry.id] = list_id
        return Sent(done=done, failed=failed)

    def rep_lists(self, entries: Sequence[OutboxEntry], subjects: Subjects) -> Sent:
        done: dict[int, str | None] = {}
        failed: dict[int, str] = {}
        for entry in entries:
            rep = subjects[entry.id]
            if rep.get("active_list_id"):
                done[entry.id] = rep["active_list_id"]  # linked by a person meanwhile
                continue
            try:
                done[entry.id] = call(self.client.ensure_contact_list, rep_list_name(rep["email"]))
            except HubSpotError as exc:
                failed[entry.id] = str(exc)
        return Sent(done=done, failed=failed)

    def _list_members(self, list_id: str) -> set[str]:
        return {
            str(member.get("recordId"))
            for page in self.client.iter_membership_pages(list_id)
            for member in page
            if isinstance(member, dict)
        }
