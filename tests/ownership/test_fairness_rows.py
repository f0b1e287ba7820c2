"""The fairness report's rows are updated in place, never deleted: a report read between two
runs, or a row a later report no longer lists, is not lost."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from morpheus_pipelines.crm.models import ReengagementSegment as S
from morpheus_pipelines.crm.models import SalesRepFairness
from morpheus_pipelines.crm.steps.reengagement.reports import fairness_report
from tests.support.ownership import World


def _rows(world: World) -> dict[int, tuple[int, int]]:
    with world.sessions() as session:
        rows = session.scalars(
            select(SalesRepFairness).where(SalesRepFairness.subscriptionId == world.subscription_id)
        )
        return {row.salesRepId: (row.id, row.assignments) for row in rows}


def test_a_second_report_updates_each_reps_row_in_place(world: World) -> None:
    ana = world.add_rep("ana@acme.test", "101")
    ben = world.add_rep("ben@acme.test", "102")
    for _ in range(2):
        world.add_member(S.SUPPLIER, world.add_contact())
    world.assign(S.SUPPLIER)
    fairness_report(world.sessions, world.subscription_id, window=timedelta(days=7))
    first = _rows(world)

    for _ in range(2):
        world.add_member(S.SUPPLIER, world.add_contact())
    world.assign(S.SUPPLIER)
    fairness_report(world.sessions, world.subscription_id, window=timedelta(days=7))
    second = _rows(world)

    assert first == {ana: (first[ana][0], 1), ben: (first[ben][0], 1)}
    # The same rows (same ids: updated, not deleted and re-inserted), with the new counts.
    assert second == {ana: (first[ana][0], 2), ben: (first[ben][0], 2)}
    with world.sessions() as session:
        latest = world_store_rows(session, world)
    assert [row.salesRepId for row in latest] == sorted([ana, ben])


def world_store_rows(session, world: World) -> list[SalesRepFairness]:
    from morpheus_pipelines.crm.repositories.reengagement import SalesRepFairnessRepository

    return SalesRepFairnessRepository().list_for_subscription(session, world.subscription_id)
