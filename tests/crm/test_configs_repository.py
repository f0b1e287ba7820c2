"""``ConfigsRepository`` against the migrated schema (docs/data-layer.md, "ConfigsRepository"):
globally unique keys, an idempotent ``set_value``, and a ``get_value`` that always reads what
the database holds."""

from __future__ import annotations

import inspect
import uuid

import pytest

from morpheus_pipelines.crm.repositories.configs import ConfigsRepository
from morpheus_pipelines.db.session import get_session
from tests.support.crm_round_robin import add_subscription

repo = ConfigsRepository()


def test_set_value_creates_then_overwrites_only_the_value(database_url: str) -> None:
    with get_session(database_url) as session:
        sub = add_subscription(session, "Acme")
        other = add_subscription(session, "Globex")
        created = repo.set_value(session, "dialer_follow_up_rep_rr:x", "3", sub)
        assert (created.key, created.value, created.subscriptionId) == (
            "dialer_follow_up_rep_rr:x",
            "3",
            sub,
        )
    with get_session(database_url) as session:
        # Same key written again (at-least-once delivery): one row, new value, owner unchanged.
        updated = repo.set_value(session, "dialer_follow_up_rep_rr:x", "4", other)
        assert updated.id == created.id
        assert (updated.value, updated.subscriptionId) == ("4", sub)
    with get_session(database_url) as session:
        row = repo.get_by_key(session, "dialer_follow_up_rep_rr:x")
        assert (row.id, row.value, row.subscriptionId) == (created.id, "4", sub)
        assert repo.get_value(session, "dialer_follow_up_rep_rr:x") == "4"
        assert len(repo.get_all(session)) == 1


def test_missing_key_and_null_value_read_as_none(database_url: str) -> None:
    with get_session(database_url) as session:
        assert repo.get_by_key(session, "absent") is None
        assert repo.get_value(session, "absent") is None
        repo.set_value(session, "global.flag", None, None)
        assert repo.get_value(session, "global.flag") is None
        assert repo.get_by_key(session, "global.flag").subscriptionId is None


def test_set_value_leaves_the_transaction_to_the_caller(database_url: str) -> None:
    with pytest.raises(RuntimeError), get_session(database_url) as session:
        sub = add_subscription(session)
        repo.set_value(session, "k", "1", sub)
        assert repo.get_value(session, "k") == "1"
        raise RuntimeError("the handler failed after the write")
    with get_session(database_url) as session:
        assert repo.get_value(session, "k") is None


def test_get_by_subscription_pages_one_tenant_in_key_order(database_url: str) -> None:
    with get_session(database_url) as session:
        sub = add_subscription(session, "Acme")
        other = add_subscription(session, "Globex")
        for key in ["c", "a", "d", "b"]:
            repo.set_value(session, f"acme.{key}", key, sub)
        repo.set_value(session, "globex.a", "a", other)
        repo.set_value(session, "global", "g", None)
    with get_session(database_url) as session:
        keys = [row.key for row in repo.get_by_subscription(session, sub)]
        assert keys == ["acme.a", "acme.b", "acme.c", "acme.d"]
        page = repo.get_by_subscription(session, sub, limit=2, offset=1)
        assert [row.key for row in page] == ["acme.b", "acme.c"]
        assert [row.key for row in repo.get_by_subscription(session, other)] == ["globex.a"]
        assert repo.get_by_subscription(session, uuid.uuid4()) == []


def test_get_value_sees_a_commit_the_session_s_entity_does_not(database_url: str) -> None:
    """Why ``get_value`` selects the column: an entity already in the identity map keeps its
    loaded value when queried again, which would make the round-robin cursor stale."""
    with get_session(database_url) as session:
        sub = add_subscription(session)
        repo.set_value(session, "cursor", "0", sub)
    with get_session(database_url) as reader:
        entity = repo.get_by_key(reader, "cursor")
        assert entity.value == "0"
        with get_session(database_url) as writer:
            repo.set_value(writer, "cursor", "7", sub)
        # READ COMMITTED: the next statement of the reader's transaction sees the commit...
        assert repo.get_value(reader, "cursor") == "7"
        # ...but re-querying the entity hands back the identity-mapped object unchanged.
        assert repo.get_by_key(reader, "cursor").value == "0"


def test_signatures_are_the_documented_ones() -> None:
    def shape(method) -> list[tuple[str, str, object]]:
        return [
            (n, p.kind.name, p.default) for n, p in inspect.signature(method).parameters.items()
        ]

    positional, empty = "POSITIONAL_OR_KEYWORD", inspect.Parameter.empty
    assert shape(repo.get_by_key) == [("session", positional, empty), ("key", positional, empty)]
    assert shape(repo.get_value) == [("session", positional, empty), ("key", positional, empty)]
    assert shape(repo.get_by_subscription) == [
        ("session", positional, empty),
        ("subscription_id", positional, empty),
        ("limit", "KEYWORD_ONLY", 100),
        ("offset", "KEYWORD_ONLY", 0),
    ]
    assert shape(repo.set_value) == [
        (name, positional, empty) for name in ["session", "key", "value", "subscription_id"]
    ]
