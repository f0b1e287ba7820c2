"""A snapshot refresh killed with SIGKILL mid-pagination or inside the refresh transaction
leaves the previous snapshot exactly as it was, and the next run converges."""

from __future__ import annotations

import signal
import subprocess

import psycopg

from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.devtools.emulators import HubSpotEmulator, build_hubspot_data
from tests.support.hubspot import TOKEN, snapshot_hash
from tests.support.pipeline import Pipeline
from tests.support.reliability import companies


def _kill(child: subprocess.Popen) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL, "the refresh finished before it was killed"


def _first_snapshot(database_url: str, tmp_path) -> tuple[HubSpotEmulator, Pipeline, str]:
    emulator = HubSpotEmulator(build_hubspot_data(companies(600), token=TOKEN)).start()
    pipeline = Pipeline(
        database_url=database_url,
        hubspot_url=emulator.base_url,
        hubspot_token=TOKEN,
        home=str(tmp_path),
    )
    assert pipeline.snapshot().success
    emulator.remove_list_members("19544", ["7001", "7002"])  # what the next sync would apply
    return emulator, pipeline, snapshot_hash(database_url)


def test_sigkill_mid_pagination(database_url: str, tmp_path) -> None:
    emulator, pipeline, before = _first_snapshot(database_url, tmp_path)
    try:
        emulator.slow(60, endpoint="memberships", page=1, times=1)
        child = pipeline.spawn(["hubspot_target_accounts"])
        assert emulator.log.wait_until(
            lambda records: any(
                e.endpoint == "memberships" and e.page == 1 and e.outcome == "pending"
                for e in records
            ),
            timeout=120,
        )
        _kill(child)
        assert snapshot_hash(database_url) == before
        assert pipeline.query("SELECT last_attempt_status FROM apac_hubspot_target_sync_state") == [
            ("success",)
        ]
        assert pipeline.snapshot().success  # the next run converges
        assert pipeline.query("SELECT count(*) FROM apac_hubspot_target_accounts") == [(598,)]
    finally:
        emulator.stop()


def test_sigkill_inside_the_refresh_transaction(database_url: str, tmp_path) -> None:
    emulator, pipeline, before = _first_snapshot(database_url, tmp_path)
    blocker = psycopg.connect(libpq_url(database_url))
    try:
        # Hold the sync-state row: the refresh transaction upserts the companies, deletes the
        # old ones, then waits here on its last statement — and is killed there.
        blocker.execute("SELECT * FROM apac_hubspot_target_sync_state FOR UPDATE")
        child = pipeline.spawn(["hubspot_target_accounts"])
        with psycopg.connect(libpq_url(database_url), autocommit=True) as watcher:
            waiting = None
            while waiting is None and child.poll() is None:
                waiting = watcher.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock' AND query ILIKE '%sync_state%'"
                ).fetchone()
        assert waiting is not None
        _kill(child)
        blocker.rollback()
        # The killed backend's transaction is rolled back by PostgreSQL.
        with psycopg.connect(libpq_url(database_url), autocommit=True) as watcher:
            while watcher.execute(
                "SELECT 1 FROM pg_stat_activity WHERE pid = %s", waiting
            ).fetchone():
                pass
        assert snapshot_hash(database_url) == before
        assert pipeline.snapshot().success
        assert pipeline.query("SELECT count(*) FROM apac_hubspot_target_accounts") == [(598,)]
    finally:
        blocker.close()
        emulator.stop()
