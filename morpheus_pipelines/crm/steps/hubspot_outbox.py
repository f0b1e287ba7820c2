"""Draining the HubSpot outbox (docs/hubspot-outbox.md): the due rows of each kind, in batches
of at most 100, each batch one HubSpot batch call, each answer settled row by row.

Every write is an upsert keyed by a unique property (the contact's email, else its
``morpheus_lead_key``; a task's or a call's ``morpheus_intent_key``), and list changes add and
remove named records, so a batch retried after an answer that never arrived writes nothing
twice. Rows are read from their subjects when they are sent, not when they were queued: a
lead whose owner changed before its contact was written is written with the new owner.

What happens on failure:

* HubSpot refused some inputs (a 207, a 400): those rows count a failed attempt with
  HubSpot's reason and wait their back-off; the rest of the batch is settled as done.
* HubSpot is unavailable (429, 5xx, timeouts, after the client's own retries): the batch's
  rows count a failed attempt and the drain stops, leaving the other rows untouched; HubSpot
  is not asked again until the next drain.
* A row whose subject has no HubSpot id yet (a task for a contact whose lead's contact is not
  written) waits a minute without counting an attempt.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from morpheus_pipelines.crm.reports.hubspot_outbox import outbox_note
from morpheus_pipelines.crm.repositories.hubspot_outbox import OutboxBacklog, OutboxEntry
from morpheus_pipelines.crm.rules.hubspot_outbox import (
    BATCH_SIZE,
    DRAIN_ORDER,
    INTENT_KEY_PROPERTY,
    OutboxKind,
    call_list_name,
    call_properties,
    contact_key,
    contact_properties,
    rep_list_name,
    task_properties,
)
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import (
    BatchWriteResult,
    HubSpotClient,
    HubSpotError,
    ObjectUpsert,
)
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.report_notes import OperationsNote

WAIT_FOR_DEPENDENCY = timedelta(minutes=1)
T = TypeVar("T")
UNAVAILABLE = frozenset({None, 429}) | frozenset(range(500, 600))


@dataclass
class DrainReport:
    """What one drain did, by kind: rows written, failed, postponed; whether it stopped
    because HubSpot was unavailable."""

    written: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    postponed: Counter[str] = field(default_factory=Counter)
    dead: int = 0
    requests: int = 0
    stopped: str | None = None

    def as_metadata(self) -> dict[str, Any]:
        return {
            "written": sum(self.written.values()),
            "failed": sum(self.failed.values()),
            "postponed": sum(self.postponed.values()),
            "dead_now": self.dead,
            "hubspot_requests": self.requests,
            "written_by_kind": dict(self.written),
            "stopped": self.stopped or "",
        }


class _Unavailable(Exception):
    """HubSpot did not answer the batch (after the client's retries): stop the drain."""


@dataclass(frozen=True)
class _Sent:
    """A batch's outcome: object id per done row, reason per failed row, reason per row
    that waits for something else."""

    done: dict[int, str | None] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)
    waiting: dict[int, str] = field(default_factory=dict)


def drain_outbox(
    session_factory: SessionFactory,
    client: HubSpotClient,
    subscription_id: uuid.UUID,
    *,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    max_rows: int = 10_000,
) -> DrainReport:
    """Send up to ``max_rows`` due rows, kind by kind in ``DRAIN_ORDER``; each batch is
    claimed, sent and settled in its own transactions."""
    report = DrainReport()
    try:
        _prepare_portal(session_factory, client, subscription_id)
    except HubSpotError as exc:
        # Nothing can be keyed without the properties: stop before claiming a row.
        report.stopped = f"the portal's key properties could not be ensured: {exc}"
        log_event("hubspot_outbox_unprepared", level=logging.ERROR, problem=str(exc))
        return report
    senders = _senders(client)
    budget = max_rows
    for kind in DRAIN_ORDER:
        while budget > 0:
            with session_factory() as session:
                store = CrmStore(session)
                entries = store.outbox.claim_due(
                    session, subscription_id, kind, now=now(), limit=min(BATCH_SIZE, budget)
                )
                subjects = _subjects(store, kind, entries)
            if not entries:
                break
            budget -= len(entries)
            requests_before = client.stats.requests
            try:
                sent = senders[kind](entries, subjects)
            except _Unavailable as exc:
                report.requests += client.stats.requests - requests_before
                with session_factory() as session:
                    reasons = {entry.id: str(exc) for entry in entries}
                    report.dead += CrmStore(session).outbox.mark_failed(
                        session, entries, reasons, now=now()
                    )
                    report.failed[kind.value] += len(entries)
                report.stopped = str(exc)
                log_event(
                    "hubspot_outbox_unavailable",
                    level=logging.WARNING,
                    kind=kind.value,
                    rows=len(entries),
                    problem=str(exc),
                )
                return report
            report.requests += client.stats.requests - requests_before
            with session_factory() as session:
                store = CrmStore(session)
                _record_answers(store, kind, entries, subjects, sent, subscription_id)
                store.outbox.mark_done(session, sent.done, now=now())
                failed = [entry for entry in entries if entry.id in sent.failed]
                report.dead += store.outbox.mark_failed(session, failed, sent.failed, now=now())
                store.outbox.postpone(session, sent.waiting, until=now() + WAIT_FOR_DEPENDENCY)
            report.written[kind.value] += len(sent.done)
            report.failed[kind.value] += len(sent.failed)
            report.postponed[kind.value] += len(sent.waiting)
    return report


def _prepare_portal(
    session_factory: SessionFactory, client: HubSpotClient, subscription_id: uuid.UUID
) -> None:
    """Create the unique properties the upserts are keyed by, once per subscription (the
    configs row says it was done; deleting it makes the next drain check again)."""
    key = f"hubspot_key_properties:{subscription_id}"
    with session_factory() as session:
        if CrmStore(session).configs.get_value(session, key):
            return
    created = client.ensure_unique_key_properties()
    with session_factory() as session:
        CrmStore(session).configs.set_value(
            session, key, datetime.now(UTC).isoformat(), subscription_id
        )
    log_event("hubspot_key_properties_ensured", created=sorted(k for k, v in created.items() if v))


def outbox_backlog(
    session_factory: SessionFactory, subscription_id: uuid.UUID, *, now: datetime | None = None
) -> OutboxBacklog:
    """The outbox at a glance: pending, due and dead rows, and rows done in the last day."""
    moment = now or datetime.now(UTC)
    with session_factory() as session:
        return CrmStore(session).outbox.backlog(
            session, subscription_id, now=moment, since=moment - timedelta(days=1)
        )


def outbox_operations_note(
    session_factory: SessionFactory, subscription_id: uuid.UUID, now: datetime
) -> OperationsNote:
    """The Daily Summary's note on the outbox: dead rows (an error), rows waiting too long
    (a warning), or what was written in the last day."""
    backlog = outbox_backlog(session_factory, subscription_id, now=now)
    return outbox_note(
        backlog.pending,
        backlog.dead,
        backlog.done_since,
        backlog.oldest_pending_at,
        backlog.dead_reasons,
        now,
    )


__all__ = [
    "DrainReport",
    "OutboxBacklog",
    "drain_outbox",
    "outbox_backlog",
    "outbox_operations_note",
]


# -- what each kind sends ---------------------------------------------------------------------


def _subjects(
    store: CrmStore, kind: OutboxKind, entries: Sequence[OutboxEntry]
) -> dict[int, dict[str, Any]]:
    """The current state of each entry's subject (the lead, task, activity or rep), by row."""
    if not entries:
        return {}
    return store.outbox.subjects(store.session, kind, entries)


def _call(action: Callable[..., T], *args: Any) -> T:
    """``action(*args)``; HubSpot being unavailable stops the drain, a refusal is the
    caller's."""
    try:
        return action(*args)
    except HubSpotError as exc:
        if exc.status in UNAVAILABLE:
            raise _Unavailable(str(exc)) from exc
        raise


def _refused(entries: Sequence[OutboxEntry], exc: HubSpotError) -> _Sent:
    return _Sent(failed={entry.id: str(exc) for entry in entries})


def _settle(
    entries: Sequence[OutboxEntry],
    keys: Mapping[int, str],
    result: BatchWriteResult,
    waiting: Mapping[int, str],
) -> _Sent:
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
    return _Sent(done=done, failed=failed, waiting=dict(waiting))


def _senders(
    client: HubSpotClient,
) -> dict[OutboxKind, Callable[[Sequence[OutboxEntry], dict[int, dict[str, Any]]], _Sent]]:
    def contacts(entries: Sequence[OutboxEntry], subjects: dict[int, dict[str, Any]]) -> _Sent:
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
            result = _call(client.batch_upsert_contacts, list(inputs.values()))
        except HubSpotError as exc:
            return _refused(entries, exc)
        return _settle(entries, keys, result, {})

    def contact_owners(
        entries: Sequence[OutboxEntry], subjects: dict[int, dict[str, Any]]
    ) -> _Sent:
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
            return _Sent(waiting=waiting)
        try:
            answer = _call(client.batch_update_contacts, list(updates.items()))
        except HubSpotError as exc:
            return _refused([e for e in entries if e.id not in waiting], exc)
        result = BatchWriteResult(
            ids={contact_id: contact_id for contact_id in answer.updated_ids},
            errors={contact_id: "HubSpot has no such contact" for contact_id in answer.missing_ids},
        )
        keys = {
            entry.id: subjects[entry.id]["hubspot_contact_id"]
            for entry in entries
            if entry.id not in waiting
        }
        return _settle(entries, keys, result, waiting)

    def engagements(
        upsert: Callable[[list[ObjectUpsert]], BatchWriteResult],
        build: Callable[[dict[str, Any]], dict[str, str]],
        object_type: str,
    ) -> Callable[[Sequence[OutboxEntry], dict[int, dict[str, Any]]], _Sent]:
        def send(entries: Sequence[OutboxEntry], subjects: dict[int, dict[str, Any]]) -> _Sent:
            waiting = {
                entry.id: "waiting for the contact's HubSpot id"
                for entry in entries
                if not subjects[entry.id].get("hubspot_contact_id")
            }
            ready = [entry for entry in entries if entry.id not in waiting]
            if not ready:
                return _Sent(waiting=waiting)
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
                result = _call(upsert, inputs)
                pairs = [
                    (result.ids[keys[e.id]], subjects[e.id]["hubspot_contact_id"])
                    for e in ready
                    if keys[e.id] in result.ids
                ]
                linked = _call(client.associate_default, object_type, "contacts", pairs)
            except HubSpotError as exc:
                return _refused(ready, exc)
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
            return _settle(entries, keys, merged, waiting)

        return send

    def call_lists(entries: Sequence[OutboxEntry], subjects: dict[int, dict[str, Any]]) -> _Sent:
        done: dict[int, str | None] = {}
        failed: dict[int, str] = {}
        for entry in entries:
            rep = subjects[entry.id]
            try:
                list_id = rep.get("call_list_id") or _call(
                    client.ensure_contact_list, call_list_name(rep["email"])
                )
                wanted = {str(c) for c in entry.payload.get("contact_ids", [])}
                current = _call(_list_members, client, list_id)
                _call(
                    client.change_list_members,
                    list_id,
                    sorted(wanted - current),
                    sorted(current - wanted),
                )
            except HubSpotError as exc:
                failed[entry.id] = str(exc)
                continue
            done[entry.id] = list_id
        return _Sent(done=done, failed=failed)

    def rep_lists(entries: Sequence[OutboxEntry], subjects: dict[int, dict[str, Any]]) -> _Sent:
        done: dict[int, str | None] = {}
        failed: dict[int, str] = {}
        for entry in entries:
            rep = subjects[entry.id]
            if rep.get("active_list_id"):
                done[entry.id] = rep["active_list_id"]  # linked by a person meanwhile
                continue
            try:
                done[entry.id] = _call(client.ensure_contact_list, rep_list_name(rep["email"]))
            except HubSpotError as exc:
                failed[entry.id] = str(exc)
        return _Sent(done=done, failed=failed)

    return {
        OutboxKind.CONTACT: contacts,
        OutboxKind.CONTACT_OWNER: contact_owners,
        OutboxKind.TASK: engagements(client.batch_upsert_tasks, task_properties, "tasks"),
        OutboxKind.CALL: engagements(client.batch_upsert_calls, call_properties, "calls"),
        OutboxKind.CALL_LIST: call_lists,
        OutboxKind.REP_LIST: rep_lists,
    }


def _list_members(client: HubSpotClient, list_id: str) -> set[str]:
    return {
        str(member.get("recordId"))
        for page in client.iter_membership_pages(list_id)
        for member in page
        if isinstance(member, dict)
    }


def _record_answers(
    store: CrmStore,
    kind: OutboxKind,
    entries: Sequence[OutboxEntry],
    subjects: dict[int, dict[str, Any]],
    sent: _Sent,
    subscription_id: uuid.UUID,
) -> None:
    """Store the ids HubSpot gave in the rows they belong to."""
    answers = [
        (entry, subjects[entry.id], sent.done[entry.id])
        for entry in entries
        if sent.done.get(entry.id) is not None
    ]
    store.outbox.record_answers(store.session, subscription_id, kind, answers)
