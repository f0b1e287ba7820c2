"""The round-robin helpers against the migrated schema (docs/data-layer.md, "Round-robin
helpers"): rotation order over ``id ASC``, the cursor in ``configs``, eligibility, the empty
pool, and the advisory lock (its key, its lifetime, and that a second reservation waits for
it). The proof under concurrency is tests/crm/test_round_robin_concurrency.py."""

from __future__ import annotations

import inspect
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.repositories import sales_rep_round_robin as rr
from morpheus_pipelines.crm.repositories.configs import ConfigsRepository
from morpheus_pipelines.crm.repositories.sales_rep import SalesRepRepository
from morpheus_pipelines.crm.repositories.sales_rep_round_robin import (
    RR_CONFIG_KEY_PREFIX,
    dialer_rr_config_key,
    reserve_sales_rep_round_robin_batch,
    select_next_sales_rep_round_robin,
)
from morpheus_pipelines.db.session import get_session
from tests.support.crm_round_robin import add_rep, add_subscription

configs = ConfigsRepository()


def _pool(url: str, size: int = 3) -> tuple[uuid.UUID, list[int]]:
    """A subscription with ``size`` eligible reps (ids ascending) plus two that never qualify."""
    with get_session(url) as session:
        sub = add_subscription(session)
        add_rep(session, sub, "inactive@acme.test", hubspot_owner_id="90", is_active=False)
        ids = [
            add_rep(session, sub, f"rep{i}@acme.test", hubspot_owner_id=str(100 + i)).id
            for i in range(size)
        ]
        add_rep(session, sub, "no-owner@acme.test")
    return sub, ids


def _cursor(url: str, sub: uuid.UUID) -> str | None:
    with get_session(url) as session:
        return configs.get_value(session, dialer_rr_config_key(sub))


def _held_advisory_keys(session: Session) -> list[int]:
    """Advisory locks this backend holds, as the bigint keys passed to pg_advisory_xact_lock
    (pg_locks splits a bigint key into classid = high half, objid = low half)."""
    rows = session.execute(
        text(
            "SELECT (classid::bigint << 32) | objid::bigint FROM pg_locks "
            "WHERE locktype = 'advisory' AND objsubid = 1 AND granted "
            "AND pid = pg_backend_pid()"
        )
    )
    return [row[0] for row in rows]


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _logged() -> Iterator[list[logging.LogRecord]]:
    """The module's log records (the run uses ``-p no:logging``, so no ``caplog``)."""
    handler = _Records()
    rr.log.addHandler(handler)
    try:
        yield handler.records
    finally:
        rr.log.removeHandler(handler)


def test_key_format_and_prefix() -> None:
    sub = uuid.UUID("0b6f3c1e-2d4a-4e5f-8a9b-0c1d2e3f4a5b")
    assert RR_CONFIG_KEY_PREFIX == "dialer_follow_up_rep_rr"
    assert (
        dialer_rr_config_key(sub) == "dialer_follow_up_rep_rr:0b6f3c1e-2d4a-4e5f-8a9b-0c1d2e3f4a5b"
    )


@pytest.mark.parametrize(
    ("subscription_id", "key"),
    [
        ("12345678-9abc-def0-1111-222222222222", 0x123456789ABCDEF0),
        # The top bit is dropped (modulo 2**63) so the key fits a signed bigint.
        ("ffffffff-ffff-ffff-0000-000000000000", 2**63 - 1),
        ("80000000-0000-0000-ffff-ffffffffffff", 0),
        ("00000000-0000-0001-ffff-ffffffffffff", 1),
        ("b3e1c0de-0000-4000-8000-000000000000", 0x33E1C0DE00004000),
    ],
)
def test_lock_key_of_known_uuids(subscription_id: str, key: int) -> None:
    assert rr._lock_key(uuid.UUID(subscription_id)) == key


def test_select_next_rotates_in_id_order_and_advances_the_cursor(database_url: str) -> None:
    sub, ids = _pool(database_url)
    picked = []
    for _ in range(7):
        with get_session(database_url) as session:
            picked.append(select_next_sales_rep_round_robin(session, sub, require_nooks=False).id)
    assert picked == [ids[0], ids[1], ids[2], ids[0], ids[1], ids[2], ids[0]]
    assert _cursor(database_url, sub) == "7"


def test_batch_takes_consecutive_slots_and_advances_by_count(database_url: str) -> None:
    sub, ids = _pool(database_url)
    with get_session(database_url) as session:
        first = reserve_sales_rep_round_robin_batch(session, sub, require_nooks=False, count=2)
    assert [r.id for r in first] == ids[0:2]
    assert _cursor(database_url, sub) == "2"
    with get_session(database_url) as session:
        # More than the pool: the rotation wraps and repeats.
        second = reserve_sales_rep_round_robin_batch(session, sub, require_nooks=False, count=4)
    assert [r.id for r in second] == [ids[2], ids[0], ids[1], ids[2]]
    assert _cursor(database_url, sub) == "6"
    with get_session(database_url) as session:
        row = configs.get_by_key(session, dialer_rr_config_key(sub))
        assert row.subscriptionId == sub


def test_two_reservations_in_one_transaction_continue_the_cursor(database_url: str) -> None:
    """The lock is re-entrant within a transaction and the second read sees the first write."""
    sub, ids = _pool(database_url)
    with get_session(database_url) as session:
        a = reserve_sales_rep_round_robin_batch(session, sub, require_nooks=False, count=2)
        b = select_next_sales_rep_round_robin(session, sub, require_nooks=False)
    assert [r.id for r in a] + [b.id] == ids
    assert _cursor(database_url, sub) == "3"


def test_require_nooks_rotates_only_reps_with_a_nooks_id(database_url: str) -> None:
    with get_session(database_url) as session:
        sub = add_subscription(session)
        a = add_rep(session, sub, "a@acme.test", hubspot_owner_id="1", nooks_user_id="na")
        add_rep(session, sub, "b@acme.test", hubspot_owner_id="2")
        c = add_rep(session, sub, "c@acme.test", hubspot_owner_id="3", nooks_user_id="nc")
        add_rep(session, sub, "d@acme.test", nooks_user_id="nd")  # no HubSpot owner id
    with get_session(database_url) as session:
        nooks = reserve_sales_rep_round_robin_batch(session, sub, require_nooks=True, count=3)
    assert [r.id for r in nooks] == [a.id, c.id, a.id]
    assert {r.nooksUserId for r in nooks} == {"na", "nc"}


def test_no_eligible_rep_warns_and_returns_nothing(database_url: str) -> None:
    with get_session(database_url) as session:
        sub = add_subscription(session)
        add_rep(session, sub, "gone@acme.test", hubspot_owner_id="1", is_active=False)
        add_rep(session, sub, "hubspot-only@acme.test", hubspot_owner_id="2")
    with _logged() as records, get_session(database_url) as session:
        assert select_next_sales_rep_round_robin(session, sub, require_nooks=True) is None
        assert reserve_sales_rep_round_robin_batch(session, sub, require_nooks=True, count=3) == []
        assert _held_advisory_keys(session) == []  # nothing to serialise, no lock taken
    assert [r.levelname for r in records] == ["WARNING", "WARNING"]
    assert str(sub) in records[0].getMessage()
    assert _cursor(database_url, sub) is None
    with _logged() as records, get_session(database_url) as session:
        empty = add_subscription(session, "No reps")
        assert select_next_sales_rep_round_robin(session, empty, require_nooks=False) is None
    assert [r.levelname for r in records] == ["WARNING"]


def test_deactivated_rep_leaves_the_rotation(database_url: str) -> None:
    sub, ids = _pool(database_url)
    with get_session(database_url) as session:
        SalesRepRepository().update_by_id(session, ids[1], {"isActive": False})
    with get_session(database_url) as session:
        picked = reserve_sales_rep_round_robin_batch(session, sub, require_nooks=False, count=4)
    assert [r.id for r in picked] == [ids[0], ids[2], ids[0], ids[2]]


@pytest.mark.parametrize("count", [0, -1, True, 1.5, "2"])
def test_count_must_be_a_positive_integer(database_url: str, count: object) -> None:
    sub, _ = _pool(database_url)
    with get_session(database_url) as session, pytest.raises(ValueError, match="count"):
        reserve_sales_rep_round_robin_batch(session, sub, require_nooks=False, count=count)
    assert _cursor(database_url, sub) is None


def test_a_rolled_back_reservation_gives_its_slots_back(database_url: str) -> None:
    sub, ids = _pool(database_url)
    with pytest.raises(RuntimeError), get_session(database_url) as session:
        reserve_sales_rep_round_robin_batch(session, sub, require_nooks=False, count=2)
        raise RuntimeError("writing the assignments failed")
    assert _cursor(database_url, sub) is None
    with get_session(database_url) as session:
        assert select_next_sales_rep_round_robin(session, sub, require_nooks=False).id == ids[0]


def test_an_unparsable_cursor_restarts_at_zero_with_a_warning(database_url: str) -> None:
    sub, ids = _pool(database_url)
    with get_session(database_url) as session:
        configs.set_value(session, dialer_rr_config_key(sub), "not-a-number", sub)
    with _logged() as records, get_session(database_url) as session:
        assert select_next_sales_rep_round_robin(session, sub, require_nooks=False).id == ids[0]
    assert [r.levelname for r in records] == ["WARNING"]
    assert _cursor(database_url, sub) == "1"


def test_the_lock_is_held_on_the_subscription_key_until_the_transaction_ends(
    database_url: str,
) -> None:
    sub, _ = _pool(database_url)
    with get_session(database_url) as session:
        select_next_sales_rep_round_robin(session, sub, require_nooks=False)
        assert _held_advisory_keys(session) == [rr._lock_key(sub)]
        session.commit()  # what the end of the caller's block does
        assert _held_advisory_keys(session) == []


def test_a_second_reservation_waits_for_the_first_transaction(database_url: str) -> None:
    """While one transaction holds the subscription's lock, another reservation is blocked
    (seen in pg_locks, not guessed with a sleep); after the commit it continues the cursor."""
    sub, ids = _pool(database_url)
    result: list[int] = []
    errors: list[BaseException] = []

    def second() -> None:
        try:
            with get_session(database_url) as session:
                reps = reserve_sales_rep_round_robin_batch(
                    session, sub, require_nooks=False, count=2
                )
                result.extend(r.id for r in reps)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    with ExitStack() as holder_block:
        holder = holder_block.enter_context(get_session(database_url))
        first = reserve_sales_rep_round_robin_batch(holder, sub, require_nooks=False, count=2)
        thread = threading.Thread(target=second, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        with get_session(database_url) as observer:
            while not observer.execute(
                text(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                    "AND ((classid::bigint << 32) | objid::bigint) = :k"
                ),
                {"k": rr._lock_key(sub)},
            ).scalar_one():
                assert time.monotonic() < deadline, "the second reservation never waited"
                assert thread.is_alive(), errors
        assert result == []  # still waiting while the first transaction is open
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert not errors, errors
    assert [r.id for r in first] == ids[0:2]
    assert result == [ids[2], ids[0]]
    assert _cursor(database_url, sub) == "4"


def test_injected_repositories_are_used(database_url: str) -> None:
    """``sales_rep_repo``/``configs_repo`` replace the module's instances (a handler may pass
    its own, e.g. one scoped differently)."""

    class OnlyEvenIds(SalesRepRepository):
        def list_active_for_subscription(self, session, subscription_id, **options):
            reps = super().list_active_for_subscription(session, subscription_id, **options)
            return [r for r in reps if r.id % 2 == 0]

    class Recording(ConfigsRepository):
        keys: list[str]

        def __init__(self) -> None:
            self.keys = []

        def set_value(self, session, key, value, subscription_id):
            self.keys.append(key)
            return super().set_value(session, key, value, subscription_id)

    sub, ids = _pool(database_url, size=4)
    recording = Recording()
    with get_session(database_url) as session:
        picked = reserve_sales_rep_round_robin_batch(
            session,
            sub,
            require_nooks=False,
            count=2,
            sales_rep_repo=OnlyEvenIds(),
            configs_repo=recording,
        )
    even = [i for i in ids if i % 2 == 0]
    assert [r.id for r in picked] == even[0:2]
    assert recording.keys == [dialer_rr_config_key(sub)]


def test_public_signatures_are_the_documented_ones() -> None:
    def shape(function) -> list[tuple[str, str, object]]:
        return [
            (n, p.kind.name, p.default) for n, p in inspect.signature(function).parameters.items()
        ]

    positional, empty = "POSITIONAL_OR_KEYWORD", inspect.Parameter.empty
    assert shape(dialer_rr_config_key) == [("subscription_id", positional, empty)]
    assert shape(reserve_sales_rep_round_robin_batch) == [
        ("session", positional, empty),
        ("subscription_id", positional, empty),
        ("require_nooks", "KEYWORD_ONLY", empty),
        ("count", "KEYWORD_ONLY", empty),
        ("sales_rep_repo", "KEYWORD_ONLY", None),
        ("configs_repo", "KEYWORD_ONLY", None),
    ]
    assert shape(select_next_sales_rep_round_robin) == [
        ("session", positional, empty),
        ("subscription_id", positional, empty),
        ("require_nooks", "KEYWORD_ONLY", empty),
        ("sales_rep_repo", "KEYWORD_ONLY", None),
        ("configs_repo", "KEYWORD_ONLY", None),
    ]
