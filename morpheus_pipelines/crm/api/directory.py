"""The in-process view of who may receive leads (docs/leads.md, "The owner cache").

Pools, members and rules change rarely and are read on every lead, so they are held
in memory. A listener thread waits on ``LISTEN morpheus_routing`` (triggers on the routing
tables and on the ``sales_reps`` columns that matter fire it) and marks the view stale; a
short TTL covers a lost notification or a listener that is reconnecting. The view only
proposes candidates: the statement that charges the owner re-checks that the rep is active,
so a deactivated rep stops receiving leads at once, whatever the cache holds, and decides
whether the rep is available now (working hours, away, cap), which is never cached.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable

import psycopg
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.repositories.leads import Candidate
from morpheus_pipelines.crm.repositories.routing_directory import (
    RoutingDirectoryRepository,
    SubscriptionRouting,
)
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.observability.events import log_event

CHANNEL = "morpheus_routing"
DEFAULT_TTL_SECONDS = 5.0
# How long before its TTL the listener's thread loads the view again.
REFRESH_AHEAD_SECONDS = 1.0

_repository = RoutingDirectoryRepository()


class OwnerDirectory:
    """Candidates per subscription and pool, from the cache."""

    def __init__(
        self,
        session_factory: SessionFactory,
        *,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions = session_factory
        self._ttl = ttl_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._view: dict[uuid.UUID, SubscriptionRouting] = {}
        self._loaded_at: float | None = None
        # Each invalidation is a new generation; the view answers only while it was loaded
        # in the current one. So the view stays due while a load runs (a lead waits for it,
        # ``held`` answers None), a notification during a load makes it due again, and a
        # load that fails leaves it due.
        self._generation = 0
        self._loaded_generation = -1
        self.refreshes = 0

    def invalidate(self) -> None:
        self._generation += 1

    def routing(self, session: Session, subscription_id: uuid.UUID) -> SubscriptionRouting:
        """The subscription's routing (empty when it has no rep at all)."""
        now = self._clock()
        if self._due(now):
            self._load(session, now)
        return self._view.get(subscription_id) or SubscriptionRouting()

    def refresh_ahead(self, ahead_seconds: float = REFRESH_AHEAD_SECONDS) -> bool:
        """Load the view on a session of its own when it is due, or will be within
        ``ahead_seconds``: the routing listener's thread calls this between notifications, so
        a lead seldom finds the view due and waits for a load. Whether it loaded."""
        now = self._clock()
        if not self._due(now + ahead_seconds):
            return False
        with self._sessions() as session:
            return self._load(session, now, ahead_seconds)

    def _load(self, session: Session, now: float, ahead_seconds: float = 0.0) -> bool:
        with self._lock:
            if not self._due(now + ahead_seconds):
                return False  # another thread loaded it meanwhile
            generation = self._generation
            self._view = _repository.load(session)
            self._loaded_at = now
            self._loaded_generation = generation
            self.refreshes += 1
            return True

    def candidates(
        self, session: Session, subscription_id: uuid.UUID, pool_id: int | None
    ) -> list[Candidate]:
        return self.routing(session, subscription_id).pools.get(pool_id, [])

    def held(self, subscription_id: uuid.UUID) -> SubscriptionRouting | None:
        """The subscription's routing as the cache holds it now, without a load: ``None``
        when the view is stale or expired (the next :meth:`routing` loads it)."""
        if self._due(self._clock()):
            return None
        return self._view.get(subscription_id) or SubscriptionRouting()

    def _due(self, now: float) -> bool:
        """Whether the view must be loaded before it answers: invalidated since its load (or
        never loaded), or older than the TTL."""
        return (
            self._loaded_generation != self._generation
            or self._loaded_at is None
            or now - self._loaded_at > self._ttl
        )


class LiveDirectory(OwnerDirectory):
    """The pool's members by a query on every lead, the rest from the cache: the benchmark's
    baseline (``morpheus serve --no-owner-cache``)."""

    def candidates(
        self, session: Session, subscription_id: uuid.UUID, pool_id: int | None
    ) -> list[Candidate]:
        return _repository.live_candidates(session, subscription_id, pool_id)

    def held(self, subscription_id: uuid.UUID) -> SubscriptionRouting | None:
        return None  # the members are a query on every lead


class RoutingListener:
    """``LISTEN morpheus_routing`` on its own connection; invalidates the directory on every
    notification, reconnecting (and invalidating) after a lost connection. Between
    notifications (every half second at most) it loads the directory when a notification or
    the TTL has made it due, or is about to: off the leads' path."""

    def __init__(self, libpq_url: str, directory: OwnerDirectory) -> None:
        self._url = libpq_url
        self._directory = directory
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="routing-listener", daemon=True)
        self.notifications = 0

    def start(self) -> RoutingListener:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _refresh(self) -> None:
        """A failed load leaves the view due: the next lead loads it, as without the
        listener."""
        try:
            self._directory.refresh_ahead()
        except SQLAlchemyError as exc:
            log_event("owner_cache_refresh_failed", level=logging.WARNING, error=type(exc).__name__)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True, connect_timeout=5) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._directory.invalidate()  # anything missed while disconnected
                    while not self._stop.is_set():
                        for _ in conn.notifies(timeout=0.5):
                            self.notifications += 1
                            self._directory.invalidate()
                        self._refresh()
            except psycopg.Error as exc:
                log_event(
                    "routing_listener_reconnecting", level=logging.WARNING, error=type(exc).__name__
                )
                self._directory.invalidate()
                self._stop.wait(1.0)
