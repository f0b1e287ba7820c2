"""crm.rules.availability and crm.rules.first_touch: when a rep can be given a lead, the
commands' parsing, and the first-touch SLA report (docs/ownership.md)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from morpheus_pipelines.crm.rules.availability import (
    Availability,
    InvalidAvailability,
    away_until,
    duration_seconds,
    format_duration,
    format_working_hours,
    is_available,
    parse_working_hours,
    time_zone,
    validate_working_hours,
)
from morpheus_pipelines.crm.rules.first_touch import render_sla_markdown, sla_lines

WEEKDAYS = {d: [["09:00", "18:00"]] for d in ("mon", "tue", "wed", "thu", "fri")}
# 2026-12-07 is a Monday.
MONDAY_0100_UTC = datetime(2026, 12, 7, 1, 0, tzinfo=UTC)  # 09:00 in Singapore


def test_working_hours_are_read_in_the_reps_own_zone() -> None:
    singapore = Availability(time_zone="Asia/Singapore", working_hours=WEEKDAYS)
    london = Availability(time_zone="Europe/London", working_hours=WEEKDAYS)
    assert is_available(singapore, MONDAY_0100_UTC)  # 09:00 there: the start is included
    assert not is_available(london, MONDAY_0100_UTC)  # 01:00 there
    assert not is_available(singapore, datetime(2026, 12, 7, 10, 0, tzinfo=UTC))  # 18:00: out
    assert is_available(singapore, datetime(2026, 12, 7, 9, 59, 59, tzinfo=UTC))  # 17:59:59
    # Saturday in Singapore (Friday 16:00 UTC + 8 h) is a day off.
    assert not is_available(singapore, datetime(2026, 12, 11, 16, 0, tzinfo=UTC))
    assert is_available(Availability(working_hours=None), MONDAY_0100_UTC)  # always
    assert not is_available(Availability(working_hours={}), MONDAY_0100_UTC)  # never


def test_away_until_and_the_cap() -> None:
    back = datetime(2026, 12, 24, tzinfo=UTC)
    away = Availability(away_until=back)
    assert not is_available(away, datetime(2026, 12, 23, 23, 59, tzinfo=UTC))
    assert is_available(away, back)
    assert not is_available(Availability(max_open_leads=3, open_leads=3), back)
    assert is_available(Availability(max_open_leads=3, open_leads=2), back)
    assert not is_available(Availability(max_open_leads=0), back)


def test_working_hours_text() -> None:
    assert parse_working_hours("mon-fri 09:00-18:00") == WEEKDAYS
    hours = parse_working_hours("Mon-Thu 9:00-12:00 13:00-18:00; fri 09:00-15:00")
    assert hours["tue"] == [["09:00", "12:00"], ["13:00", "18:00"]]
    assert hours["fri"] == [["09:00", "15:00"]] and "sat" not in hours
    assert parse_working_hours("sun 22:00-24:00, mon 00:00-06:00")["sun"] == [["22:00", "24:00"]]
    assert format_working_hours(hours) == "mon-thu:09:00-12:00+13:00-18:00,fri:09:00-15:00"
    assert format_working_hours(None) == "-" and format_working_hours({}) == "never"
    for bad in (
        "",
        "mon-fri",
        "weekdays 09:00-18:00",
        "fri-mon 09:00-18:00",
        "mon 18:00-09:00",
        "mon 09:00-09:00",
        "mon 09:00-25:00",
        "mon 9am-6pm",
        "mon 09:00-12:00 11:00-13:00",
    ):
        with pytest.raises(InvalidAvailability):
            parse_working_hours(bad)
    with pytest.raises(InvalidAvailability):
        validate_working_hours({"mon": "09:00-18:00"})
    with pytest.raises(InvalidAvailability):
        validate_working_hours({"monday": []})


def test_time_zones_dates_and_durations() -> None:
    assert time_zone(" Asia/Singapore ") == "Asia/Singapore"
    for bad in ("Mars/Olympus", "", "../etc/passwd", "/etc/localtime"):
        with pytest.raises(InvalidAvailability):
            time_zone(bad)
    assert away_until("2026-12-24", "Asia/Singapore") == datetime(2026, 12, 23, 16, tzinfo=UTC)
    assert away_until("2026-12-24", None) == datetime(2026, 12, 24, tzinfo=UTC)
    assert away_until("2026-12-24T12:00:00+08:00", None) == datetime(2026, 12, 24, 4, tzinfo=UTC)
    for bad in ("2026-13-01", "tomorrow", "2026-12-24T12:00:00"):
        with pytest.raises(InvalidAvailability):
            away_until(bad, None)
    assert [duration_seconds(t) for t in ("90s", "15m", "1h", "1h30m", "2H")] == [
        90,
        900,
        3600,
        5400,
        7200,
    ]
    for bad in ("0m", "-5m", "15", "soon", "", "5d", "99999999h"):
        with pytest.raises(InvalidAvailability):
            duration_seconds(bad)
    assert [format_duration(s) for s in (900, 90, 7200, None)] == ["15m", "90s", "2h", "-"]


def test_the_sla_report_totals_each_pool_and_shares_of_the_judged() -> None:
    lines = sla_lines(
        [("inbound", "rep 2", 4, 3, 1), ("inbound", "rep 1", 2, 0, 1), ("events", "rep 3", 1, 0, 0)]
    )
    assert [(line.pool, line.rep, line.due, line.met, line.missed) for line in lines] == [
        ("events", None, 1, 0, 0),
        ("events", "rep 3", 1, 0, 0),
        ("inbound", None, 6, 3, 2),
        ("inbound", "rep 1", 2, 0, 1),
        ("inbound", "rep 2", 4, 3, 1),
    ]
    table = render_sla_markdown(lines, "the last week")
    assert "| inbound | **all** | 6 | 3 | 2 | 60% |" in table
    assert "| events | rep 3 | 1 | 0 | 0 | – |" in table  # pending only: no share yet
    assert "| – | – | 0 | 0 | 0 | – |" in render_sla_markdown([], "the last week")
