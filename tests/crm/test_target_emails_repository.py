"""TargetEmailsRepository and its guarded newsletter opt-out write (docs/data-layer.md)."""

from __future__ import annotations

import inspect
import threading
import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, select

from morpheus_pipelines.crm.models import TargetEmails
from morpheus_pipelines.crm.repositories.target_emails import TargetEmailsRepository
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.store.base import RepositoryError
from tests.support.crm import new_subscription

repo = TargetEmailsRepository()
T0 = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)
MINUTE = timedelta(minutes=1)

Event = tuple[bool, datetime]  # (opted_out, occurred_at)


def _latest(events: list[Event]) -> Event:
    """The state the guard converges to: the newest event, an opt-out winning a tie."""
    at, opted_out = max((at, opted_out) for opted_out, at in events)
    return opted_out, at


@pytest.fixture
def subscription_id(database_url: str) -> uuid.UUID:
    return new_subscription(database_url)


def _apply(database_url: str, subscription_id: uuid.UUID, email: str, ev: Event) -> bool:
    """One webhook delivery: its own transaction, as a handler would run it."""
    with get_session(database_url) as session:
        return repo.set_newsletter_opt_out(
            session,
            subscription_id=subscription_id,
            email=email,
            opted_out=ev[0],
            occurred_at=ev[1],
        )


def _rows(database_url: str, subscription_id: uuid.UUID) -> list[tuple[str, bool, datetime]]:
    with get_session(database_url) as session:
        rows = session.scalars(
            select(TargetEmails)
            .where(TargetEmails.subscriptionId == subscription_id)
            .order_by(TargetEmails.id)
        )
        return [(r.email, r.newsletterOptedOut, r.newsletterOptOutAt) for r in rows]


def test_signatures_are_the_documented_ones() -> None:
    assert str(inspect.signature(repo.get_by_subscription_and_email)) == (
        "(session: 'Session', *, subscription_id: 'uuid.UUID', email: 'str')"
        " -> 'TargetEmails | None'"
    )
    assert str(inspect.signature(repo.set_newsletter_opt_out)) == (
        "(session: 'Session', *, subscription_id: 'uuid.UUID', email: 'str', "
        "opted_out: 'bool', occurred_at: 'datetime') -> 'bool'"
    )


def test_get_by_subscription_and_email_ignores_case_and_scopes_to_the_subscription(
    database_url: str, subscription_id: uuid.UUID
) -> None:
    other = new_subscription(database_url, "Other")
    with get_session(database_url) as session:
        mine = repo.insert(session, {"subscriptionId": subscription_id, "email": "Jane@X.io"})
        repo.insert(session, {"subscriptionId": other, "email": "jane@x.io"})
        repo.insert(session, {"subscriptionId": subscription_id, "email": "JANE@x.io"})  # twin
    with get_session(database_url) as session:
        for probe in ("jane@x.io", "JANE@X.IO", "Jane@X.io"):
            found = repo.get_by_subscription_and_email(
                session, subscription_id=subscription_id, email=probe
            )
            assert found.id == mine.id  # the oldest of the case variants
        assert (
            repo.get_by_subscription_and_email(
                session, subscription_id=new_subscription(database_url, "None"), email="jane@x.io"
            )
            is None
        )
        assert (
            repo.get_by_subscription_and_email(
                session, subscription_id=subscription_id, email="jane@x.i_"
            )
            is None
        )


# -- set_newsletter_opt_out -------------------------------------------------------------------


def test_an_unknown_address_is_created_lower_cased_with_the_event(
    database_url: str, subscription_id: uuid.UUID
) -> None:
    assert _apply(database_url, subscription_id, "New@X.io", (True, T0))
    assert _rows(database_url, subscription_id) == [("new@x.io", True, T0)]


def test_a_newer_event_applies_and_an_older_one_is_ignored(
    database_url: str, subscription_id: uuid.UUID
) -> None:
    assert _apply(database_url, subscription_id, "a@x.io", (False, T0))
    assert _apply(database_url, subscription_id, "a@x.io", (True, T0 + MINUTE))
    # A stale "subscribed" event must not undo the later opt-out.
    assert not _apply(database_url, subscription_id, "a@x.io", (False, T0 + MINUTE / 2))
    assert _rows(database_url, subscription_id) == [("a@x.io", True, T0 + MINUTE)]
    # A later re-subscribe does apply, and moves the watermark forward...
    assert _apply(database_url, subscription_id, "a@x.io", (False, T0 + 2 * MINUTE))
    # ...so a stale opt-out cannot overwrite it either.
    assert not _apply(database_url, subscription_id, "a@x.io", (True, T0 + MINUTE))
    assert _rows(database_url, subscription_id) == [("a@x.io", False, T0 + 2 * MINUTE)]


@pytest.mark.parametrize("first", [True, False])
def test_at_equal_timestamps_the_opt_out_wins_whatever_the_order(
    database_url: str, subscription_id: uuid.UUID, first: bool
) -> None:
    assert _apply(database_url, subscription_id, "a@x.io", (first, T0))
    applied = _apply(database_url, subscription_id, "a@x.io", (not first, T0))
    assert applied is (not first)  # only an opt-out overrides its twin
    assert _rows(database_url, subscription_id) == [("a@x.io", True, T0)]


@pytest.mark.parametrize("opted_out", [True, False])
def test_a_redelivered_event_applies_again_and_changes_nothing(
    database_url: str, subscription_id: uuid.UUID, opted_out: bool
) -> None:
    assert _apply(database_url, subscription_id, "a@x.io", (opted_out, T0))
    assert _apply(database_url, subscription_id, "a@x.io", (opted_out, T0))
    assert _rows(database_url, subscription_id) == [("a@x.io", opted_out, T0)]


def test_a_stored_row_without_a_timestamp_takes_any_event(
    database_url: str, subscription_id: uuid.UUID
) -> None:
    with get_session(database_url) as session:
        repo.insert(session, {"subscriptionId": subscription_id, "email": "a@x.io"})
    assert _apply(database_url, subscription_id, "a@x.io", (False, T0))
    assert _rows(database_url, subscription_id) == [("a@x.io", False, T0)]


def test_existing_rows_are_matched_ignoring_case_and_no_twin_is_created(
    database_url: str, subscription_id: uuid.UUID
) -> None:
    other = new_subscription(database_url, "Other")
    with get_session(database_url) as session:
        repo.insert(session, {"subscriptionId": subscription_id, "email": "Jane@X.io"})
        repo.insert(session, {"subscriptionId": other, "email": "jane@x.io"})
    assert _apply(database_url, subscription_id, "JANE@x.IO", (True, T0))
    assert not _apply(database_url, subscription_id, "jane@x.io", (False, T0 - MINUTE))
    assert _rows(database_url, subscription_id) == [("Jane@X.io", True, T0)]
    assert _rows(database_url, other) == [("jane@x.io", False, None)]  # another tenant


def test_a_row_loaded_in_the_session_sees_the_write(
    database_url: str, subscription_id: uuid.UUID
) -> None:
    with get_session(database_url) as session:
        loaded = repo.insert(session, {"subscriptionId": subscription_id, "email": "a@x.io"})
        repo.set_newsletter_opt_out(
            session, subscription_id=subscription_id, email="A@x.io", opted_out=True, occurred_at=T0
        )
        assert (loaded.newsletterOptedOut, loaded.newsletterOptOutAt) == (True, T0)


def test_the_write_is_rolled_back_with_the_callers_transaction(
    database_url: str, subscription_id: uuid.UUID
) -> None:
    with pytest.raises(RuntimeError), get_session(database_url) as session:
        repo.set_newsletter_opt_out(
            session, subscription_id=subscription_id, email="a@x.io", opted_out=True, occurred_at=T0
        )
        raise RuntimeError("handler failed")
    assert _rows(database_url, subscription_id) == []


def test_a_naive_timestamp_is_refused(database_url: str, subscription_id: uuid.UUID) -> None:
    with pytest.raises(RepositoryError, match="timezone-aware"), get_session(database_url) as s:
        repo.set_newsletter_opt_out(
            s,
            subscription_id=subscription_id,
            email="a@x.io",
            opted_out=True,
            occurred_at=datetime(2026, 11, 30, 7, 30),
        )


def test_offsets_are_compared_as_instants(database_url: str, subscription_id: uuid.UUID) -> None:
    later_in_sydney = (T0 + MINUTE).astimezone(timezone(timedelta(hours=11)))
    assert later_in_sydney.hour == 18
    assert _apply(database_url, subscription_id, "a@x.io", (True, later_in_sydney))
    assert not _apply(database_url, subscription_id, "a@x.io", (False, T0))
    assert _rows(database_url, subscription_id) == [("a@x.io", True, T0 + MINUTE)]


EVENTS = st.lists(
    st.tuples(st.booleans(), st.integers(min_value=0, max_value=5).map(lambda m: T0 + m * MINUTE)),
    min_size=1,
    max_size=7,
)


@settings(
    max_examples=40,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(events=EVENTS, data=st.data())
def test_any_delivery_order_ends_in_the_latest_events_state(
    database_url: str, subscription_id: uuid.UUID, events: list[Event], data: st.DataObject
) -> None:
    order = data.draw(st.permutations(events), label="delivery order")
    email = f"{uuid.uuid4().hex}@X.io"  # every example writes its own address
    newest: tuple[datetime, bool] | None = None
    with get_session(database_url) as session:
        for opted_out, at in order:
            applied = repo.set_newsletter_opt_out(
                session,
                subscription_id=subscription_id,
                email=email,
                opted_out=opted_out,
                occurred_at=at,
            )
            # applied exactly when the event is not older than everything applied before
            assert applied is (newest is None or (at, opted_out) >= newest)
            newest = max(newest or (at, opted_out), (at, opted_out))
        stored = repo.get_by_subscription_and_email(
            session, subscription_id=subscription_id, email=email
        )
        assert (stored.newsletterOptedOut, stored.newsletterOptOutAt) == _latest(events)


@pytest.mark.parametrize("interloper_is_newer", [True, False])
@pytest.mark.parametrize("mine_is_opt_out", [True, False])
def test_an_event_committed_between_the_two_statements_is_respected(
    database_url: str, subscription_id: uuid.UUID, interloper_is_newer: bool, mine_is_opt_out: bool
) -> None:
    """Another handler commits right after this one found the address existing and just
    before its guarded UPDATE: the guard is evaluated against what that handler wrote."""
    _apply(database_url, subscription_id, "a@x.io", (False, T0))
    mine: Event = (mine_is_opt_out, T0 + 2 * MINUTE)
    theirs: Event = (not mine_is_opt_out, T0 + (3 if interloper_is_newer else 1) * MINUTE)
    fired: list[bool] = []

    def interloper(conn, cursor, statement, parameters, context, executemany) -> None:
        if statement.lstrip().startswith("UPDATE target_emails") and not fired:
            fired.append(_apply(database_url, subscription_id, "a@x.io", theirs))

    with get_session(database_url) as session:
        connection = session.connection()
        event.listen(connection, "before_cursor_execute", interloper)
        try:
            applied = repo.set_newsletter_opt_out(
                session,
                subscription_id=subscription_id,
                email="a@x.io",
                opted_out=mine[0],
                occurred_at=mine[1],
            )
        finally:
            event.remove(connection, "before_cursor_execute", interloper)
    assert fired == [True]
    assert applied is (not interloper_is_newer)
    latest = _latest([(False, T0), mine, theirs])
    assert _rows(database_url, subscription_id) == [("a@x.io", *latest)]


@pytest.mark.parametrize("round_", range(3))
def test_concurrent_deliveries_converge_on_the_latest_event(
    database_url: str, subscription_id: uuid.UUID, round_: int
) -> None:
    """Six handlers deliver the events of one new address at once, each in its own
    transaction: one row is created, and it ends in the latest event's state."""
    events: list[Event] = [
        (True, T0 + 4 * MINUTE),
        (False, T0 + 5 * MINUTE),
        (True, T0 + MINUTE),
        (False, T0 + 2 * MINUTE),
        (True, T0 + 5 * MINUTE),  # ties with the opt-in above: the opt-out wins
        (False, T0),
    ]
    events = events[round_:] + events[:round_]
    emails = ["Race@X.io", "race@x.io", "RACE@X.IO"]
    barrier = threading.Barrier(len(events))
    errors: list[BaseException] = []

    def deliver(i: int, ev: Event) -> None:
        try:
            barrier.wait(timeout=30)
            _apply(database_url, subscription_id, emails[i % len(emails)], ev)
        except BaseException as error:  # surfaced below
            errors.append(error)

    threads = [threading.Thread(target=deliver, args=(i, ev)) for i, ev in enumerate(events)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert _rows(database_url, subscription_id) == [("race@x.io", True, T0 + 5 * MINUTE)]
