"""ActivityRepository, and the caller-side base ``upsert`` the engagement sync writes
activities with (docs/data-layer.md, "The CRM tables")."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from morpheus_pipelines.crm.models import Activity, ActivityType
from morpheus_pipelines.crm.repositories.activity import ActivityRepository
from morpheus_pipelines.crm.repositories.contact import ContactRepository
from morpheus_pipelines.db.session import get_session
from tests.support.crm import new_subscription

activities = ActivityRepository()
contacts = ContactRepository()
T0 = datetime(2026, 2, 1, 8, 0, tzinfo=UTC)

# The engagement sync's upsert (docs/data-layer.md).
CONFLICT_COLUMNS = ["subscriptionId", "externalId"]
UPDATE_COLUMNS = [
    "type",
    "hubspotEngagementId",
    "subject",
    "body",
    "status",
    "direction",
    "contactId",
    "contactEmail",
    "hubspotContactId",
    "metadata",
    "updatedAt",
]


def _contact(database_url: str, subscription_id: uuid.UUID, email: str) -> int:
    with get_session(database_url) as session:
        return contacts.insert(session, {"subscriptionId": subscription_id, "email": email}).id


def _activity(sub: uuid.UUID, external_id: str, **overrides: object) -> dict:
    row: dict = {
        "subscriptionId": sub,
        "externalId": external_id,
        "type": ActivityType.EMAIL,
        "occurredAt": T0,
    }
    row.update(overrides)
    return row


def test_get_by_external_id_is_scoped_to_the_subscription(database_url: str) -> None:
    acme, globex = new_subscription(database_url, "acme"), new_subscription(database_url, "globex")
    with get_session(database_url) as session:
        ours = activities.insert(session, _activity(acme, "eng-1", subject="ours"))
        activities.insert(session, _activity(globex, "eng-1", subject="theirs"))
    with get_session(database_url) as session:
        found = activities.get_by_external_id(session, subscription_id=acme, external_id="eng-1")
        assert (found.id, found.subject) == (ours.id, "ours")
        theirs = activities.get_by_external_id(session, subscription_id=globex, external_id="eng-1")
        assert theirs.subject == "theirs"
        assert (
            activities.get_by_external_id(session, subscription_id=acme, external_id="eng-2")
            is None
        )


def test_list_by_contact_newest_first_by_occurred_at_then_id(database_url: str) -> None:
    sub = new_subscription(database_url)
    contact_id = _contact(database_url, sub, "a@x.com")
    other_id = _contact(database_url, sub, "b@x.com")
    with get_session(database_url) as session:
        for external_id, kind, occurred in [
            ("old-call", ActivityType.CALL, T0),
            ("tie-email-1", ActivityType.EMAIL, T0 + timedelta(hours=1)),
            ("tie-email-2", ActivityType.EMAIL, T0 + timedelta(hours=1)),
            ("new-note", ActivityType.NOTE, T0 + timedelta(hours=2)),
        ]:
            activities.insert(
                session,
                _activity(sub, external_id, type=kind, occurredAt=occurred, contactId=contact_id),
            )
        # Written last but happened first: occurredAt orders the timeline, not the write.
        activities.insert(
            session,
            _activity(sub, "late-sync", occurredAt=T0 - timedelta(days=1), contactId=contact_id),
        )
        activities.insert(session, _activity(sub, "other", contactId=other_id))

    def external_ids(**options: object) -> list[str]:
        with get_session(database_url) as session:
            rows = activities.list_by_contact(session, contact_id, **options)
        return [row.externalId for row in rows]

    assert external_ids() == ["new-note", "tie-email-2", "tie-email-1", "old-call", "late-sync"]
    assert external_ids(activity_type=ActivityType.EMAIL) == [
        "tie-email-2",
        "tie-email-1",
        "late-sync",
    ]
    assert external_ids(activity_type=ActivityType.MEETING) == []
    assert external_ids(limit=2, offset=1) == ["tie-email-2", "tie-email-1"]


def test_engagement_sync_upsert_over_overlapping_windows_is_duplicate_free(
    database_url: str,
) -> None:
    """Two runs of the engagement sync whose watermark windows overlap: the overlap updates
    in place (the contract's update columns, ``metadata`` included), nothing is duplicated, and the
    columns outside the update list keep their first-written values."""
    sub = new_subscription(database_url)
    contact_id = _contact(database_url, sub, "c@x.com")

    def engagement(n: int, run: int) -> dict:
        return _activity(
            sub,
            f"eng-{n}",
            type=ActivityType.EMAIL if run == 1 else ActivityType.CALL,
            hubspotEngagementId=f"eng-{n}",
            subject=f"subject {n} run {run}",
            body=f"body {run}",
            status="SENT" if run == 1 else "COMPLETED",
            direction="outbound",
            contactId=contact_id if run == 2 else None,
            contactEmail="c@x.com",
            hubspotContactId="hs-1",
            metadata={"run": run, "n": n},
            occurredAt=T0 + timedelta(minutes=n) + timedelta(days=run - 1),
            updatedAt=T0 + timedelta(days=run),
        )

    first_run: dict[str, Activity] = {}
    with get_session(database_url) as session:
        for n in range(1, 6):
            row = activities.upsert(
                session,
                engagement(n, 1),
                conflict_columns=CONFLICT_COLUMNS,
                update_columns=UPDATE_COLUMNS,
            )
            first_run[row.externalId] = row
    with get_session(database_url) as session:
        for n in range(3, 9):  # overlaps 3..5
            activities.upsert(
                session,
                engagement(n, 2),
                conflict_columns=CONFLICT_COLUMNS,
                update_columns=UPDATE_COLUMNS,
            )
    with get_session(database_url) as session:
        rows = {row.externalId: row for row in activities.get_all(session)}
    assert sorted(rows) == sorted(f"eng-{n}" for n in range(1, 9))
    for n in (1, 2):
        assert rows[f"eng-{n}"].metadata_ == {"run": 1, "n": n}
        assert rows[f"eng-{n}"].contactId is None
    for n in (3, 4, 5):
        row, first = rows[f"eng-{n}"], first_run[f"eng-{n}"]
        assert row.id == first.id
        assert (row.type, row.status, row.subject) == (
            ActivityType.CALL,
            "COMPLETED",
            f"subject {n} run 2",
        )
        assert row.contactId == contact_id
        assert row.metadata_ == {"run": 2, "n": n}
        assert row.updatedAt == T0 + timedelta(days=2)
        assert row.occurredAt == first.occurredAt  # not an update column
        assert row.createdAt == first.createdAt
    with get_session(database_url) as session:
        timeline = activities.list_by_contact(session, contact_id)
    assert [row.externalId for row in timeline] == [f"eng-{n}" for n in range(8, 2, -1)]


def test_upsert_returns_metadata_on_the_metadata_attribute(database_url: str) -> None:
    """The upsert speaks column names (``"metadata"``); the row it returns carries the value
    on the ORM attribute ``metadata_``."""
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        row = activities.upsert(
            session,
            _activity(sub, "m-1", metadata={"source": "hubspot", "tags": ["a"]}),
            conflict_columns=CONFLICT_COLUMNS,
        )
    assert row.metadata_ == {"source": "hubspot", "tags": ["a"]}


def test_base_insert_update_and_filters_speak_column_names(database_url: str) -> None:
    """``metadata`` is the column; the attribute is ``metadata_``. Every base method takes the
    column name (the upsert contract's language) and reaches the attribute."""
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        row = activities.insert(session, _activity(sub, "m-2", metadata={"k": 1}))
        activities.update(session, row, {"metadata": {"k": 2}})
    with get_session(database_url) as session:
        assert activities.get_by_id(session, row.id).metadata_ == {"k": 2}
        assert [a.id for a in activities.filter_by(session, metadata={"k": 2})] == [row.id]
        assert activities.first_by(session, metadata={"k": 2}).id == row.id
