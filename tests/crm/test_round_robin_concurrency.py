"""Proof under concurrency of the round-robin helpers (docs/data-layer.md, "Round-robin
helpers", "Concurrency safety").

* Eight processes reserve batches of 1–5 reps for one subscription for three seconds, each
  reservation its own transaction: every cursor slot 0..N-1 is handed out exactly once, each
  slot maps to ``reps[slot % len(reps)]``, and every rep's share is within one of N/len(reps).
* The same workload without the advisory lock hands slots out twice — the test above can fail.
* Two subscriptions never wait for each other: while one transaction holds subscription A's
  lock, a reservation for B completes well inside its ``lock_timeout`` and one for A fails
  with ``lock_timeout``.

The children are real processes with their own connections, started by a ``forkserver``:
a fresh interpreter (spawn semantics: nothing inherited from the test process — no pooled
connection, no thread) that has imported the worker module once, so each child is a cheap
fork of it. Spawning eight interpreters that each import SQLAlchemy and pandas (pulled in by
``morpheus_pipelines.tenants.store``) cost ~4.5 s of CPU apiece, which on two shared cores
would dwarf the three seconds of workload. All eight start at a barrier; the test process is
the ninth party.
"""

from __future__ import annotations

import json
import multiprocessing
import time
import uuid
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from multiprocessing.context import BaseContext
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from morpheus_pipelines.crm.repositories import sales_rep_round_robin as rr
from morpheus_pipelines.crm.repositories.configs import ConfigsRepository
from morpheus_pipelines.crm.repositories.sales_rep_round_robin import (
    dialer_rr_config_key,
    reserve_sales_rep_round_robin_batch,
)
from morpheus_pipelines.db.session import get_session
from tests.support.crm_round_robin import add_rep, add_subscription, reserve_until_deadline

pytestmark = pytest.mark.slow

WORKERS = 8
DURATION = 3.0
ELIGIBLE_REPS = 5
configs = ConfigsRepository()


@pytest.fixture(scope="module")
def processes() -> BaseContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tests.support.crm_round_robin"])
    return context


@dataclass
class Run:
    reservations: int = 0
    assignments: int = 0
    slots: Counter[int] = field(default_factory=Counter)
    per_rep: Counter[int] = field(default_factory=Counter)
    wrong_rep: int = 0  # a slot answered with a rep other than reps[slot % len(reps)]
    released_after: float = 0.0  # seconds from starting the processes to the barrier
    elapsed: float = 0.0  # seconds from the barrier until the last process exited

    @property
    def duplicates(self) -> int:
        """Assignments beyond the first of their slot."""
        return sum(n - 1 for n in self.slots.values() if n > 1)

    def summary(self, cursor: int) -> str:
        return (
            f"{self.reservations} reservations ({self.reservations / DURATION:.0f}/s) by "
            f"{WORKERS} processes, {self.assignments} assignments, {len(self.slots)} distinct "
            f"slots, {self.duplicates} duplicated, final cursor {cursor}, per rep "
            f"{sorted(self.per_rep.values())}, processes started together "
            f"{self.released_after:.1f}s after launch, ran {self.elapsed:.1f}s"
        )


def _seed(url: str) -> tuple[uuid.UUID, list[int]]:
    with get_session(url) as session:
        sub = add_subscription(session)
        ids = []
        for i in range(ELIGIBLE_REPS):
            ids.append(add_rep(session, sub, f"rep{i}@acme.test", hubspot_owner_id=str(i)).id)
            add_rep(session, sub, f"off{i}@acme.test", hubspot_owner_id=f"x{i}", is_active=False)
        add_rep(session, sub, "no-owner@acme.test")
    return sub, ids


def _workload(
    processes: BaseContext, url: str, sub: uuid.UUID, rep_ids: list[int], tmp: Path, *, lock: bool
) -> Run:
    start = processes.Barrier(WORKERS + 1)
    outs = [tmp / f"{'locked' if lock else 'unlocked'}-{i}.json" for i in range(WORKERS)]
    children = [
        processes.Process(
            target=reserve_until_deadline,
            args=(url, str(sub)),
            kwargs={
                "lock": lock,
                "start": start,
                "duration": DURATION,
                "seed": i,
                "out": str(out),
            },
            daemon=True,
        )
        for i, out in enumerate(outs)
    ]
    run = Run()
    launched = time.monotonic()
    try:
        for child in children:
            child.start()
        start.wait(timeout=120)
        released = time.monotonic()
        for child in children:
            child.join(timeout=DURATION + 60)
        run.elapsed = time.monotonic() - released
        run.released_after = released - launched
    finally:
        for child in children:
            if child.is_alive():
                child.terminate()
                child.join(timeout=10)
    assert [child.exitcode for child in children] == [0] * WORKERS
    for out in outs:
        for first, count, reps in json.loads(out.read_text(encoding="utf-8")):
            assert len(reps) == count
            run.reservations += 1
            for offset, rep_id in enumerate(reps):
                slot = first + offset
                run.assignments += 1
                run.slots[slot] += 1
                run.per_rep[rep_id] += 1
                run.wrong_rep += rep_id != rep_ids[slot % len(rep_ids)]
    return run


def _final_cursor(url: str, sub: uuid.UUID) -> int:
    with get_session(url) as session:
        return int(configs.get_value(session, dialer_rr_config_key(sub)))


def test_eight_processes_never_share_a_slot_and_share_the_work_evenly(
    processes: BaseContext, database_url: str, tmp_path: Path
) -> None:
    sub, rep_ids = _seed(database_url)
    run = _workload(processes, database_url, sub, rep_ids, tmp_path, lock=True)
    cursor = _final_cursor(database_url, sub)
    print(f"\nwith the advisory lock: {run.summary(cursor)}")

    n = run.assignments
    assert run.reservations >= WORKERS  # every process got through at least one reservation
    assert sorted(run.slots) == list(range(n))  # every slot 0..N-1 ...
    assert run.duplicates == 0  # ... exactly once
    assert cursor == n
    assert run.wrong_rep == 0
    assert set(run.per_rep) == set(rep_ids)
    assert all(abs(count - n / len(rep_ids)) <= 1 for count in run.per_rep.values()), run.per_rep


def test_without_the_lock_the_same_workload_hands_slots_out_twice(
    processes: BaseContext, database_url: str, tmp_path: Path
) -> None:
    """The control: it shows that the test above would catch a missing lock."""
    sub, rep_ids = _seed(database_url)
    run = _workload(processes, database_url, sub, rep_ids, tmp_path, lock=False)
    cursor = _final_cursor(database_url, sub)
    print(f"\nwithout the advisory lock: {run.summary(cursor)}")

    assert run.duplicates > 0
    assert len(run.slots) < run.assignments
    assert cursor < run.assignments  # lost updates of the cursor


def test_two_subscriptions_never_block_each_other(database_url: str) -> None:
    sub_a, reps_a = _seed(database_url)
    sub_b, reps_b = _seed(database_url)
    assert rr._lock_key(sub_a) != rr._lock_key(sub_b)

    with ExitStack() as holding_a:
        holder = holding_a.enter_context(get_session(database_url))
        held = reserve_sales_rep_round_robin_batch(holder, sub_a, require_nooks=False, count=2)
        assert [r.id for r in held] == reps_a[0:2]

        began = time.monotonic()
        with get_session(database_url) as session:
            session.execute(text("SET LOCAL lock_timeout = '2s'"))
            got_b = reserve_sales_rep_round_robin_batch(
                session, sub_b, require_nooks=False, count=1
            )
        other_tenant = time.monotonic() - began
        assert [r.id for r in got_b] == reps_b[0:1]
        assert other_tenant < 2.0

        began = time.monotonic()
        with pytest.raises(OperationalError) as blocked, get_session(database_url) as session:
            session.execute(text("SET LOCAL lock_timeout = '500ms'"))
            reserve_sales_rep_round_robin_batch(session, sub_a, require_nooks=False, count=1)
        same_tenant = time.monotonic() - began
        assert isinstance(blocked.value.orig, psycopg.errors.LockNotAvailable)
        assert same_tenant >= 0.45

    # Subscription A's holder has committed: A continues where the holder left its cursor.
    began = time.monotonic()
    with get_session(database_url) as session:
        session.execute(text("SET LOCAL lock_timeout = '2s'"))
        after = reserve_sales_rep_round_robin_batch(session, sub_a, require_nooks=False, count=1)
    after_release = time.monotonic() - began
    assert [r.id for r in after] == reps_a[2:3]
    assert _final_cursor(database_url, sub_a) == 3
    assert _final_cursor(database_url, sub_b) == 1
    print(
        f"\nwhile subscription A's lock was held: a reservation for B took "
        f"{other_tenant * 1000:.1f} ms (lock_timeout 2 s); one for A gave up after "
        f"{same_tenant * 1000:.0f} ms with lock_timeout (500 ms); after A's commit a "
        f"reservation for A took {after_release * 1000:.1f} ms"
    )
