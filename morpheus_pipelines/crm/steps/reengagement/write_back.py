"""The HubSpot half of the re-engagement assignments (docs/ownership.md, "Write-back"): the
owner properties and the list enrolment each committed assignment owes, sent in batches of
≤ 100 contacts, every write-back ending ``done``, ``rejected`` with the reason, or still
``pending`` for the next run."""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from dataclasses import dataclass

from morpheus_pipelines.crm.models import WriteBackStatus
from morpheus_pipelines.crm.repositories.reengagement import PendingWriteBack
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import (
    BATCH_UPDATE_SIZE,
    HubSpotClient,
    HubSpotError,
)
from morpheus_pipelines.platform.observability.events import log_event

MAX_WRITE_BACK_ATTEMPTS = 8
_REFUSED = frozenset({400, 404})  # HubSpot will refuse these again: decide per write-back
_NO_CONTACT = (WriteBackStatus.REJECTED, "HubSpot has no such contact")

Verdict = tuple[WriteBackStatus, str | None]


@dataclass
class WriteBackRun:
    """What the HubSpot write-back did."""

    written: int = 0
    rejected: int = 0
    enrolled: int = 0
    calls: int = 0
    error: str | None = None


def write_back_pending(
    client: HubSpotClient,
    session_factory: SessionFactory,
    subscription_id: uuid.UUID,
    *,
    batch_size: int = BATCH_UPDATE_SIZE,
) -> WriteBackRun:
    """Send every pending write-back to HubSpot, ≤ ``batch_size`` contacts per call.

    Each batch is claimed (``SKIP LOCKED``) and closed in one transaction around its calls.
    What one write-back cannot get past is decided for it alone (``rejected`` with the
    reason): a contact HubSpot does not know, a value or list HubSpot refuses (a 400/404 is
    retried contact by contact to find the one), an owner someone changed in HubSpot since
    the decision (never overwritten), an older write-back of a contact that has a newer one.
    A failure that may pass (timeouts, 429, 5xx, auth) keeps the batch pending with the
    reason and stops the run; after ``MAX_WRITE_BACK_ATTEMPTS`` such failures a write-back is
    given up. Setting a property to the value it has and adding a list member twice change
    nothing, so a batch sent again is harmless (docs/ownership.md, "Write-back")."""
    run = WriteBackRun()
    while True:
        with session_factory() as session:
            store = CrmStore(session)
            pending = store.assignments.claim_pending_write_backs(
                session, subscription_id, limit=batch_size
            )
            if not pending:
                return run
            try:
                verdicts = _write_batch(client, pending, run)
            except HubSpotError as exc:
                _keep_pending(store, pending, str(exc), run)
                log_event(
                    "reengagement_write_back_failed",
                    level=logging.WARNING,
                    subscription_id=str(subscription_id),
                    pending=len(pending),
                    error=str(exc),
                )
                return run
            _record_verdicts(store, verdicts, run)


def _record_verdicts(store: CrmStore, verdicts: dict[int, Verdict], run: WriteBackRun) -> None:
    """One attempt counted on every write-back of the batch, grouped by verdict."""
    by_outcome: dict[Verdict, list[int]] = defaultdict(list)
    for assignment_id, verdict in verdicts.items():
        by_outcome[verdict].append(assignment_id)
    for (status, error), ids in by_outcome.items():
        store.assignments.record_write_back_attempt(store.session, ids, status, error=error)
        if status is WriteBackStatus.DONE:
            run.written += len(ids)
        else:
            run.rejected += len(ids)


def _keep_pending(
    store: CrmStore, pending: list[PendingWriteBack], error: str, run: WriteBackRun
) -> None:
    """A failure that may pass: the batch stays pending with the reason, except the
    write-backs that have used up their attempts."""
    run.error = error
    exhausted = [p.assignment_id for p in pending if p.attempts + 1 >= MAX_WRITE_BACK_ATTEMPTS]
    retry = [p.assignment_id for p in pending if p.attempts + 1 < MAX_WRITE_BACK_ATTEMPTS]
    store.assignments.record_write_back_attempt(
        store.session, retry, WriteBackStatus.PENDING, error=error
    )
    store.assignments.record_write_back_attempt(
        store.session,
        exhausted,
        WriteBackStatus.REJECTED,
        error=f"gave up after {MAX_WRITE_BACK_ATTEMPTS} attempts: {error}",
    )
    run.rejected += len(exhausted)


def _write_batch(
    client: HubSpotClient, pending: list[PendingWriteBack], run: WriteBackRun
) -> dict[int, Verdict]:
    """Every write-back of the batch with its verdict; raises ``HubSpotError`` for a failure
    that may pass (the caller keeps the whole batch pending). Each phase decides some
    write-backs; the next one sends only those still undecided."""
    live, verdicts = _newest_per_contact(pending)
    verdicts |= _owners_changed_since(client, live, run)
    live = _undecided(live, verdicts)
    updates = [(i, _properties(i)) for i in live if _properties(i)]
    if updates:
        verdicts |= _update_properties(client, updates, run)
    live = _undecided(live, verdicts)
    verdicts |= _enrol(client, live, run)
    for item in live:
        verdicts.setdefault(item.assignment_id, (WriteBackStatus.DONE, None))
    return verdicts


def _undecided(
    items: list[PendingWriteBack], verdicts: dict[int, Verdict]
) -> list[PendingWriteBack]:
    return [i for i in items if i.assignment_id not in verdicts]


def _newest_per_contact(
    pending: list[PendingWriteBack],
) -> tuple[list[PendingWriteBack], dict[int, Verdict]]:
    """HubSpot refuses one contact twice in a batch: the newest write-back of each contact
    goes, every older one is rejected as superseded."""
    verdicts: dict[int, Verdict] = {}
    newest: dict[str, PendingWriteBack] = {}
    for item in sorted(pending, key=lambda p: p.assignment_id):
        older = newest.get(item.hubspot_contact_id)
        if older is not None:
            verdicts[older.assignment_id] = (
                WriteBackStatus.REJECTED,
                f"superseded by assignment {item.assignment_id}",
            )
        newest[item.hubspot_contact_id] = item
    return list(newest.values()), verdicts


def _owners_changed_since(
    client: HubSpotClient, live: list[PendingWriteBack], run: WriteBackRun
) -> dict[int, Verdict]:
    """A reassignment is never written over an owner someone set in HubSpot since the
    decision, nor for a contact HubSpot no longer has."""
    reassigning = [i for i in live if i.hubspot_owner_id is not None]
    if not reassigning:
        return {}
    owners = client.read_contact_owners([i.hubspot_contact_id for i in reassigning])
    run.calls += 1
    verdicts: dict[int, Verdict] = {}
    for item in reassigning:
        if item.hubspot_contact_id not in owners:
            verdicts[item.assignment_id] = _NO_CONTACT
            continue
        now = owners[item.hubspot_contact_id]
        if now not in (item.previous_owner_id, item.hubspot_owner_id):
            verdicts[item.assignment_id] = (
                WriteBackStatus.REJECTED,
                f"owner changed in HubSpot to {now} since the decision; not overwritten",
            )
    return verdicts


def _properties(item: PendingWriteBack) -> dict[str, str]:
    properties = {}
    if item.hubspot_owner_id is not None:
        properties["hubspot_owner_id"] = item.hubspot_owner_id
    if item.call_assigned_to is not None:
        properties["call_assigned_to"] = item.call_assigned_to
    return properties


def _update_properties(
    client: HubSpotClient,
    updates: list[tuple[PendingWriteBack, dict[str, str]]],
    run: WriteBackRun,
) -> dict[int, Verdict]:
    """One ``batch/update``; when HubSpot refuses the batch, each contact alone, so one bad
    value does not hold back the rest."""
    try:
        result = client.batch_update_contacts([(i.hubspot_contact_id, p) for i, p in updates])
        run.calls += 1
    except HubSpotError as exc:
        if exc.status not in _REFUSED or len(updates) == 1:
            if exc.status in _REFUSED:
                return {updates[0][0].assignment_id: (WriteBackStatus.REJECTED, str(exc))}
            raise
        verdicts: dict[int, Verdict] = {}
        for update_ in updates:
            verdicts.update(_update_properties(client, [update_], run))
        return verdicts
    missing = set(result.missing_ids)
    return {i.assignment_id: _NO_CONTACT for i, _ in updates if i.hubspot_contact_id in missing}


def _enrol(
    client: HubSpotClient, live: list[PendingWriteBack], run: WriteBackRun
) -> dict[int, Verdict]:
    """The list enrolments, one ``memberships/add`` per list; a list HubSpot refuses rejects
    its write-backs, a contact it does not know rejects that one."""
    by_list: dict[str, list[PendingWriteBack]] = defaultdict(list)
    for item in live:
        if item.list_id is not None:
            by_list[item.list_id].append(item)
    verdicts: dict[int, Verdict] = {}
    for list_id, items in by_list.items():
        try:
            change = client.add_list_members(list_id, [i.hubspot_contact_id for i in items])
        except HubSpotError as exc:
            if exc.status not in _REFUSED:
                raise
            for item in items:
                verdicts[item.assignment_id] = (
                    WriteBackStatus.REJECTED,
                    f"list {list_id} refused the enrolment: {exc}",
                )
            continue
        run.calls += 1
        run.enrolled += len(change.added_ids)
        for item in items:
            if item.hubspot_contact_id in change.missing_ids:
                verdicts[item.assignment_id] = _NO_CONTACT
    return verdicts
