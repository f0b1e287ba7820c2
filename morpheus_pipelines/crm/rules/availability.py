"""When a rep can be given a lead (docs/ownership.md, "Availability and capacity"), and the
first-touch SLA's parsing: the pure twin of the claim statement's SQL (the SQL decides on the
hot path; this module validates the commands' input and is held equal to the SQL by a
property test).

A rep is available at an instant when it is inside their working hours in their own time
zone, not before ``awayUntil``, and below ``maxOpenLeads`` when a cap is set.

``workingHours`` (JSONB) maps a lowercase three-letter day to its spans, each
``[start, end]`` as zero-padded ``"HH:MM"`` in the rep's zone, start included, end excluded,
``"24:00"`` allowed as an end: ``{"mon": [["09:00", "12:00"], ["13:00", "18:00"]]}``. A day
that is missing (or an empty list) is a day off; ``NULL`` is always working. A span never
crosses midnight: a night shift is two spans on two days. No time zone is UTC.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_TIME = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]|24:00")
_SPAN = re.compile(r"([0-9]{1,2}:[0-9]{2})-([0-9]{1,2}:[0-9]{2})")
_DURATION = re.compile(r"([0-9]+)\s*([smh])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}

WorkingHours = dict[str, list[list[str]]]


class InvalidAvailability(ValueError):
    """A working-hours text, time zone, date, cap or SLA that cannot be used; the message says
    why in a few words."""


@dataclass(frozen=True)
class Availability:
    """What decides whether a rep is available, as ``sales_reps`` holds it."""

    time_zone: str | None = None
    working_hours: Mapping[str, Any] | None = None
    away_until: datetime | None = None
    max_open_leads: int | None = None
    open_leads: int = 0


def is_available(rep: Availability, at: datetime) -> bool:
    """Whether ``rep`` may be given a lead at ``at`` (an aware instant)."""
    if rep.away_until is not None and at < rep.away_until:
        return False
    if rep.max_open_leads is not None and rep.open_leads >= rep.max_open_leads:
        return False
    return is_working(rep.working_hours, rep.time_zone, at)


def is_working(hours: Mapping[str, Any] | None, time_zone: str | None, at: datetime) -> bool:
    """Whether ``at`` falls in one of the day's spans, read in ``time_zone``."""
    if hours is None:
        return True
    local = at.astimezone(ZoneInfo(time_zone) if time_zone else UTC)
    clock = local.strftime("%H:%M")  # minutes, as the SQL's to_char(…, 'HH24:MI')
    spans = hours.get(DAYS[local.weekday()]) or []
    return any(start <= clock < end for start, end in spans)


def time_zone(name: str) -> str:
    """An IANA time zone name, as given; refused when zoneinfo does not know it."""
    text = name.strip()
    if not text or text.startswith(("/", ".")) or ".." in text:
        raise InvalidAvailability(f"{name!r} is not an IANA time zone (e.g. Asia/Singapore)")
    try:
        ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidAvailability(
            f"unknown time zone {text!r} (an IANA name, e.g. Asia/Singapore)"
        ) from None
    return text


def parse_working_hours(text: str) -> WorkingHours:
    """``'mon-fri 09:00-18:00'``, ``'mon-thu 09:00-12:00 13:00-18:00, fri 09:00-15:00'``: day
    ranges with their spans, groups separated by commas or semicolons; a later group's days
    take its spans in addition."""
    hours: WorkingHours = {}
    groups = [g.strip() for g in re.split(r"[,;]", text.strip().lower())]
    if not any(groups):
        raise InvalidAvailability("empty working hours (e.g. 'mon-fri 09:00-18:00')")
    for group in groups:
        words = group.split()
        if len(words) < 2:
            raise InvalidAvailability(
                f"{group!r} is not DAYS HH:MM-HH:MM (e.g. 'mon-fri 09:00-18:00')"
            )
        days = _days(words[0])
        spans = [_span(word) for word in words[1:]]
        for day in days:
            hours.setdefault(day, []).extend([list(s) for s in spans])
    return validate_working_hours(hours)


def validate_working_hours(hours: Mapping[str, Any]) -> WorkingHours:
    """The stored shape, checked: known days, spans of two ``HH:MM`` with start before end,
    not overlapping; spans sorted."""
    if not isinstance(hours, Mapping):
        raise InvalidAvailability("working hours must map days to spans")
    checked: WorkingHours = {}
    for day, spans in hours.items():
        if day not in DAYS:
            raise InvalidAvailability(f"unknown day {day!r} (one of {', '.join(DAYS)})")
        if not isinstance(spans, list):
            raise InvalidAvailability(f"{day}: spans must be a list")
        pairs = []
        for span in spans:
            if (
                not isinstance(span, list | tuple)
                or len(span) != 2
                or not all(isinstance(t, str) and _TIME.fullmatch(t) for t in span)
            ):
                raise InvalidAvailability(f"{day}: {span!r} is not [HH:MM, HH:MM]")
            start, end = span
            if start == "24:00" or start >= end:
                raise InvalidAvailability(f"{day}: {start}-{end} must start before it ends")
            pairs.append([start, end])
        pairs.sort()
        for (_, end), (start, _) in pairwise(pairs):
            if start < end:
                raise InvalidAvailability(f"{day}: spans overlap at {start}")
        checked[day] = pairs
    return checked


def format_working_hours(hours: Mapping[str, Any] | None) -> str:
    """The stored shape as one word for ``rep list``: ``mon-fri:09:00-18:00``, ``-`` for
    always."""
    if hours is None:
        return "-"
    groups: list[tuple[list[str], str]] = []
    for day in DAYS:
        spans = " ".join(f"{s}-{e}" for s, e in hours.get(day) or [])
        if not spans:
            continue
        if (
            groups
            and groups[-1][1] == spans
            and DAYS.index(groups[-1][0][-1]) + 1 == DAYS.index(day)
        ):
            groups[-1][0].append(day)
        else:
            groups.append(([day], spans))
    if not groups:
        return "never"
    return ",".join(
        (days[0] if len(days) == 1 else f"{days[0]}-{days[-1]}") + ":" + spans.replace(" ", "+")
        for days, spans in groups
    )


def away_until(text: str, time_zone_name: str | None) -> datetime:
    """``2026-12-24`` (the start of that day in the rep's zone: back that morning) or an ISO
    instant with its offset."""
    value = text.strip()
    try:
        if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
            zone = ZoneInfo(time_zone_name) if time_zone_name else UTC
            return datetime.combine(date.fromisoformat(value), time(), zone).astimezone(UTC)
        instant = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidAvailability(f"{text!r} is not a date (YYYY-MM-DD)") from None
    if instant.tzinfo is None:
        raise InvalidAvailability(f"{text!r} has no UTC offset (or give a date, YYYY-MM-DD)")
    return instant.astimezone(UTC)


def duration_seconds(text: str) -> int:
    """``15m``, ``90s``, ``1h30m``: a positive whole number of seconds."""
    value = text.strip().lower()
    if not value or _DURATION.sub("", value).strip():
        raise InvalidAvailability(f"{text!r} is not a duration (e.g. 90s, 15m, 1h)")
    seconds = sum(int(n) * _UNIT_SECONDS[u] for n, u in _DURATION.findall(value))
    if seconds <= 0:
        raise InvalidAvailability("must be longer than 0 seconds")
    if seconds >= 2**31:
        raise InvalidAvailability(f"{text!r} is too long")
    return seconds


def format_duration(seconds: int | None) -> str:
    if seconds is None:
        return "-"
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _days(word: str) -> list[str]:
    first, _, last = word.partition("-")
    for day in (first, last or first):
        if day not in DAYS:
            raise InvalidAvailability(f"unknown day {day!r} (one of {', '.join(DAYS)})")
    start, end = DAYS.index(first), DAYS.index(last or first)
    if end < start:
        raise InvalidAvailability(f"{word!r}: the days must run forward (e.g. mon-fri)")
    return list(DAYS[start : end + 1])


def _span(word: str) -> tuple[str, str]:
    match = _SPAN.fullmatch(word)
    if match is None:
        raise InvalidAvailability(f"{word!r} is not HH:MM-HH:MM")
    start, end = (t.zfill(5) for t in match.groups())
    return start, end
