"""Waiting, without sleeps, until a statement of the test's database waits on a lock."""

from __future__ import annotations

import threading

from sqlalchemy import text

from morpheus_pipelines.db.session import get_session

WAITING = text(
    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
    "AND datname = current_database()"
)


def wait_until_blocked(database_url: str, waiter: threading.Thread) -> None:
    """Return once a backend of ``database_url``'s database waits on a lock; fail if
    ``waiter``, the thread expected to wait, ends first."""
    with get_session(database_url) as watcher:
        while not watcher.execute(WAITING).scalar_one():
            assert waiter.is_alive(), "the statement finished without waiting for the lock"
            watcher.rollback()  # a new snapshot of the activity for the next poll
