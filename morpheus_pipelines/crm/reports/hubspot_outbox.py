"""The HubSpot outbox as a note for a report's Operations section (docs/reports.md,
"Operations"): the updates Morpheus could not write to HubSpot, which wait for a person, and
updates that have waited too long; otherwise how many were written.

Pure: the caller reads the outbox's backlog and passes its figures and the time.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from morpheus_pipelines.platform.observability.redaction import mask_emails
from morpheus_pipelines.platform.report_notes import OperationsNote

TITLE = "HubSpot outbox"
RETRY_COMMAND = "morpheus outbox retry"
# Pending this long means the writes are not getting through, not that they are queued.
LATE_AFTER = timedelta(hours=1)
TOP_REASONS = 3
MAX_REASON_LENGTH = 200
NO_REASON = "(no reason recorded)"


def outbox_note(
    pending: int,
    dead: int,
    done_since: int,
    oldest_pending_at: datetime | None,
    dead_reasons: Mapping[str, int],
    now: datetime,
) -> OperationsNote:
    """The outbox's note: ``error`` when rows are dead (the top reasons, and the command that
    sends them again), ``warning`` when the oldest pending row has waited more than an hour,
    else ``ok`` with how many were written in the last day (``done_since``).

    ``oldest_pending_at`` and ``now`` are timezone-aware."""
    for name, moment in (("now", now), ("oldest_pending_at", oldest_pending_at)):
        if moment is not None and moment.utcoffset() is None:
            raise ValueError(f"{name} must be timezone-aware, got {moment.isoformat()}")
    waited = None if oldest_pending_at is None or not pending else now - oldest_pending_at
    late = waited is not None and waited > LATE_AFTER
    written = f"{done_since:,} written to HubSpot in the last day."
    if dead:
        lines = [
            f"{_updates(dead)} could not be written to HubSpot and will not be tried again "
            "on their own.",
            *_reason_lines(dead_reasons),
            f"Once the cause is fixed, run `{RETRY_COMMAND}` to send them again.",
        ]
        if late:
            lines.append(_late_line(pending, oldest_pending_at, waited))
        return OperationsNote(TITLE, "error", (*lines, written))
    if late:
        return OperationsNote(
            TITLE,
            "warning",
            (
                _late_line(pending, oldest_pending_at, waited),
                "HubSpot may be refusing or throttling the writes: check the outbox's runs.",
                written,
            ),
        )
    lines = [written]
    if pending:
        lines.append(f"{_updates(pending)} waiting, none for more than an hour.")
    return OperationsNote(TITLE, "ok", tuple(lines))


def _updates(count: int) -> str:
    return f"{count:,} update" if count == 1 else f"{count:,} updates"


def _late_line(pending: int, oldest: datetime, waited: timedelta) -> str:
    hours = waited.total_seconds() / 3600
    return (
        f"{_updates(pending)} waiting to be written to HubSpot, the oldest since "
        f"{oldest.astimezone(UTC):%Y-%m-%d %H:%M} UTC ({hours:.1f} h)."
    )


def _reason_lines(dead_reasons: Mapping[str, int]) -> list[str]:
    """The most frequent reasons, one line each (a HubSpot error may quote a contact's
    address: masked), and how many rows the others cover."""
    ranked = sorted(
        ((int(count), _reason(reason)) for reason, count in dead_reasons.items() if count),
        key=lambda pair: (-pair[0], pair[1]),
    )
    lines = [f"{count:,} × {reason}" for count, reason in ranked[:TOP_REASONS]]
    rest = ranked[TOP_REASONS:]
    if rest:
        others = sum(count for count, _ in rest)
        kinds = "reason" if len(rest) == 1 else "reasons"
        lines.append(f"{others:,} more for {len(rest):,} other {kinds}.")
    return lines


def _reason(reason: str | None) -> str:
    text = " ".join(mask_emails(reason or "").split())
    if not text:
        return NO_REASON
    return text if len(text) <= MAX_REASON_LENGTH else text[: MAX_REASON_LENGTH - 1] + "…"
