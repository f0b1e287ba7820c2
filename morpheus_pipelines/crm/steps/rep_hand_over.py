"""A rep who leaves hands over (docs/ownership.md, "When a rep leaves").

Once a rep is inactive (the owner mirror saw them archived, or `morpheus rep deactivate`),
one run moves everything they still hold:

* each open lead is routed again in its pool by the owner ladder new leads go through (a pool
  member charged like a new lead, else a fallback rep, else the lead waits, listed, until
  someone is assignable), the rep's load is given back, and the HubSpot contact's new owner
  (none for a waiting lead) is queued in the outbox in the same transaction;
* each PENDING or IN_PROGRESS follow-up task goes to the new owner of its contact's lead, else
  to the next rep of the subscription's rotation (the rule re-engagement assigns by), with the
  task and its contact's owner queued for HubSpot; nobody to take it leaves it unowned, still
  escalated, never naming the rep who left;
* the rep's call list is emptied (queued at deactivation: :func:`empty_call_list`).

Chunked: one transaction per chunk of leads or tasks, each adding its tally to the
hand-over's row, so a crash keeps what moved and the next run moves the rest. Nothing races
the deactivation: intake charges a lead with the rep's row locked and re-checks that the rep
is active, so once the deactivation has committed no new lead reaches the rep, and every lead
charged before it is visible here.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from morpheus_pipelines.crm.models import FollowUpTask, Lead, SalesRep
from morpheus_pipelines.crm.reports.rep_hand_overs import hand_over_note
from morpheus_pipelines.crm.repositories.leads import Candidate, LeadRepository
from morpheus_pipelines.crm.repositories.routing_directory import RoutingDirectoryRepository
from morpheus_pipelines.crm.repositories.sales_rep_round_robin import (
    reserve_sales_rep_round_robin_batch,
)
from morpheus_pipelines.crm.rules.hand_over import (
    HandOverLine,
    HandOverTally,
    hand_over_intent,
    merged_moves,
)
from morpheus_pipelines.crm.rules.hubspot_outbox import OutboxKind, call_list_intent
from morpheus_pipelines.crm.rules.lead_status import OwnerState
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.report_notes import OperationsNote

# A chunk holds the rows of the reps it charges until it commits: small, so lead intake
# never waits long behind a hand-over.
CHUNK = 100
# The Daily Summary tells the hand-overs of the day before it.
REPORTED_FOR = timedelta(hours=24)

_leads = LeadRepository()
_routing = RoutingDirectoryRepository()
_hand_overs = CrmStore.hand_overs


@dataclass(frozen=True)
class HandOver:
    """One rep's finished hand-over."""

    hand_over_id: int
    sales_rep_id: int
    tally: HandOverTally


def hand_over_departed_reps(
    session_factory: SessionFactory, subscription_id: uuid.UUID, *, chunk: int = CHUNK
) -> list[HandOver]:
    """Hand over every inactive rep of the subscription who still holds an open lead or a
    live task (nothing to do: ``[]``). Safe to repeat: a rep with nothing left is skipped."""
    with session_factory() as session:
        reps = _hand_overs.departed_with_work(session, subscription_id)
    done = []
    for rep_id in reps:
        hand_over = hand_over_rep(session_factory, subscription_id, rep_id, chunk=chunk)
        if hand_over is not None:
            done.append(hand_over)
    return done


def departed_with_work(session_factory: SessionFactory, subscription_id: uuid.UUID) -> int:
    """How many inactive reps of the subscription still hold an open lead or a live task."""
    with session_factory() as session:
        return len(_hand_overs.departed_with_work(session, subscription_id))


def hand_over_rep(
    session_factory: SessionFactory, subscription_id: uuid.UUID, rep_id: int, *, chunk: int = CHUNK
) -> HandOver | None:
    """Move the rep's open leads, then their live tasks; ``None`` when the rep is active again
    (or unknown). The hand-over's row holds the tally as it grows."""
    with session_factory() as session:
        if _hand_overs.departed_rep(session, rep_id) is None:
            return None
        hand_over_id = _hand_overs.start(session, subscription_id, rep_id)
        session.commit()
    total = HandOverTally()
    owner_of_contact: dict[str, int | None] = {}
    while True:
        with session_factory() as session:
            leads = _hand_overs.open_leads(session, rep_id, chunk)
            tally = _move_leads(CrmStore(session), hand_over_id, rep_id, leads, owner_of_contact)
            _hand_overs.add(session, hand_over_id, tally)
            session.commit()
        _add(total, tally)
        if len(leads) < chunk:
            break
    while True:
        with session_factory() as session:
            tasks = _hand_overs.live_tasks(session, rep_id, chunk)
            tally = _move_tasks(
                CrmStore(session), subscription_id, hand_over_id, tasks, owner_of_contact
            )
            _hand_overs.add(session, hand_over_id, tally)
            session.commit()
        _add(total, tally)
        if len(tasks) < chunk:
            break
    with session_factory() as session:
        _hand_overs.finish(session, hand_over_id)
        session.commit()
    log_event(
        "rep_handed_over",
        level=logging.WARNING if total.leads_waiting or total.tasks_unowned else logging.INFO,
        subscription_id=str(subscription_id),
        sales_rep_id=rep_id,
        hand_over_id=hand_over_id,
        leads_rerouted=total.leads_rerouted,
        leads_to_fallback=total.leads_to_fallback,
        leads_waiting=total.leads_waiting,
        tasks_moved=total.tasks_moved,
        tasks_unowned=total.tasks_unowned,
    )
    return HandOver(hand_over_id, rep_id, total)


def _move_leads(
    store: CrmStore,
    hand_over_id: int,
    rep_id: int,
    leads: list[Lead],
    owner_of_contact: dict[str, int | None],
) -> HandOverTally:
    """Each lead through the ladder; the rep's load given back for the leads it counted."""
    session = store.session
    tally = HandOverTally()
    candidates: dict[int | None, list[Candidate]] = {}
    writes: list[dict[str, Any]] = []  # queued together, one statement a chunk
    counted = 0
    for lead in leads:
        if lead.loadReleasedAt is None and not lead.ownerIsFallback:
            counted += 1
        if lead.poolId not in candidates:
            candidates[lead.poolId] = _routing.live_candidates(
                session, lead.subscriptionId, lead.poolId
            )
        owner, state = _leads.ladder_owner(
            session, lead.subscriptionId, candidates[lead.poolId], lead.poolId
        )
        # The person who chose the departed rep is gone from the decision: the new owner is
        # the ladder's, and routing may move the lead again.
        lead.ownerSetByHand = False
        if owner is None:
            _leads.drop_owner(session, lead)
        else:
            _leads.give_owner(
                session, lead, owner, charged=state is OwnerState.ASSIGNED, state=state
            )
            if state is OwnerState.ASSIGNED:
                lead.loadReleasedAt = None  # counted again, in the new owner's load
        new_rep = None if owner is None else owner.sales_rep_id
        if lead.hubspotContactId:
            owner_of_contact[lead.hubspotContactId] = new_rep
        writes.append(
            {
                "kind": OutboxKind.CONTACT_OWNER,
                "intentKey": hand_over_intent(hand_over_id, f"lead:{lead.id}"),
                "payload": {"hubspot_owner_id": "" if owner is None else owner.hubspot_owner_id},
                "leadId": lead.id,
            }
        )
        tally.lead(new_rep, state)
    if leads:
        store.outbox.enqueue_many(session, leads[0].subscriptionId, writes)
    _hand_overs.give_back_load(session, rep_id, counted)
    session.flush()
    return tally


def _move_tasks(
    store: CrmStore,
    subscription_id: uuid.UUID,
    hand_over_id: int,
    tasks: list[FollowUpTask],
    owner_of_contact: dict[str, int | None],
) -> HandOverTally:
    """Each task to its contact's new lead owner, else to the rotation's next rep."""
    session = store.session
    tally = HandOverTally()
    by_lead = [t for t in tasks if owner_of_contact.get(t.contact.hubspotContactId or "")]
    rest = [t for t in tasks if t not in by_lead]
    rotation: list[SalesRep] = []
    if rest:
        rotation = reserve_sales_rep_round_robin_batch(
            session,
            subscription_id,
            require_nooks=False,
            count=len(rest),
            sales_rep_repo=store.sales_reps,
        )
    owners = {t.id: owner_of_contact[t.contact.hubspotContactId] for t in by_lead}
    owners |= {t.id: (rotation[i].id if rotation else None) for i, t in enumerate(rest)}
    hubspot_owner = {rep.id: rep.hubspotOwnerId for rep in rotation}
    hubspot_owner |= _owner_ids(store, {o for o in owners.values() if o} - set(hubspot_owner))
    writes: list[dict[str, Any]] = []
    for task in tasks:
        new_rep = owners[task.id]
        task.salesRepId = new_rep
        writes.append(
            {
                "kind": OutboxKind.TASK,
                "intentKey": hand_over_intent(hand_over_id, f"task:{task.id}"),
                "followUpTaskId": task.id,
            }
        )
        if task.contact.hubspotContactId and task in rest and new_rep is not None:
            # The contact follows its task (a lead's contact already follows its lead).
            task.contact.hubspotOwnerId = hubspot_owner[new_rep]
            writes.append(
                {
                    "kind": OutboxKind.CONTACT_OWNER,
                    "intentKey": hand_over_intent(hand_over_id, f"task-contact:{task.id}"),
                    "payload": {"hubspot_owner_id": hubspot_owner[new_rep]},
                    "followUpTaskId": task.id,
                }
            )
        tally.task(new_rep)
    session.flush()
    store.outbox.enqueue_many(session, subscription_id, writes)
    return tally


def _owner_ids(store: CrmStore, rep_ids: set[int]) -> dict[int, str | None]:
    if not rep_ids:
        return {}
    return {
        rep.id: rep.hubspotOwnerId
        for rep in store.sales_reps.get_many_by_ids(store.session, rep_ids)
    }


def _add(total: HandOverTally, more: HandOverTally) -> None:
    total.leads_rerouted += more.leads_rerouted
    total.leads_to_fallback += more.leads_to_fallback
    total.leads_waiting += more.leads_waiting
    total.tasks_moved += more.tasks_moved
    total.tasks_unowned += more.tasks_unowned
    total.moves = merged_moves(total.moves, more.moves)


def empty_call_list(store: CrmStore, subscription_id: uuid.UUID, rep: SalesRep) -> None:
    """A rep who left stops receiving a call list: theirs is emptied at once, not at the
    next daily refresh."""
    if rep.hubspotCallSegmentId:
        store.outbox.enqueue(
            store.session,
            subscription_id,
            OutboxKind.CALL_LIST,
            call_list_intent(rep.id, f"deactivated-{datetime.now(UTC).isoformat()}"),
            {"contact_ids": []},
            sales_rep_id=rep.id,
        )


def hand_over_operations_note(
    session_factory: SessionFactory, subscription_id: uuid.UUID, now: datetime
) -> OperationsNote:
    """The Daily Summary's note on the hand-overs of the last 24 hours."""
    with session_factory() as session:
        rows = _hand_overs.since(session, subscription_id, now - REPORTED_FOR)
        moved_to = sorted({int(rep) for row, _ in rows for rep in row.moves})
        names = _hand_overs.rep_names(session, [rep.id for _, rep in rows] + moved_to)
        lines = [
            HandOverLine(
                rep=names.get(str(rep.id), f"rep {rep.id}"),
                started_at=row.startedAt,
                finished=row.finishedAt is not None,
                tally=HandOverTally(
                    leads_rerouted=row.leadsRerouted,
                    leads_to_fallback=row.leadsToFallback,
                    leads_waiting=row.leadsWaiting,
                    tasks_moved=row.tasksMoved,
                    tasks_unowned=row.tasksUnowned,
                    moves={k: dict(v) for k, v in row.moves.items()},
                ),
                names=names,
            )
            for row, rep in rows
        ]
    return hand_over_note(lines)
