"""When the HubSpot snapshot needs attention: one rule for the `snapshot_freshness` check and
the `hubspot_snapshot_health` sensor (docs/partitions.md)."""

from __future__ import annotations

# No hard maximum is imposed on routing (a stale snapshot is still used); past this age people
# are told. A day plus the time a late daily run may take.
DEFAULT_MAX_AGE_HOURS = 26.0
WARN = "WARN"
ERROR = "ERROR"


def too_old(age_seconds: float | None, max_age_hours: float) -> bool:
    """Older than ``max_age_hours`` (an unknown age is not "too old": there is no snapshot)."""
    return age_seconds is not None and age_seconds > max_age_hours * 3600


def freshness(
    status: str, age_seconds: float | None, max_age_hours: float = DEFAULT_MAX_AGE_HOURS
) -> tuple[bool, str, str]:
    """(passed, severity, summary): pass when younger than the limit; WARN when older; ERROR
    when no snapshot ever succeeded."""
    if status == "unavailable" or age_seconds is None:
        return False, ERROR, "no successful snapshot exists"
    if too_old(age_seconds, max_age_hours):
        hours = age_seconds / 3600
        return False, WARN, f"last successful sync is {hours:.1f} h old (limit {max_age_hours} h)"
    return True, WARN, "snapshot is fresh enough"


def problem(
    status: str,
    age_seconds: float | None,
    last_attempt_status: str | None,
    max_age_hours: float = DEFAULT_MAX_AGE_HOURS,
) -> str | None:
    """Why the snapshot needs attention, or None when it is healthy (what the sensor alerts
    on; a failed attempt counts even while the last good snapshot is young)."""
    if last_attempt_status == "failed":
        return f"the last HubSpot sync attempt failed (snapshot {status})"
    if status == "unavailable":
        return "no successful HubSpot snapshot exists" if last_attempt_status else None
    if too_old(age_seconds, max_age_hours):
        return f"the HubSpot snapshot is {age_seconds / 3600:.1f} h old"
    return None
