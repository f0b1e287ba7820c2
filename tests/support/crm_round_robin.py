"""Test support for the sales-rep and round-robin tests: seeding subscriptions and reps, and
the worker each child process of tests/crm/test_round_robin_concurrency.py runs.

The worker is a module-level function so a forkserver/spawn child can import it by name; it
opens its own engine (a child shares no connection with the test process).
"""

from __future__ import annotations

import json
import random
import time
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import SalesRep, Subscription
from morpheus_pipelines.crm.repositories.configs import ConfigsRepository
from morpheus_pipelines.crm.repositories.sales_rep import SalesRepRepository
from morpheus_pipelines.crm.repositories.sales_rep_round_robin import (
    _reserve_batch,
    dialer_rr_config_key,
    reserve_sales_rep_round_robin_batch,
)
from morpheus_pipelines.db.session import get_session

sales_rep_repo = SalesRepRepository()
configs_repo = ConfigsRepository()


def add_subscription(session: Session, name: str = "Acme") -> uuid.UUID:
    """A subscription row (every CRM row references one)."""
    subscription = Subscription(name=name)
    session.add(subscription)
    session.flush()
    return subscription.id


def add_rep(
    session: Session,
    subscription_id: uuid.UUID,
    email: str,
    *,
    hubspot_owner_id: str | None = None,
    nooks_user_id: str | None = None,
    is_active: bool = True,
) -> SalesRep:
    return sales_rep_repo.insert(
        session,
        {
            "subscriptionId": subscription_id,
            "email": email,
            "hubspotOwnerId": hubspot_owner_id,
            "nooksUserId": nooks_user_id,
            "isActive": is_active,
        },
    )


def reserve_until_deadline(
    url: str,
    subscription_id: str,
    *,
    lock: bool,
    start: Any,
    duration: float,
    seed: int,
    out: str,
) -> None:
    """Reserve batches of 1–5 reps, each in its own transaction, from the moment every worker
    has reached ``start`` (a multiprocessing barrier) until ``duration`` seconds later.

    Writes a JSON list of ``[first_slot, count, rep_ids]`` to ``out``. The slot is read back
    inside the reserving transaction: the cursor it holds then is the value this transaction
    wrote, ``first_slot + count``. ``lock=False`` goes through the test-only body without the
    advisory lock, to show what the lock prevents.
    """
    sub_id = uuid.UUID(subscription_id)
    key = dialer_rr_config_key(sub_id)
    rng = random.Random(seed)
    with get_session(url) as session:  # connect before the start line, not after
        session.execute(text("SELECT 1"))
    start.wait(timeout=120)
    deadline = time.monotonic() + duration
    records: list[list[Any]] = []
    while time.monotonic() < deadline:
        count = rng.randint(1, 5)
        with get_session(url) as session:
            if lock:
                reps = reserve_sales_rep_round_robin_batch(
                    session, sub_id, require_nooks=False, count=count
                )
            else:
                reps = _reserve_batch(session, sub_id, require_nooks=False, count=count, lock=False)
            end = int(configs_repo.get_value(session, key) or 0)
            records.append([end - count, count, [rep.id for rep in reps]])
    Path(out).write_text(json.dumps(records), encoding="utf-8")
