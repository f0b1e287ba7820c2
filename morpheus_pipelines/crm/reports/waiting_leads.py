"""Leads waiting for an owner as a note for a report's Operations section (docs/reports.md,
"Operations"): how many and how long the oldest has waited, or that every open lead has an
owner.

Pure: the caller counts the waiting leads and passes the figures and the time.
"""

from __future__ import annotations

from datetime import datetime

from morpheus_pipelines.crm.rules.waiting_leads import waiting_age_minutes
from morpheus_pipelines.platform.report_notes import OperationsNote

TITLE = "Leads waiting for an owner"


def waiting_note(
    waiting: int, oldest_created_at: datetime | None, anyone_assignable: bool, now: datetime
) -> OperationsNote:
    """A warning while leads wait (with the count and the oldest's age), else ``ok``."""
    if not waiting:
        return OperationsNote(TITLE, "ok", ("Every open lead has an owner.",))
    age = waiting_age_minutes(oldest_created_at, now) or 0
    hours, minutes = divmod(age, 60)
    lines = [
        f"{waiting} open lead(s) have no owner; the oldest has waited {hours} h {minutes} min.",
    ]
    if anyone_assignable:
        lines.append("A rep is assignable now: they get an owner within a minute.")
    else:
        lines.append(
            "Nobody is assignable: activate a rep, or set a fallback rep with "
            "`morpheus subscription set --fallback-rep`."
        )
    return OperationsNote(TITLE, "warning", tuple(lines))
