"""Text in the reports: untrusted tenant text made safe, and values in words (docs/reports.md,
"Safety of what is shown").

Tenant text only ever lands inside table cells: names are masked for emails and shortened
(:func:`display_name`), then escaped for the format (:func:`md_escape` for Markdown,
``html.escape`` for HTML, :func:`csv_cell` against spreadsheet formulas).
"""

from __future__ import annotations

from datetime import UTC
from decimal import Decimal

import pandas as pd

from morpheus_pipelines.platform.observability.redaction import mask_emails
from morpheus_pipelines.tenants.reports.figures import SnapshotHealth

MAX_NAME_LENGTH = 120
MAX_NOTE_LINE_LENGTH = 300

REASON_LABELS = {
    "hubspot_target_account": "HubSpot target account",
    "score": "score",
    "unknown": "reason not recorded",
}


# -- escaping ---------------------------------------------------------------------------------


def display_name(value: object, *, limit: int = MAX_NAME_LENGTH) -> str:
    """A tenant name fit for a report: emails masked, control characters removed, shortened."""
    text = "".join(ch if ch.isprintable() else " " for ch in mask_emails(value)).strip()
    if not text:
        return "(no name)"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def display_line(value: object, *, limit: int = MAX_NOTE_LINE_LENGTH) -> str:
    """A line of an operations note fit for a report: emails masked, control characters (line
    breaks among them) removed, shortened; every format still escapes it."""
    text = "".join(ch if ch.isprintable() else " " for ch in mask_emails(value)).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_score(value: object) -> str:
    """``78.50`` → ``"78.5"``, ``80.00`` → ``"80"``, missing → ``"n/a"``."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "n/a"
    number = Decimal(str(value)).quantize(Decimal("0.01"))
    text = format(number, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_count(value: float | int) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.2f}"


def table_cell(value: object) -> str:
    """A Weekly Metrics table value as text: empty when missing, ``yes``/``no``, counts."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float | int):
        return format_count(value)
    return str(value)


# -- values in words --------------------------------------------------------------------------


def why(reason: str | None, match_method: str | None, company_id: str | None, score: object) -> str:
    """Why a tenant has its priority, in words for Sales managers."""
    if reason == "hubspot_target_account":
        evidence = []
        if match_method:
            evidence.append(f"match: {match_method}")
        if company_id:
            evidence.append(f"company {company_id}")
        suffix = f" ({', '.join(evidence)})" if evidence else ""
        return f"HubSpot target account{suffix}"
    if reason == "score":
        return f"score {format_score(score)}"
    return REASON_LABELS["unknown"]


def change_label(change: str, previous: str | None, priority: str) -> str:
    """What happened to a listed tenant, in words (``change`` as stored)."""
    if change == "entered":
        return f"entered Active from Sales-owned as {priority}"
    if change == "new" or not previous:
        return "new"
    if change == "downgraded":
        return f"{previous} → {priority} (left P0/P1)"
    return f"{previous} → {priority}"


def snapshot_line(snapshot: SnapshotHealth) -> str:
    """One line on the HubSpot target snapshot that routing used: ``fresh``, ``stale`` or
    ``unavailable`` (docs/pipeline.md, ``hubspot_target_accounts``)."""
    if snapshot.status == "unavailable" or snapshot.synced_at is None:
        return (
            "HubSpot target snapshot: UNAVAILABLE - no successful sync yet, so no tenant "
            "could be matched to a HubSpot target account."
        )
    synced = snapshot.synced_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    age = "" if snapshot.age_seconds is None else f", {snapshot.age_seconds / 3600:.1f} h old"
    if snapshot.status == "stale":
        return (
            f"HubSpot target snapshot: STALE - the last sync attempt failed; routing used the "
            f"snapshot of {synced}{age} (sync {snapshot.sync_id})."
        )
    return (
        f"HubSpot target snapshot: fresh - last successful sync {synced}{age} "
        f"(sync {snapshot.sync_id})."
    )
