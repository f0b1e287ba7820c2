"""Availability and capacity on the hot path (docs/ownership.md, "Availability and capacity"):
a rep outside their working hours in their own zone, away, or at their cap is never given a
lead, decided by the claim statement at the database's now() whatever the owner cache holds;
nobody assignable takes the fallback path; the SQL and its pure twin agree."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import text, update

from morpheus_pipelines.crm.models import SalesRep
from morpheus_pipelines.crm.repositories.routing_directory import available_sql
from morpheus_pipelines.crm.rules.availability import DAYS, Availability, is_available
from morpheus_pipelines.db.session import get_session
from tests.support.intake import Tenant, client, freeze_owner_cache

# Pago Pago (UTC-11) and Kiritimati (UTC+14) are 25 hours apart: never on the same weekday.
BEHIND, AHEAD = "Pacific/Pago_Pago", "Pacific/Kiritimati"


def _day(zone: str, days: int = 0) -> str:
    return DAYS[(datetime.now(ZoneInfo(zone)) + timedelta(days=days)).weekday()]


def _set(url: str, rep_id: int, **values: Any) -> None:
    with get_session(url) as session:
        session.execute(update(SalesRep).where(SalesRep.id == rep_id).values(**values))


def test_a_rep_outside_hours_away_or_at_the_cap_is_never_given_a_lead(
    tenant: Tenant, service
) -> None:
    base, app = service
    night = tenant.add_rep("night@acme.test", "501")
    away = tenant.add_rep("away@acme.test", "502")
    full = tenant.add_rep("full@acme.test", "503")
    capped = tenant.add_rep("capped@acme.test", "504")
    working = tenant.add_rep("working@acme.test", "505")
    tenant.add_pool("apac", {r: 1 for r in (night, away, full, capped, working)}, default=True)
    session = client(tenant.key)
    session.post(f"{base}/v1/leads", json=tenant.lead_body("warm-up"))  # the cache is loaded
    refreshes = freeze_owner_cache(app)  # it proposes every member from here on
    all_day = [["00:00", "24:00"]]
    # Today in Pago Pago is never today in Kiritimati: the same day's hours, read in her own
    # zone, put the night rep off work.
    _set(tenant.url, night, timeZone=AHEAD, workingHours={_day(BEHIND): all_day})
    _set(
        tenant.url,
        working,
        timeZone=BEHIND,
        workingHours={_day(BEHIND): all_day, _day(BEHIND, 1): all_day},
    )
    _set(tenant.url, away, awayUntil=datetime.now(UTC) + timedelta(days=1))
    loads = tenant.open_leads()
    _set(tenant.url, full, maxOpenLeads=loads[full])
    _set(tenant.url, capped, maxOpenLeads=loads[capped] + 2)

    owners = [
        session.post(f"{base}/v1/leads", json=tenant.lead_body(f"a-{i}")).json()["owner"]
        for i in range(8)
    ]

    given = {o["sales_rep_id"] for o in owners}
    assert given == {capped, working}
    after = tenant.open_leads()
    assert after[capped] == loads[capped] + 2  # up to the cap, not beyond
    assert after[working] == loads[working] + 6
    assert all(after[r] == loads[r] for r in (night, away, full))
    assert app.state.directory.refreshes == refreshes  # the claim decided, not a reload

    _set(tenant.url, away, awayUntil=datetime.now(UTC) - timedelta(seconds=1))  # back
    owner = session.post(f"{base}/v1/leads", json=tenant.lead_body("back")).json()["owner"]
    assert owner["sales_rep_id"] == away  # the least loaded, now that she is back


def test_nobody_assignable_in_the_pool_takes_the_fallback_path(tenant: Tenant, service) -> None:
    base, _ = service
    off = tenant.add_rep("off@acme.test", "601")
    full = tenant.add_rep("full@acme.test", "602")
    backup = tenant.add_rep("backup@acme.test", "603")
    tenant.add_pool("night", {off: 1, full: 1}, default=True, fallback=backup)
    _set(tenant.url, off, workingHours={})  # no working day at all
    _set(tenant.url, full, maxOpenLeads=0)
    session = client(tenant.key)

    first = session.post(f"{base}/v1/leads", json=tenant.lead_body("f-1")).json()
    assert first["owner"]["sales_rep_id"] == backup and first["owner_is_fallback"] is True

    _set(tenant.url, backup, awayUntil=datetime.now(UTC) + timedelta(days=3))
    second = session.post(f"{base}/v1/leads", json=tenant.lead_body("f-2")).json()
    # The fallback rep is away too: further down the fallback path, never an unavailable rep.
    # Nobody on the ladder is assignable: the lead waits for an owner.
    assert second["owner"] is None and second["owner_state"] == "waiting"
    assert tenant.open_leads() == {off: 0, full: 0, backup: 0}


ZONES = [
    "UTC",
    "Asia/Singapore",
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "Pacific/Kiritimati",
    "Pacific/Pago_Pago",
    "America/New_York",
    "Europe/London",
    "America/St_Johns",
]


def _random_hours(rng: random.Random) -> dict[str, list[list[str]]] | None:
    if rng.random() < 0.15:
        return None
    hours = {}
    for day in DAYS:
        if rng.random() < 0.3:
            continue
        cuts = sorted(rng.sample(range(0, 24 * 60 + 1, 15), 2 * rng.randint(1, 2)))
        spans = [cuts[i : i + 2] for i in range(0, len(cuts), 2)]
        hours[day] = [
            [f"{s // 60:02d}:{s % 60:02d}", f"{e // 60:02d}:{e % 60:02d}"] for s, e in spans
        ]
    return hours


def _random_case(rng: random.Random) -> tuple[Availability, datetime]:
    zone = rng.choice([*ZONES, None])
    hours = _random_hours(rng)
    instant = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randrange(366 * 86400))
    if hours and rng.random() < 0.5:  # on a boundary, to the second, in the rep's zone
        day = rng.choice(list(hours) or ["mon"])
        if hours.get(day):
            clock = rng.choice(rng.choice(hours[day]))
            hour, minute = (24, 0) if clock == "24:00" else map(int, clock.split(":"))
            local = instant.astimezone(ZoneInfo(zone or "UTC"))
            local = local.replace(hour=0, minute=0, second=0) + timedelta(
                hours=hour, minutes=minute, seconds=rng.choice([-1, 0, 1])
            )
            instant = local.astimezone(UTC)
    away = None
    if rng.random() < 0.3:
        away = instant + timedelta(seconds=rng.choice([-3600, -1, 0, 1, 3600]))
    cap = rng.choice([None, None, 0, 3, 10])
    rep = Availability(zone, hours, away, cap, rng.randrange(12))
    return rep, instant


def test_the_claim_sql_and_the_pure_rule_agree_over_random_reps_and_instants(
    database_url: str,
) -> None:
    rng = random.Random(36)
    cases = [_random_case(rng) for _ in range(3000)]
    rows = [
        {
            "i": i,
            "timeZone": rep.time_zone,
            "workingHours": rep.working_hours,
            "awayUntil": None if rep.away_until is None else rep.away_until.isoformat(),
            "maxOpenLeads": rep.max_open_leads,
            "openLeads": rep.open_leads,
            "at": at.isoformat(),
        }
        for i, (rep, at) in enumerate(cases)
    ]
    statement = text(f"""
        SELECT r.i, {available_sql("r", "r.at")}
        FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS r(
            i int, "timeZone" text, "workingHours" jsonb, "awayUntil" timestamptz,
            "maxOpenLeads" int, "openLeads" int, at timestamptz)
        ORDER BY r.i
    """)
    with get_session(database_url) as session:
        sql = [available for _, available in session.execute(statement, {"rows": json.dumps(rows)})]

    python = [is_available(rep, at) for rep, at in cases]
    disagreements = [
        (cases[i], sql[i], python[i]) for i in range(len(cases)) if sql[i] != python[i]
    ]
    assert not disagreements, disagreements[:3]
    # Both outcomes are well represented, so agreement is not on a constant.
    assert 0.1 < sum(python) / len(python) < 0.9
