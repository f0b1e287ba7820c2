"""The first-touch SLA (docs/ownership.md, "First-touch SLA"): a deadline set at intake from
the pool's SLA, a touch by the owner meets it, a miss is recorded and re-routed once to another
assignable rep (load moved, HubSpot contact owner queued), never to the same rep and never for
a lead whose owner a person chose; the report per pool and rep."""

from __future__ import annotations

import functools
import uuid
from datetime import timedelta
from typing import Any

import dagster as dg
from sqlalchemy import select, update

from morpheus_pipelines.assets.leads.first_touch import first_touch_sla
from morpheus_pipelines.crm.models import (
    Activity,
    ActivityType,
    HubSpotOutboxRow,
    Lead,
    RoutingPool,
    RoutingPoolMember,
)
from morpheus_pipelines.crm.rules.hubspot_outbox import OutboxKind
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.crm.steps.first_touch import sweep_first_touch
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.first_touch import first_touch_due_leads
from tests.support.intake import Tenant, client

SLA = timedelta(minutes=15)


def _pool_with_sla(tenant: Tenant, members: dict[int, int]) -> int:
    pool = tenant.add_pool("inbound", members, default=True)
    with get_session(tenant.url) as session:
        session.execute(
            update(RoutingPool)
            .where(RoutingPool.id == pool)
            .values(firstTouchSlaSeconds=int(SLA.total_seconds()))
        )
    return pool


def _lead(tenant: Tenant, base: str, submission: str) -> Lead:
    body = client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body(submission)).json()
    with get_session(tenant.url) as session:
        lead = session.get(Lead, uuid.UUID(body["lead_id"]))
        session.expunge(lead)
        return lead


def _touch(tenant: Tenant, lead: Lead, owner: str, after: timedelta, **extra: Any) -> None:
    with get_session(tenant.url) as session:
        session.add(
            Activity(
                subscriptionId=tenant.subscription_id,
                externalId=f"call-{uuid.uuid4()}",
                type=extra.pop("type", ActivityType.CALL),
                direction=extra.pop("direction", "outbound"),
                leadId=lead.id,
                occurredAt=lead.createdAt + after,
                metadata_={"hubspot_owner_id": owner},
            )
        )


def _sweep(tenant: Tenant, lead: Lead, after: timedelta):
    return sweep_first_touch(functools.partial(get_session, tenant.url), now=lead.createdAt + after)


def _reread(tenant: Tenant, lead: Lead) -> Lead:
    with get_session(tenant.url) as session:
        fresh = session.get(Lead, lead.id)
        session.expunge(fresh)
        return fresh


def _owner_rows(tenant: Tenant, lead: Lead) -> list[HubSpotOutboxRow]:
    with get_session(tenant.url) as session:
        rows = session.scalars(
            select(HubSpotOutboxRow).where(
                HubSpotOutboxRow.leadId == lead.id,
                HubSpotOutboxRow.kind == OutboxKind.CONTACT_OWNER.value,
            )
        ).all()
        session.expunge_all()
        return list(rows)


def test_the_deadline_is_set_at_intake_from_the_pool_and_only_with_an_sla(
    tenant: Tenant, service
) -> None:
    base, _ = service
    ana = tenant.add_rep("ana@acme.test", "101")
    pool = _pool_with_sla(tenant, {ana: 1})
    lead = _lead(tenant, base, "s-1")
    assert lead.firstTouchDueAt == lead.createdAt + SLA
    with get_session(tenant.url) as session:
        session.execute(
            update(RoutingPool).where(RoutingPool.id == pool).values(firstTouchSlaSeconds=None)
        )
    assert _lead(tenant, base, "s-2").firstTouchDueAt is None


def test_a_touch_by_the_owner_meets_the_sla_and_the_dialer_does_not(
    tenant: Tenant, service
) -> None:
    base, _ = service
    ana = tenant.add_rep("ana@acme.test", "101")
    ben = tenant.add_rep("ben@acme.test", "102")
    _pool_with_sla(tenant, {ana: 1, ben: 1})
    touched, dialed = _lead(tenant, base, "t-1"), _lead(tenant, base, "t-2")
    owner = {touched.ownerSalesRepId: touched.ownerHubspotOwnerId}
    _touch(tenant, touched, touched.ownerHubspotOwnerId, timedelta(minutes=4))
    # The AI dialer's call and an inbound reply are no first touch.
    _touch(tenant, dialed, DIALER_FALLBACK_HUBSPOT_OWNER_ID, timedelta(minutes=1))
    _touch(tenant, dialed, dialed.ownerHubspotOwnerId, timedelta(minutes=2), direction="inbound")

    run = _sweep(tenant, touched, timedelta(minutes=5))
    assert run.counts == {"met": 1, "touched_late": 0}
    met = _reread(tenant, touched)
    assert met.firstTouchAt == touched.createdAt + timedelta(minutes=4)
    assert met.firstTouchMissedAt is None and met.firstTouchSalesRepId in owner
    assert _reread(tenant, dialed).firstTouchAt is None  # still pending, not yet due


def test_a_miss_is_recorded_and_rerouted_once_never_to_the_same_rep(
    tenant: Tenant, service
) -> None:
    base, _ = service
    ana = tenant.add_rep("ana@acme.test", "101")
    ben = tenant.add_rep("ben@acme.test", "102")
    _pool_with_sla(tenant, {ana: 1, ben: 1})
    lead = _lead(tenant, base, "m-1")
    first = lead.ownerSalesRepId
    other = ben if first == ana else ana
    loads = tenant.open_leads()
    assert loads[first] == 1 and loads[other] == 0  # the new owner would be the old: least load

    run = _sweep(tenant, lead, SLA + timedelta(seconds=1))

    assert run.counts["missed_rerouted"] == 1
    moved = _reread(tenant, lead)
    assert moved.ownerSalesRepId == other and moved.firstTouchSalesRepId == first
    assert moved.firstTouchMissedAt is not None and moved.firstTouchAt is None
    assert tenant.open_leads() == {first: 0, other: 1}  # released and charged
    [queued] = _owner_rows(tenant, lead)
    assert queued.payload == {"hubspot_owner_id": moved.ownerHubspotOwnerId}
    # Once: the new owner has no deadline of their own, and a second sweep moves nothing.
    again = _sweep(tenant, lead, SLA * 3)
    assert "missed_rerouted" not in again.counts
    assert _reread(tenant, lead).ownerSalesRepId == other
    assert tenant.open_leads() == {first: 0, other: 1} and len(_owner_rows(tenant, lead)) == 1
    line = {(x.pool, x.rep): x for x in again.report}
    assert (line["inbound", f"rep {first}"].due, line["inbound", f"rep {first}"].missed) == (1, 1)
    assert ("inbound", f"rep {other}") not in line  # the miss is the first owner's


def test_a_lead_whose_owner_a_person_chose_is_never_rerouted(tenant: Tenant, service) -> None:
    base, _ = service
    ana = tenant.add_rep("ana@acme.test", "101")
    ben = tenant.add_rep("ben@acme.test", "102")
    _pool_with_sla(tenant, {ana: 1})
    alone = _lead(tenant, base, "h-1")  # ana is the pool's only member
    assert alone.ownerSalesRepId == ana
    chosen = _lead(tenant, base, "h-2")
    with get_session(tenant.url) as session:
        session.execute(update(Lead).where(Lead.id == chosen.id).values(ownerSetByHand=True))
        # Ben joins the pool: someone else is assignable now, but a person chose ana for one.
        session.add(RoutingPoolMember(poolId=alone.poolId, salesRepId=ben, weight=1))

    run = _sweep(tenant, chosen, SLA + timedelta(seconds=1))
    assert run.counts["missed_set_by_hand"] == 1 and run.counts["missed_rerouted"] == 1
    assert _reread(tenant, chosen).ownerSalesRepId == ana
    assert _reread(tenant, chosen).firstTouchMissedAt is not None
    assert _reread(tenant, alone).ownerSalesRepId == ben
    assert not _owner_rows(tenant, chosen)


def test_a_miss_with_only_the_same_rep_assignable_keeps_the_owner(tenant: Tenant, service) -> None:
    base, _ = service
    ana = tenant.add_rep("ana@acme.test", "101")
    _pool_with_sla(tenant, {ana: 1})
    lead = _lead(tenant, base, "o-1")

    run = _sweep(tenant, lead, SLA + timedelta(minutes=1))

    assert run.counts["missed_nobody_else_assignable"] == 1
    kept = _reread(tenant, lead)
    assert kept.ownerSalesRepId == ana and kept.firstTouchMissedAt is not None
    assert tenant.open_leads() == {ana: 1} and not _owner_rows(tenant, lead)


def test_a_touch_after_the_deadline_is_late_not_rerouted(tenant: Tenant, service) -> None:
    base, _ = service
    ana = tenant.add_rep("ana@acme.test", "101")
    ben = tenant.add_rep("ben@acme.test", "102")
    _pool_with_sla(tenant, {ana: 1, ben: 1})
    lead = _lead(tenant, base, "l-1")
    _touch(
        tenant, lead, lead.ownerHubspotOwnerId, SLA + timedelta(minutes=1), type=ActivityType.EMAIL
    )

    run = _sweep(tenant, lead, SLA + timedelta(minutes=2))

    assert run.counts["touched_late"] == 1 and "missed_rerouted" not in run.counts
    late = _reread(tenant, lead)
    assert late.ownerSalesRepId == lead.ownerSalesRepId
    assert late.firstTouchAt is not None and late.firstTouchMissedAt is not None


def test_the_sensor_asks_for_a_run_only_when_a_first_touch_is_due_and_the_asset_reports(
    tenant: Tenant, service
) -> None:
    base, _ = service
    resources = {"warehouse": WarehouseResource(database_url=tenant.url)}
    ana = tenant.add_rep("ana@acme.test", "101")
    ben = tenant.add_rep("ben@acme.test", "102")
    _pool_with_sla(tenant, {ana: 1, ben: 1})
    lead = _lead(tenant, base, "d-1")

    quiet = first_touch_due_leads(dg.build_sensor_context(resources=resources))
    assert isinstance(quiet, dg.SkipReason)  # due in 15 minutes, untouched

    with get_session(tenant.url) as session:  # the deadline passes
        session.execute(
            update(Lead)
            .where(Lead.id == lead.id)
            .values(firstTouchDueAt=lead.createdAt - timedelta(seconds=1))
        )
    due = first_touch_due_leads(dg.build_sensor_context(resources=resources))
    assert isinstance(due, dg.SensorResult) and len(due.run_requests) == 1

    result = dg.materialize([first_touch_sla], resources=resources)
    [materialization] = result.asset_materializations_for_node("first_touch_sla")
    assert materialization.metadata["outcomes"].value == {
        "met": 0,
        "touched_late": 0,
        "missed_rerouted": 1,
    }
    report = materialization.metadata["report"].value
    assert f"| inbound | rep {lead.ownerSalesRepId} | 1 | 0 | 1 | 0% |" in report
    after = first_touch_due_leads(dg.build_sensor_context(resources=resources))
    assert isinstance(after, dg.SkipReason)  # judged: nothing due any more
