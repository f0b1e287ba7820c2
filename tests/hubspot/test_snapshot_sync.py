"""The snapshot refresh against the emulator and the real warehouse."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from sqlalchemy import text

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.platform.observability.events import LOGGER_NAME
from morpheus_pipelines.tenants.steps.hubspot_snapshot import sync_target_list
from morpheus_pipelines.tenants.store import (
    HubSpotTargetAccountRepository,
    HubSpotTargetSyncStateRepository,
)
from tests.support.hubspot import LIST_ID, TOKEN, RecordingSleep, snapshot_hash

accounts = HubSpotTargetAccountRepository()
sync_state = HubSpotTargetSyncStateRepository()


def _sync(make_client, sessions, run_id: str = "run00001", **client_options):
    with make_client(**client_options) as client:
        return sync_target_list(client, sessions, list_id=LIST_ID, run_id=run_id)


def test_full_sync_pages_batches_and_normalises(
    emulator: HubSpotEmulator, make_client, sessions, database_url: str
) -> None:
    outcome = _sync(make_client, sessions)
    assert outcome.succeeded, outcome.error
    assert outcome.state.status == "fresh"
    assert outcome.rows_upserted == 260 and outcome.rows_deleted == 0
    # 1 list + ceil(260/250) membership pages + ceil(260/100) batch reads, nothing more
    assert emulator.log.count("list") == 1
    assert emulator.log.count("memberships") == 2
    assert emulator.log.count("batch_read") == 3
    assert outcome.requests == 6 and outcome.retries == 0
    memberships = emulator.log.entries("memberships")
    assert all(e.query.get("limit") == "250" for e in memberships)

    with get_session(database_url) as session:
        row = accounts.get_by_id(session, "9007")
        state = sync_state.get_by_id(session, LIST_ID)
    assert row.portal_id == "P7"  # trimmed
    assert row.domain_root == "target7.com.au"
    assert row.website_domain_root == "target7.com.au"
    assert row.additional_domain_roots == ["target7.co.jp", "target7.co.kr"]
    assert row.sync_id == outcome.sync_id
    assert state.last_attempt_status == "success"
    assert state.last_successful_list_total == 260
    assert len(state.last_successful_snapshot_hash) == 64


def test_refresh_overwrites_with_null_and_deletes_companies_that_left(
    emulator: HubSpotEmulator, make_client, sessions, database_url: str
) -> None:
    assert _sync(make_client, sessions).succeeded
    emulator.clear_property("9001", "portal_id__c")
    emulator.clear_property("9001", "hs_additional_domains")
    emulator.remove_list_members(LIST_ID, ["9002", "9003"])
    outcome = _sync(make_client, sessions, run_id="run00002")
    assert outcome.succeeded, outcome.error
    assert outcome.rows_deleted == 2
    with get_session(database_url) as session:
        cleared = accounts.get_by_id(session, "9001")
        assert (cleared.portal_id, cleared.additional_domain_roots) == (None, None)
        assert accounts.get_by_id(session, "9002") is None
        assert accounts.count_rows(session) == 258
        # every row belongs to the one new sync id
        assert (
            session.execute(
                text("SELECT count(DISTINCT sync_id) FROM apac_hubspot_target_accounts")
            ).scalar_one()
            == 1
        )


def test_unchanged_list_gives_the_same_content_hash(make_client, sessions, database_url) -> None:
    _sync(make_client, sessions)
    with get_session(database_url) as session:
        first = sync_state.get_by_id(session, LIST_ID).last_successful_snapshot_hash
    _sync(make_client, sessions, run_id="run00002")
    with get_session(database_url) as session:
        assert sync_state.get_by_id(session, LIST_ID).last_successful_snapshot_hash == first


# Faults that exhaust the retries or must not be retried. Each must leave the previous
# snapshot exactly as it was.
PERMANENT_FAULTS: dict[str, Callable[[HubSpotEmulator], object]] = {
    "page_5xx": lambda emu: emu.fail_page(1, "503", times=None),
    "page_connection_reset": lambda emu: emu.fail_page(1, "reset", times=None),
    "page_truncated_json": lambda emu: emu.fail_page(0, "truncated_json", times=None),
    "page_short_body": lambda emu: emu.fail_page(1, "short_body", times=None),
    "batch_500": lambda emu: emu.fail("500", endpoint="batch_read", nth=1, times=None),
    "daily_429": lambda emu: emu.rate_limit("DAILY", endpoint="memberships", times=None),
    "unauthorized_401": lambda emu: emu.unauthorized(endpoint="list"),
    "duplicate_ids": lambda emu: emu.duplicate_members(page=1),
    "list_size_differs": lambda emu: emu.misreport_list_size(261),
    "processing_not_complete": lambda emu: emu.report_processing_status("PROCESSING"),
    "companies_missing_207": lambda emu: emu.drop_companies(["9100"]),
    "slow_beyond_read_timeout": lambda emu: emu.fail_page(1, "slow", delay=1.5, times=None),
}

EXPECTED_FAILED_RULE = {
    "duplicate_ids": "company_ids_unique",
    "list_size_differs": "membership_count_matches_list_size",
    "processing_not_complete": "list_processing_complete",
    "companies_missing_207": "every_member_has_company",
}


@pytest.mark.parametrize("fault", sorted(PERMANENT_FAULTS))
def test_failed_sync_keeps_previous_snapshot_and_records_attempt(
    fault: str, emulator: HubSpotEmulator, make_client, sessions, database_url: str
) -> None:
    first = _sync(make_client, sessions)
    assert first.succeeded
    before = snapshot_hash(database_url)
    # a change that a successful sync would apply, to prove nothing was applied
    emulator.remove_list_members(LIST_ID, ["9000"]) if fault not in (
        "list_size_differs",
        "duplicate_ids",
    ) else None
    PERMANENT_FAULTS[fault](emulator)

    outcome = _sync(make_client, sessions, run_id="run00002", read_timeout=0.5)
    assert not outcome.succeeded
    assert outcome.state.status == "stale"
    assert outcome.state.sync_id == first.sync_id
    assert outcome.state.age_seconds is not None and outcome.state.age_seconds >= 0
    assert snapshot_hash(database_url) == before
    with get_session(database_url) as session:
        state = sync_state.get_by_id(session, LIST_ID)
    assert state.last_attempt_status == "failed"
    assert state.last_successful_sync_id == first.sync_id
    assert state.last_error and TOKEN not in state.last_error
    if fault in EXPECTED_FAILED_RULE:
        failed = {r.rule for r in outcome.validation if not r.passed}
        assert EXPECTED_FAILED_RULE[fault] in failed


def test_failure_without_any_success_is_unavailable(
    emulator: HubSpotEmulator, make_client, sessions, database_url: str
) -> None:
    emulator.unauthorized(endpoint="list")
    outcome = _sync(make_client, sessions)
    assert not outcome.succeeded
    assert outcome.state.status == "unavailable"
    assert outcome.state.age_seconds is None
    assert "401" in outcome.error and TOKEN not in outcome.error
    with get_session(database_url) as session:
        assert accounts.count_rows(session) == 0
        assert sync_state.get_by_id(session, LIST_ID).last_attempt_status == "failed"


def test_database_failure_during_refresh_rolls_back_whole_refresh(
    emulator: HubSpotEmulator, make_client, sessions, database_url: str
) -> None:
    assert _sync(make_client, sessions).succeeded
    before = snapshot_hash(database_url)
    emulator.remove_list_members(LIST_ID, ["9000", "9001"])
    emulator.clear_property("9005", "domain")
    # The DELETE step of the refresh fails inside the database, after the upsert ran.
    with get_session(database_url) as session:
        session.execute(
            text("""
            CREATE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN RAISE EXCEPTION 'disk full (simulated)'; END $$;
            CREATE TRIGGER refuse_delete BEFORE DELETE ON apac_hubspot_target_accounts
            FOR EACH ROW EXECUTE FUNCTION refuse_delete();
        """)
        )
    outcome = _sync(make_client, sessions, run_id="run00002")
    assert not outcome.succeeded
    assert "database refresh failed" in outcome.error and "disk full" in outcome.error
    assert outcome.state.status == "stale"
    assert snapshot_hash(database_url) == before


@pytest.mark.parametrize(
    ("fault", "expected_wait"),
    [
        (lambda emu: emu.fail_page(1, "500", times=2), None),
        (lambda emu: emu.fail_page(1, "reset", times=2), None),
        (lambda emu: emu.fail_page(0, "truncated_json", times=2), None),
        (lambda emu: emu.fail_page(1, "short_body", times=2), None),
        (
            lambda emu: emu.rate_limit(
                "TEN_SECONDLY_ROLLING", retry_after=7, endpoint="list", times=2
            ),
            7.0,
        ),
        (
            lambda emu: emu.rate_limit(
                "SECONDLY", retry_after=None, rate_headers=True, endpoint="batch_read", times=2
            ),
            1.0,
        ),
        (
            lambda emu: emu.rate_limit(
                "TEN_SECONDLY_ROLLING",
                retry_after=None,
                rate_headers=False,
                endpoint="memberships",
                times=2,
            ),
            None,
        ),
    ],
    ids=[
        "5xx",
        "reset",
        "truncated",
        "short-body",
        "429-retry-after",
        "429-ratelimit-headers",
        "429-bare",
    ],
)
def test_transient_faults_are_retried_then_succeed(
    fault,
    expected_wait,
    emulator: HubSpotEmulator,
    make_client,
    sessions,
    sleeps: RecordingSleep,
) -> None:
    fault(emulator)
    outcome = _sync(make_client, sessions)
    assert outcome.succeeded, outcome.error
    assert outcome.retries == 2
    # the emulator saw exactly two failed attempts and then the successful one
    statuses = [e.status for e in emulator.log.entries() if e.fault]
    assert len(statuses) == 2
    assert len(sleeps.waits) == 2
    if expected_wait is not None:
        assert sleeps.waits == [expected_wait, expected_wait]
    else:
        assert all(0 <= w <= 30 for w in sleeps.waits)


@pytest.mark.parametrize(
    ("header", "lowest", "highest"),
    [
        # The HTTP-date form, 9 s ahead (whole seconds: the wait is 8-9 s when it is read).
        (lambda: format_datetime(datetime.now(UTC) + timedelta(seconds=9), usegmt=True), 7.5, 9),
        (lambda: "nan", 0, 30),  # not a time: the client's own back-off, never a crash
        (lambda: "-5", 0, 0),  # a date or number in the past: no wait
    ],
    ids=["http-date", "nan", "negative"],
)
def test_retry_after_is_read_in_both_its_forms(
    header, lowest, highest, emulator: HubSpotEmulator, make_client, sessions, sleeps
) -> None:
    emulator.rate_limit(retry_after=header(), rate_headers=False, endpoint="list", times=1)
    outcome = _sync(make_client, sessions)
    assert outcome.succeeded, outcome.error
    assert outcome.retries == 1
    assert all(lowest <= wait <= highest for wait in sleeps.waits), sleeps.waits
    if lowest > 0:
        assert len(sleeps.waits) == 1  # it did wait (no wait at all is not recorded)


def test_retries_are_bounded(emulator: HubSpotEmulator, make_client, sessions) -> None:
    emulator.fail_page(0, "503", times=None)
    outcome = _sync(make_client, sessions, retry_count=2)
    assert not outcome.succeeded
    assert emulator.log.count("memberships") == 3  # 1 try + 2 retries


def test_client_side_rate_budget_holds_requests(
    emulator: HubSpotEmulator, make_client, sessions, sleeps: RecordingSleep
) -> None:
    outcome = _sync(make_client, sessions, requests_per_10s=4)
    assert outcome.succeeded
    # 6 requests with a budget of 4 per 10 s: the client waited before the 5th.
    assert sleeps.waits and sleeps.waits[0] > 0


def test_sync_log_has_progress_and_no_token_or_email(
    emulator: HubSpotEmulator, make_client, sessions
) -> None:
    emulator.clear_property("9001", "name")
    emulator.set_company("9001", {"name": "Founder jane.doe@gmail.com Pty"})
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger(LOGGER_NAME)
    logger.addHandler(handler)
    try:
        emulator.fail_page(1, "500", times=1)
        assert _sync(make_client, sessions).succeeded
        emulator.unauthorized(endpoint="list")
        assert not _sync(make_client, sessions, run_id="run00002").succeeded
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    events = [line.split('"event":"')[1].split('"')[0] for line in lines]
    assert {
        "hubspot_sync_start",
        "hubspot_sync_page",
        "hubspot_sync_validated",
        "hubspot_retry",
        "hubspot_sync_succeeded",
        "hubspot_sync_failed",
    } <= set(events)
    text_out = stream.getvalue()
    assert TOKEN not in text_out
    assert "jane.doe@gmail.com" not in text_out
    assert all(line.startswith("{") and line.endswith("}") for line in lines)


# HubSpot answering 200 with a body of the wrong shape: a specific error, the previous
# snapshot untouched, never a crash of the run.
MALFORMED_PAYLOADS = {
    "list_without_list_object": ("list", {"id": "19544"}),
    "list_not_an_object": ("list", ["not", "an", "object"]),
    "memberships_results_not_a_list": ("memberships", {"results": "oops"}),
    "membership_not_an_object": ("memberships", {"results": ["9000", 17]}),
    "batch_results_missing": ("batch_read", {"status": "COMPLETE"}),
    "batch_company_wrong_types": (
        "batch_read",
        {"status": "COMPLETE", "results": [{"id": {"nested": 1}, "properties": "x"}]},
    ),
    "non_json_body": ("memberships", "<html>502 Bad Gateway</html>"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_PAYLOADS))
def test_malformed_hubspot_payloads_fail_the_sync_cleanly(
    case: str, emulator: HubSpotEmulator, make_client, sessions, database_url: str
) -> None:
    assert _sync(make_client, sessions).succeeded
    before = snapshot_hash(database_url)
    endpoint, body = MALFORMED_PAYLOADS[case]
    emulator.fail(200, endpoint=endpoint, body=body, times=None)
    outcome = _sync(make_client, sessions, run_id="run00002", retry_count=1)
    assert not outcome.succeeded
    assert outcome.error and TOKEN not in outcome.error
    assert outcome.state.status == "stale"
    assert snapshot_hash(database_url) == before
