"""The Daily Summary's Operations section: the notes, the HubSpot outbox's note, their renderings
and how the asset gathers them (docs/reports.md, "Operations"). No database: the renderers and
the note are pure, and gathering opens no session when there is nothing to gather."""

from __future__ import annotations

import csv
import io
import uuid
from datetime import UTC, datetime, timedelta, timezone

import dagster as dg
import pytest

from morpheus_pipelines.assets.reports.daily import operations_notes
from morpheus_pipelines.crm.reports.hubspot_outbox import outbox_note
from morpheus_pipelines.platform.report_notes import (
    OperationsNote,
    most_urgent_first,
    severity_counts,
)
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.tenants.reports.csv import NOTES_CSV_HEADER, render_daily_notes_csv
from morpheus_pipelines.tenants.reports.daily import ListedTenants, build_daily_summary
from morpheus_pipelines.tenants.reports.figures import ActiveTenantFigures, DailySummary
from morpheus_pipelines.tenants.reports.html import render_daily_html
from morpheus_pipelines.tenants.reports.markdown import render_daily_markdown
from morpheus_pipelines.tenants.steps.hubspot_snapshot import SnapshotState

NOW = datetime(2026, 11, 18, 9, 0, tzinfo=UTC)
HOSTILE = "<script>alert(1)</script>"


def summary(*notes: OperationsNote) -> DailySummary:
    figures = ActiveTenantFigures(
        priority_counts={"P1": 1},
        reason_counts={},
        match_method_counts={},
        entered_counts={},
        transitions={},
    )
    return build_daily_summary(
        "2026-11-18",
        figures,
        ListedTenants(),
        SnapshotState("unavailable", None, None, None),
        generated_at=NOW,
        notes=notes,
    )


def csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


# -- the note ---------------------------------------------------------------------------------


def test_a_note_has_a_known_severity_and_a_title() -> None:
    with pytest.raises(ValueError, match="severity is one of error, warning, ok, got 'fatal'"):
        OperationsNote("HubSpot outbox", "fatal", ())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a title"):
        OperationsNote("  ", "ok", ())
    note = OperationsNote("HubSpot outbox", "ok", ["a", "b"])  # type: ignore[arg-type]
    assert note.lines == ("a", "b") and hash(note)  # kept frozen: a tuple


def test_notes_go_most_urgent_first_and_are_counted() -> None:
    ok, warning, error = (OperationsNote(s, s, ()) for s in ("ok", "warning", "error"))
    second_ok = OperationsNote("second", "ok", ())
    assert most_urgent_first([ok, warning, second_ok, error]) == [error, warning, ok, second_ok]
    assert severity_counts([ok, second_ok, error]) == {"error": 1, "warning": 0, "ok": 2}


# -- the HubSpot outbox's note ----------------------------------------------------------------


def test_dead_rows_are_an_error_with_the_top_reasons_and_the_retry_command() -> None:
    reasons = {
        "PROPERTY_DOESNT_EXIST: morpheus_lead_key": 5,
        "Contact jane.doe@acme.example already exists": 3,
        "INVALID_OWNER_ID": 2,
        "rate limited": 1,
        "": 1,
    }
    note = outbox_note(4, 12, 30, NOW - timedelta(minutes=5), reasons, NOW)
    assert note.severity == "error" and note.title == "HubSpot outbox"
    assert note.lines == (
        "12 updates could not be written to HubSpot and will not be tried again on their own.",
        "5 × PROPERTY_DOESNT_EXIST: morpheus_lead_key",
        "3 × Contact j***@acme.example already exists",  # a reason may quote an address
        "2 × INVALID_OWNER_ID",
        "2 more for 2 other reasons.",
        "Once the cause is fixed, run `morpheus outbox retry` to send them again.",
        "30 written to HubSpot in the last day.",
    )
    one = outbox_note(0, 1, 0, None, {"x" * 500: 1}, NOW)
    assert one.lines[0].startswith("1 update could not be written")
    assert one.lines[1] == "1 × " + "x" * 199 + "…"


def test_dead_rows_and_late_pending_rows_say_both() -> None:
    note = outbox_note(7, 1, 0, NOW - timedelta(hours=3), {"boom": 1}, NOW)
    assert note.severity == "error"
    assert (
        "7 updates waiting to be written to HubSpot, the oldest since 2026-11-18 06:00 UTC "
        "(3.0 h)." in note.lines
    )


def test_pending_rows_older_than_an_hour_are_a_warning() -> None:
    oldest = datetime(2026, 11, 18, 14, 30, tzinfo=timezone(timedelta(hours=8)))  # 06:30 UTC
    note = outbox_note(40, 0, 12, oldest, {}, NOW)
    assert note.severity == "warning"
    assert note.lines[0] == (
        "40 updates waiting to be written to HubSpot, the oldest since 2026-11-18 06:30 UTC "
        "(2.5 h)."
    )
    assert note.lines[-1] == "12 written to HubSpot in the last day."


def test_otherwise_the_note_is_ok_with_what_was_written() -> None:
    quiet = outbox_note(0, 0, 1_234, None, {}, NOW)
    assert quiet == OperationsNote(
        "HubSpot outbox", "ok", ("1,234 written to HubSpot in the last day.",)
    )
    # waiting exactly an hour is still on time: the back-off between tries is at most an hour
    busy = outbox_note(3, 0, 5, NOW - timedelta(hours=1), {}, NOW)
    assert busy.severity == "ok"
    assert busy.lines == (
        "5 written to HubSpot in the last day.",
        "3 updates waiting, none for more than an hour.",
    )
    assert outbox_note(3, 0, 5, NOW - timedelta(hours=1, seconds=1), {}, NOW).severity == (
        "warning"
    )


def test_the_outbox_note_wants_timezone_aware_times() -> None:
    with pytest.raises(ValueError, match="now must be timezone-aware"):
        outbox_note(0, 0, 0, None, {}, datetime(2026, 11, 18, 9, 0))
    with pytest.raises(ValueError, match="oldest_pending_at must be timezone-aware"):
        outbox_note(1, 0, 0, datetime(2026, 11, 18, 7, 0), {}, NOW)


# -- the renderings ---------------------------------------------------------------------------

ERROR = OperationsNote(
    "HubSpot outbox",
    "error",
    ("2 updates could not be written to HubSpot.", f"2 × {HOSTILE} | *bold*"),
)
OK = OperationsNote("Other check", "ok", ("All written.",))


def test_markdown_shows_the_notes_most_urgent_first_with_their_severity() -> None:
    markdown = render_daily_markdown(summary(OK, ERROR))
    section = markdown[markdown.index("#### Operations") : markdown.index("| priority |")]
    assert section.index("**ERROR · HubSpot outbox**") < section.index("**OK · Other check**")
    assert "- 2 updates could not be written to HubSpot." in section
    # escaped: no tag, and a pipe or a star cannot change the Markdown
    assert "- 2 × &lt;script&gt;alert(1)&lt;/script&gt; \\| \\*bold\\*" in section
    assert "<script" not in markdown


def test_html_shows_the_notes_with_their_severity_and_escapes_their_text() -> None:
    page = render_daily_html(summary(OK, ERROR))
    assert "<h2>Operations</h2>" in page
    assert '<div class="note note-error"><p><strong>ERROR · HubSpot outbox</strong></p>' in page
    assert '<div class="note note-ok">' in page
    assert page.index('class="note note-error"') < page.index('class="note note-ok"')
    assert "<script" not in page
    assert "<li>2 × &lt;script&gt;alert(1)&lt;/script&gt; | *bold*</li>" in page
    # before the tenants: what a person must act on comes first
    assert page.index("<h2>Operations</h2>") < page.index("<h2>Active tenants by priority</h2>")


def test_notes_csv_has_a_row_per_line_with_the_severity() -> None:
    formula = OperationsNote("=HYPERLINK(1)", "warning", ())
    rows = csv_rows(render_daily_notes_csv(summary(OK, ERROR, formula)))
    assert rows == [
        list(NOTES_CSV_HEADER),
        ["2026-11-18", "error", "HubSpot outbox", "2 updates could not be written to HubSpot."],
        ["2026-11-18", "error", "HubSpot outbox", f"2 × {HOSTILE} | *bold*"],  # data in CSV
        ["2026-11-18", "warning", "'=HYPERLINK(1)", ""],  # no lines: one row; not a formula
        ["2026-11-18", "ok", "Other check", "All written."],
    ]


def test_note_text_is_masked_and_kept_to_one_line_everywhere() -> None:
    note = OperationsNote("HubSpot outbox", "error", ("Contact jane.doe@acme.example\nexists",))
    rendered = summary(note)
    markdown, page = render_daily_markdown(rendered), render_daily_html(rendered)
    notes_csv = render_daily_notes_csv(rendered)
    for text in (markdown, page, notes_csv):
        assert "jane.doe" not in text
    assert "- Contact j\\*\\*\\*@acme.example exists" in markdown
    assert "<li>Contact j***@acme.example exists</li>" in page
    assert csv_rows(notes_csv)[1][3] == "Contact j***@acme.example exists"


def test_without_notes_there_is_no_section_and_notes_csv_is_only_its_header() -> None:
    """No notes means nothing was checked (no CRM configured): the report does not say that
    all is well."""
    empty = summary()
    assert "Operations" not in render_daily_markdown(empty)
    page = render_daily_html(empty)
    assert "Operations" not in page and 'class="note' not in page
    assert csv_rows(render_daily_notes_csv(empty)) == [list(NOTES_CSV_HEADER)]
    assert empty.counts()["operations_notes"] == {"error": 0, "warning": 0, "ok": 0}
    assert summary(OK, ERROR).counts()["operations_notes"] == {"error": 1, "warning": 0, "ok": 1}


# -- gathering the notes in the asset ---------------------------------------------------------

SUBSCRIPTION = "5d7c0a8e-3f7b-4c55-9a51-0e2c8f7b6a10"
WAREHOUSE = WarehouseResource(database_url="postgresql+psycopg://nobody@127.0.0.1:1/none")


def test_without_a_subscription_no_note_is_gathered() -> None:
    calls = []

    def source(session_factory, subscription_id, now):
        calls.append(subscription_id)
        return OK

    assert operations_notes(WAREHOUSE, OwnershipResource(), [source]) == []
    assert calls == []  # the CRM side is not in use: not even asked


def test_with_a_subscription_each_source_gives_its_note() -> None:
    calls = []

    def source(session_factory, subscription_id, now):
        calls.append((session_factory, subscription_id, now))
        return ERROR

    ownership = OwnershipResource(subscription_id=SUBSCRIPTION)
    assert operations_notes(WAREHOUSE, ownership, [source], now=NOW) == [ERROR]
    assert calls == [(WAREHOUSE.session, uuid.UUID(SUBSCRIPTION), NOW)]
    # no source wired: nothing to gather, the subscription is not even read
    assert operations_notes(WAREHOUSE, OwnershipResource(subscription_id="not-a-uuid"), []) == []


def test_a_subscription_that_is_not_a_uuid_fails_naming_the_setting() -> None:
    ownership = OwnershipResource(subscription_id="not-a-uuid")
    with pytest.raises(dg.Failure, match="MORPHEUS_SUBSCRIPTION_ID must be a UUID"):
        operations_notes(WAREHOUSE, ownership, [lambda *_: OK])
