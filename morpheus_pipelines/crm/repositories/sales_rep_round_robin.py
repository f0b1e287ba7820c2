"""Round-robin assignment of sales reps (docs/data-layer.md, "Round-robin helpers"; the rules
are in docs/ownership.md).

Functions rather than a repository class, because the state they manage is not a model of its
own: it is a cursor stored in ``configs`` under ``dialer_follow_up_rep_rr:<subscriptionId>``,
an index into ``SalesRepRepository.list_active_for_subscription`` (ordered ``id ASC``).

Why the advisory lock: the cursor is an ordinary row, so two handlers running at once would
both read the same value and hand the same reps to both batches. Every reservation therefore
takes ``pg_advisory_xact_lock`` on a key derived from the subscription before it reads the
cursor, and writes the advanced cursor in the same transaction. The lock is transaction-scoped:
it is released when the caller's ``get_session()`` block commits or rolls back, so there is no
unlock to forget, and it serialises reservations only until that commit — callers should keep
the rest of that transaction short. The key comes from the subscription id alone, so tenants
never wait for each other (tests/crm/test_round_robin_concurrency.py measures both).

Two conditions the lock relies on:

* READ COMMITTED (PostgreSQL's default, and what ``get_session`` uses): the cursor read is a
  new statement after the lock is granted, so it sees the previous holder's committed value.
  Under REPEATABLE READ the transaction's snapshot may predate the lock (the rep list is read
  first) and a concurrent reservation would fail with a serialisation error instead.
* The cursor is read with a column select (``ConfigsRepository.get_value``), never from an
  entity that the session may already hold with an old value.

A reserved batch advances the cursor once by ``count`` rather than looping over the single-rep
helper: one lock window, one read, one write, and consecutive slots for the batch.
"""

from __future__ import annotations

import logging
import re
import uuid

from sqlalchemy import text
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import SalesRep
from morpheus_pipelines.crm.repositories.configs import ConfigsRepository
from morpheus_pipelines.crm.repositories.sales_rep import SalesRepRepository

log = logging.getLogger(__name__)

RR_CONFIG_KEY_PREFIX = "dialer_follow_up_rep_rr"

# pg_advisory_xact_lock takes a signed bigint; the key is kept in [0, 2**63).
_LOCK_KEY_MODULUS = 2**63
_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")

_sales_rep_repo = SalesRepRepository()
_configs_repo = ConfigsRepository()


def dialer_rr_config_key(subscription_id: uuid.UUID) -> str:
    """The ``configs`` key of a subscription's cursor. ``configs.key`` is unique globally, not
    per subscription, so the key embeds the subscription id."""
    return f"{RR_CONFIG_KEY_PREFIX}:{subscription_id}"


def _lock_key(subscription_id: uuid.UUID) -> int:
    """The advisory-lock key of a subscription: its first eight bytes, big-endian, unsigned,
    modulo 2**63 so the value fits PostgreSQL's signed bigint.

    Two subscriptions share a key only when their first eight bytes agree (ignoring the top
    bit) — for random (v4) UUIDs a negligible chance, and the consequence would only be that
    those two tenants' reservations wait for each other.
    """
    return int.from_bytes(subscription_id.bytes[0:8], "big", signed=False) % _LOCK_KEY_MODULUS


def lock_rotation(session: Session, subscription_id: uuid.UUID) -> None:
    """Take the subscription's rotation lock until the caller's transaction ends.

    A reservation takes it anyway; a caller takes it first when the decisions made before the
    reservation (is there already a task for this contact?) must not race another batch of
    the same subscription (docs/ownership.md, "The lock"). Re-taking it in the same
    transaction does not block."""
    session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _lock_key(subscription_id)})


def _parse_cursor(value: str | None, key: str) -> int:
    """The stored cursor, 0 when absent. An unparsable value is treated as 0 with a warning:
    resetting the cursor only changes who is next, which is better than failing every
    assignment of the tenant."""
    if value is None:
        return 0
    if not _INTEGER.fullmatch(value):
        log.warning("round-robin cursor %s holds %r, not an integer; restarting at 0", key, value)
        return 0
    return int(value)


def _reserve_batch(
    session: Session,
    subscription_id: uuid.UUID,
    *,
    require_nooks: bool,
    count: int,
    sales_rep_repo: SalesRepRepository | None = None,
    configs_repo: ConfigsRepository | None = None,
    lock: bool = True,
) -> list[SalesRep]:
    """The body of ``reserve_sales_rep_round_robin_batch``. ``lock=False`` exists only so the
    concurrency test can show that, without the advisory lock, concurrent reservations hand
    out the same cursor slot twice; nothing else may pass it."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an integer >= 1, got {count!r}")
    sales_rep_repo = _sales_rep_repo if sales_rep_repo is None else sales_rep_repo
    configs_repo = _configs_repo if configs_repo is None else configs_repo

    reps = sales_rep_repo.list_active_for_subscription(
        session, subscription_id, require_hubspot=True, require_nooks=require_nooks
    )
    if not reps:
        log.warning(
            "no active sales rep with a HubSpot owner id%s in subscription %s; nobody assigned",
            " and a Nooks user id" if require_nooks else "",
            subscription_id,
        )
        return []

    if lock:
        lock_rotation(session, subscription_id)
    key = dialer_rr_config_key(subscription_id)
    cursor = _parse_cursor(configs_repo.get_value(session, key), key)
    chosen = [reps[(cursor + i) % len(reps)] for i in range(count)]
    configs_repo.set_value(session, key, str(cursor + count), subscription_id)
    return chosen


def reserve_sales_rep_round_robin_batch(
    session: Session,
    subscription_id: uuid.UUID,
    *,
    require_nooks: bool,
    count: int,
    sales_rep_repo: SalesRepRepository | None = None,
    configs_repo: ConfigsRepository | None = None,
) -> list[SalesRep]:
    """Reserve the next ``count`` reps of the subscription's rotation and advance its cursor
    by ``count``; ``[]`` (with a WARNING) when no active rep has a HubSpot owner id (and a
    Nooks user id, with ``require_nooks``).

    The reps come back in rotation order and repeat when ``count`` exceeds the pool. The
    advisory lock taken here is held until the caller's transaction ends, so call this inside
    the caller's ``with get_session() as session:`` block that also writes the assignments:
    a rolled-back transaction gives its slots back. Raises ``ValueError`` when ``count`` is
    not an integer >= 1.
    """
    return _reserve_batch(
        session,
        subscription_id,
        require_nooks=require_nooks,
        count=count,
        sales_rep_repo=sales_rep_repo,
        configs_repo=configs_repo,
    )


def select_next_sales_rep_round_robin(
    session: Session,
    subscription_id: uuid.UUID,
    *,
    require_nooks: bool,
    sales_rep_repo: SalesRepRepository | None = None,
    configs_repo: ConfigsRepository | None = None,
) -> SalesRep | None:
    """The next rep of the rotation (the cursor advances by one), or ``None`` when no rep
    qualifies; a one-rep ``reserve_sales_rep_round_robin_batch``."""
    reps = reserve_sales_rep_round_robin_batch(
        session,
        subscription_id,
        require_nooks=require_nooks,
        count=1,
        sales_rep_repo=sales_rep_repo,
        configs_repo=configs_repo,
    )
    return reps[0] if reps else None
