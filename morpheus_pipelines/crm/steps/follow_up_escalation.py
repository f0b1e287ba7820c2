"""Escalating stale follow-up tasks (docs/ownership.md, "Escalation").

A PENDING task a day past due is escalated: a Slack-style message names the rep and the
contact, then its ``escalationStage`` advances. Escalation *k* (the move to stage *k*) is sent
once the task is *k* days overdue, so an hourly schedule sends each escalation once, a day
apart, three in all (stage 3 is final). A task found late catches up one stage per run.

A task whose rep has left is not escalated until the hand-over has given it a new owner: an
escalation never names an inactive rep.

Each task is escalated in its own transaction: the stage advance is committed only after the
notifier accepted the message, so a failed delivery is retried on the next run, and two runs
escalate a task once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from morpheus_pipelines.crm.models import FollowUpTask
from morpheus_pipelines.crm.repositories.follow_up_task import MAX_ESCALATION_STAGE
from morpheus_pipelines.crm.rules.hubspot_outbox import OutboxKind, task_change_intent
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory

# notify(text, fields) -> delivered?
Notify = Callable[[str, dict[str, object]], bool]


@dataclass
class EscalationRun:
    stale: int = 0  # PENDING, a day overdue, below the last stage
    escalated: int = 0
    not_yet_due: int = 0  # escalated today already
    awaiting_hand_over: int = 0  # its rep has left: escalated once it has its new owner
    undelivered: int = 0
    by_stage: dict[int, int] = field(default_factory=dict)  # stage reached -> tasks


def is_due_for_stage(task: FollowUpTask, now: datetime) -> bool:
    """The next escalation (to stage ``escalationStage + 1``) goes out once the task is that
    many days overdue."""
    return task.dueAt <= now - timedelta(days=task.escalationStage + 1)


def escalation_text(task: FollowUpTask, now: datetime) -> str:
    """The message: rep, contact, how late, which escalation. It carries the contact's email
    for the team channel; the event log masks it."""
    rep = task.salesRep
    rep_name = (
        " ".join(p for p in (rep.firstName, rep.lastName) if p) or rep.email
        if rep is not None
        else "nobody (unassigned)"
    )
    contact = task.contact
    contact_name = " ".join(p for p in (contact.firstName, contact.lastName) if p) or "contact"
    days = (now - task.dueAt).days
    return (
        f":rotating_light: Follow-up {task.type.value.lower()} task #{task.id} for "
        f"{contact_name} <{contact.email or 'no email'}> is {days} day{'s' * (days != 1)} "
        f"overdue. Owner: {rep_name}. Escalation {task.escalationStage + 1} of "
        f"{MAX_ESCALATION_STAGE}."
    )


def escalate_stale_tasks(
    session_factory: SessionFactory, subscription_id: uuid.UUID, notify: Notify, *, now: datetime
) -> EscalationRun:
    run = EscalationRun()
    with session_factory() as session:
        stale = CrmStore(session).tasks.list_stale_for_escalation(session, subscription_id)
    run.stale = len(stale)
    for task in stale:
        if not is_due_for_stage(task, now):
            run.not_yet_due += 1
            continue
        if task.salesRep is not None and not task.salesRep.isActive:
            # Never name a rep who left: the hand-over gives the task its new owner, and the
            # next run escalates it to them.
            run.awaiting_hand_over += 1
            continue
        with session_factory() as session:
            if not CrmStore(session).escalations.advance_stage(
                session, task.id, from_stage=task.escalationStage, max_stage=MAX_ESCALATION_STAGE
            ):
                continue  # another run escalated it first
            # The HubSpot task shows the escalation (high priority), in the same transaction.
            CrmStore(session).outbox.enqueue(
                session,
                subscription_id,
                OutboxKind.TASK,
                task_change_intent(task.id, f"stage-{task.escalationStage + 1}"),
                follow_up_task_id=task.id,
            )
            fields: dict[str, object] = {
                "task_id": task.id,
                "subscription_id": str(subscription_id),
                "sales_rep_id": task.salesRepId,
                "contact_id": task.contactId,
                "escalation_stage": task.escalationStage + 1,
            }
            if not notify(escalation_text(task, now), fields):
                run.undelivered += 1
                session.rollback()  # the stage stays: the next run sends it again
                continue
        run.escalated += 1
        stage = task.escalationStage + 1
        run.by_stage[stage] = run.by_stage.get(stage, 0) + 1
    return run
