"""A rep who leaves hands over (docs/ownership.md, "When a rep leaves"): their open leads are
routed again in their pool, their live follow-up tasks move to the new owners and reach
HubSpot through the outbox, escalations never name them, and the Daily Summary says what moved;
on the real warehouse, the intake API over real HTTP and the HubSpot emulator."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from morpheus_pipelines.cli import main
from morpheus_pipelines.crm.api.server import create_api_key
from morpheus_pipelines.crm.models import (
    FollowUpTask,
    FollowUpTaskStatus,
    HubSpotOutboxRow,
    Lead,
    ReengagementSegment,
    RepHandOver,
    RoutingPool,
    RoutingPoolMember,
    SalesRep,
)
from morpheus_pipelines.crm.steps.follow_up_escalation import escalate_stale_tasks
from morpheus_pipelines.crm.steps.hubspot_outbox import drain_outbox
from morpheus_pipelines.crm.steps.rep_hand_over import (
    hand_over_departed_reps,
    hand_over_operations_note,
)
from morpheus_pipelines.crm.steps.sales_rep_mirror import mirror_owners
from morpheus_pipelines.crm.store import CrmStore
from tests.support.intake import client, intake_settings, serving
from tests.support.ownership import World

S = ReengagementSegment


@pytest.fixture
def intake(world: World) -> Iterator[tuple[str, str]]:
    """``morpheus serve`` for the world's subscription: (base URL, API key)."""
    _, key = create_api_key(world.url, world.subscription_id, "tests")
    with serving(intake_settings(world.url)) as (base, _):
        yield base, key


def _pool(world: World, members: list[int], *, fallback: int | None = None) -> int:
    with world.sessions() as session:
        pool = RoutingPool(
            subscriptionId=world.subscription_id,
            name="all",
            isDefault=True,
            fallbackSalesRepId=fallback,
        )
        session.add(pool)
        session.flush()
        for rep in members:
            session.add(RoutingPoolMember(poolId=pool.id, salesRepId=rep, weight=1))
        return pool.id


def _join(world: World, pool: int, rep: int) -> None:
    with world.sessions() as session:
        session.add(RoutingPoolMember(poolId=pool, salesRepId=rep, weight=1))


def _post_leads(intake: tuple[str, str], world: World, n: int) -> list[uuid.UUID]:
    base, key = intake
    http = client(key)
    ids = []
    for i in range(n):
        body = {
            "subscription_id": str(world.subscription_id),
            "source": "web-form",
            "source_submission_id": f"form-{i}",
            "campaign_ids": [],
            "contact": {"email": f"buyer{i}@customer.example"},
        }
        answer = http.post(f"{base}/v1/leads", json=body)
        assert answer.status_code == 201, answer.text
        ids.append(uuid.UUID(answer.json()["lead_id"]))
    return ids


def _drain(world: World) -> int:
    """Send the outbox to the emulator; how many rows failed."""
    with world.client(sleep=lambda _: None) as hubspot:
        report = drain_outbox(world.sessions, hubspot, world.subscription_id)
    return sum(report.failed.values()) + sum(report.postponed.values()) + report.dead


def _mirror(world: World):
    with world.client() as hubspot:
        return mirror_owners(hubspot, world.sessions, world.subscription_id)


def _owners(world: World, lead_ids: list[uuid.UUID]) -> dict[uuid.UUID, int | None]:
    with world.sessions() as session:
        rows = session.execute(select(Lead.id, Lead.ownerSalesRepId).where(Lead.id.in_(lead_ids)))
        return dict(rows.all())


def _load(world: World) -> dict[int, int]:
    with world.sessions() as session:
        return dict(session.execute(select(SalesRep.id, SalesRep.openLeads)).all())


def _overdue(world: World, task_id: int, days: float) -> None:
    with world.sessions() as session:
        session.execute(
            update(FollowUpTask)
            .where(FollowUpTask.id == task_id)
            .values(dueAt=datetime.now(UTC) - timedelta(days=days))
        )


def _escalations(world: World) -> tuple[object, list[tuple[str, dict]]]:
    sent: list[tuple[str, dict]] = []

    def notify(text: str, fields: dict) -> bool:
        sent.append((text, fields))
        return True

    run = escalate_stale_tasks(world.sessions, world.subscription_id, notify, now=datetime.now(UTC))
    return run, sent


def _hubspot_owner_of(world: World, lead_id: uuid.UUID) -> str | None:
    with world.sessions() as session:
        contact_id = session.get(Lead, lead_id).hubspotContactId
    return world.hubspot.contact(contact_id)["properties"].get("hubspot_owner_id")


def test_a_rep_archived_in_hubspot_hands_over_leads_and_the_open_task_in_the_mirror_run(
    world: World, intake: tuple[str, str]
) -> None:
    # The departed-rep probe: Ana owns four open leads and a PENDING task, a day overdue.
    ana = world.add_rep("ana@acme.test", "101")
    pool = _pool(world, [ana])
    contact = world.add_contact()
    world.add_member(S.SUPPLIER, contact)
    world.run(S.SUPPLIER)
    [task] = world.tasks(contact)
    assert task.salesRepId == ana and task.status is FollowUpTaskStatus.PENDING
    _overdue(world, task.id, 1.5)
    leads = _post_leads(intake, world, 4)
    assert _drain(world) == 0  # the leads are HubSpot contacts, owned by Ana
    assert {_hubspot_owner_of(world, lead) for lead in leads} == {"101"}
    ben, cy = world.add_rep("ben@acme.test", "102"), world.add_rep("cy@acme.test", "103")
    _join(world, pool, ben)
    _join(world, pool, cy)

    world.hubspot.set_owner_archived("101")
    outcome = _mirror(world)

    assert outcome.succeeded and outcome.counts["deactivated"] == 1
    [hand_over] = outcome.hand_overs
    assert (hand_over.tally.leads_rerouted, hand_over.tally.tasks_moved) == (4, 1)
    assert outcome.departed_with_work == 0
    owners = _owners(world, leads)
    assert Counter(owners.values()) == {ben: 2, cy: 2}  # the same least-loaded rule as intake
    assert _load(world)[ana] == 0 and _load(world)[ben] == _load(world)[cy] == 2
    [moved] = world.tasks(contact)
    assert moved.salesRepId in (ben, cy) and moved.status is FollowUpTaskStatus.PENDING
    new_owner = {ben: "102", cy: "103"}[moved.salesRepId]

    assert _drain(world) == 0  # HubSpot sees every move
    assert {lead: _hubspot_owner_of(world, lead) for lead in leads} == {
        lead: {ben: "102", cy: "103"}[owners[lead]] for lead in leads
    }
    assert world.hubspot_contact(contact)["properties"]["hubspot_owner_id"] == new_owner
    [hubspot_task] = [
        t["properties"]
        for t in world.hubspot.tasks().values()
        if t["properties"].get("morpheus_intent_key") == f"task:{task.id}"
    ]
    assert hubspot_task["hubspot_owner_id"] == new_owner

    run, sent = _escalations(world)  # names the new owner, never the rep who left
    assert run.escalated == 1 and run.awaiting_hand_over == 0
    [(text, fields)] = sent
    assert "ana@acme.test" not in text and fields["sales_rep_id"] == moved.salesRepId

    note = hand_over_operations_note(world.sessions, world.subscription_id, datetime.now(UTC))
    assert note.severity == "ok"
    [line] = note.lines
    assert line.startswith("ana@acme.test left") and "4 open lead(s)" in line
    assert "ben@acme.test (2 lead(s)" in line and "cy@acme.test (2 lead(s)" in line

    # Run again: nothing left to move, nothing queued twice.
    with world.sessions() as session:
        queued = session.scalar(select(func.count()).select_from(HubSpotOutboxRow))
    assert _mirror(world).hand_overs == []
    with world.sessions() as session:
        assert session.scalar(select(func.count()).select_from(HubSpotOutboxRow)) == queued
        assert session.scalar(select(func.count()).select_from(RepHandOver)) == 1


def test_a_task_of_a_rep_who_left_never_holds_its_contact_nor_is_escalated_naming_them(
    world: World,
) -> None:
    # Between the deactivation and the hand-over: the guard and the escalation both see it.
    ana = world.add_rep("ana@acme.test", "101")
    contact = world.add_contact()
    world.add_member(S.SUPPLIER, contact)
    world.run(S.SUPPLIER)
    [task] = world.tasks(contact)
    _overdue(world, task.id, 1.5)
    world.set_rep_active(ana, False)
    world.add_rep("ben@acme.test", "102")

    run, sent = _escalations(world)
    assert (run.escalated, run.awaiting_hand_over, sent) == (0, 1, [])

    _overdue(world, task.id, -1)  # due tomorrow: live work that would hold the contact
    world.add_member(S.EMAIL_CLICK, contact)  # but Ana's task no longer blocks it
    assert world.run(S.EMAIL_CLICK).outcomes == {"reassigned": 1}
    assert world.hubspot_contact(contact)["properties"]["hubspot_owner_id"] == "102"


def test_nobody_assignable_leaves_the_leads_waiting_unowned_in_hubspot_and_says_so(
    world: World, intake: tuple[str, str]
) -> None:
    ana = world.add_rep("ana@acme.test", "101")
    _pool(world, [ana])
    leads = _post_leads(intake, world, 2)
    assert _drain(world) == 0
    assert {_hubspot_owner_of(world, lead) for lead in leads} == {"101"}
    world.set_rep_active(ana, False)

    [hand_over] = hand_over_departed_reps(world.sessions, world.subscription_id)

    assert hand_over.tally.leads_waiting == 2
    assert set(_owners(world, leads).values()) == {None}
    assert _drain(world) == 0
    # Cleared in HubSpot (an empty value): not the rep who left.
    assert {_hubspot_owner_of(world, lead) for lead in leads} == {None}
    note = hand_over_operations_note(world.sessions, world.subscription_id, datetime.now(UTC))
    assert note.severity == "warning" and "2 lead(s) wait for an owner" in note.lines[0]


def test_the_pools_fallback_rep_takes_the_leads_when_no_member_can(
    world: World, intake: tuple[str, str]
) -> None:
    ana, fay = world.add_rep("ana@acme.test", "101"), world.add_rep("fay@acme.test", "106")
    _pool(world, [ana], fallback=fay)
    leads = _post_leads(intake, world, 3)
    world.set_rep_active(ana, False)

    [hand_over] = hand_over_departed_reps(world.sessions, world.subscription_id)

    assert hand_over.tally.leads_to_fallback == 3
    assert set(_owners(world, leads).values()) == {fay}
    assert _load(world)[fay] == 0  # a fallback lead is not charged, as at intake


def test_a_chunked_hand_over_moves_every_lead_once(world: World, intake: tuple[str, str]) -> None:
    ana, ben = world.add_rep("ana@acme.test", "101"), world.add_rep("ben@acme.test", "102")
    pool = _pool(world, [ana])
    leads = _post_leads(intake, world, 7)
    _join(world, pool, ben)
    world.set_rep_active(ana, False)

    [hand_over] = hand_over_departed_reps(world.sessions, world.subscription_id, chunk=3)

    assert hand_over.tally.leads_rerouted == 7
    assert set(_owners(world, leads).values()) == {ben}
    with world.sessions() as session:
        row = session.get(RepHandOver, hand_over.hand_over_id)
        assert (row.leadsRerouted, row.moves, row.finishedAt is not None) == (
            7,
            {str(ben): {"leads": 7, "tasks": 0}},
            True,
        )
        kinds = session.scalars(
            select(HubSpotOutboxRow.intentKey).where(
                HubSpotOutboxRow.intentKey.like(f"hand-over:{hand_over.hand_over_id}:lead:%")
            )
        ).all()
    assert len(kinds) == len(set(kinds)) == 7


def test_rep_deactivate_hands_over_and_the_mirror_keeps_the_rep_inactive(
    world: World,
    intake: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", world.url)
    ana, ben = world.add_rep("ana@acme.test", "101"), world.add_rep("ben@acme.test", "102")
    pool = _pool(world, [ana])
    leads = _post_leads(intake, world, 2)
    _join(world, pool, ben)

    assert main(["rep", "deactivate", str(ana)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"rep {ana} email=ana@acme.test active=no") and out[0].endswith(
        " updated"
    )
    assert out[1] == (
        "handed over: 2 open lead(s) (2 re-routed, 0 to a fallback rep, 0 waiting), "
        "0 live task(s) (0 with nobody to take them)"
    )
    assert set(_owners(world, leads).values()) == {ben}

    # HubSpot still lists Ana as an active owner: the mirror does not bring her back.
    assert _mirror(world).counts["reactivated"] == 0
    with world.sessions() as session:
        assert session.get(SalesRep, ana).isActive is False
    assert main(["rep", "deactivate", str(ana)]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(" unchanged")

    assert main(["rep", "reactivate", str(ana)]) == 0
    assert capsys.readouterr().out.rstrip().endswith(" updated")
    with world.sessions() as session:
        store = CrmStore(session)
        assert store.sales_reps.get_by_id(session, ana).isActive is True
    assert set(_owners(world, leads).values()) == {ben}  # what moved stays moved
    assert main(["rep", "deactivate", "999999"]) == 2
    assert "no sales rep 999999" in capsys.readouterr().err
