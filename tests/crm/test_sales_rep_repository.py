"""``SalesRepRepository`` against the migrated schema (docs/data-layer.md, "SalesRepRepository"):
the active lookups used to assign work, the history lookup that ignores ``isActive``, and the
``id ASC`` listing the round-robin cursor indexes."""

from __future__ import annotations

import inspect
import uuid

from morpheus_pipelines.crm.repositories.sales_rep import SalesRepRepository
from morpheus_pipelines.db.session import get_session
from tests.support.crm_round_robin import add_rep, add_subscription

repo = SalesRepRepository()


def _seed(url: str) -> tuple[uuid.UUID, uuid.UUID, dict[str, int]]:
    """Two subscriptions; the same person is a rep in both, with different CRM ids."""
    with get_session(url) as session:
        sub = add_subscription(session, "Acme")
        other = add_subscription(session, "Globex")
        ids = {
            "ana": add_rep(session, sub, "ana@acme.test", hubspot_owner_id="101").id,
            "ben": add_rep(session, sub, "ben@acme.test", hubspot_owner_id="102").id,
            "ana_other": add_rep(session, other, "ana@acme.test", hubspot_owner_id="901").id,
        }
    return sub, other, ids


def _deactivate(url: str, rep_id: int) -> None:
    with get_session(url) as session:
        repo.update_by_id(session, rep_id, {"isActive": False})


def test_get_active_by_email_is_scoped_to_the_subscription(database_url: str) -> None:
    sub, other, ids = _seed(database_url)
    with get_session(database_url) as session:
        assert repo.get_active_by_email(session, "ana@acme.test", sub).id == ids["ana"]
        assert repo.get_active_by_email(session, "ana@acme.test", other).id == ids["ana_other"]
        assert repo.get_active_by_email(session, "nobody@acme.test", sub) is None
        assert repo.get_active_by_email(session, "ana@acme.test", uuid.uuid4()) is None


def test_get_active_by_hubspot_owner_id_is_scoped_to_the_subscription(
    database_url: str,
) -> None:
    sub, other, ids = _seed(database_url)
    with get_session(database_url) as session:
        assert repo.get_active_by_hubspot_owner_id(session, "102", sub).id == ids["ben"]
        # Owner 901 exists, but in the other workspace.
        assert repo.get_active_by_hubspot_owner_id(session, "901", sub) is None
        assert repo.get_active_by_hubspot_owner_id(session, "901", other).id == ids["ana_other"]
        assert repo.get_active_by_hubspot_owner_id(session, "999", sub) is None


def test_deactivating_drops_a_rep_from_active_lookups_but_not_from_history(
    database_url: str,
) -> None:
    sub, _, ids = _seed(database_url)
    _deactivate(database_url, ids["ana"])
    with get_session(database_url) as session:
        assert repo.get_active_by_email(session, "ana@acme.test", sub) is None
        assert repo.get_active_by_hubspot_owner_id(session, "101", sub) is None
        assert [r.id for r in repo.list_active_for_subscription(session, sub)] == [ids["ben"]]
        # An inbound call owned by Ana still resolves to her.
        historical = repo.get_by_hubspot_owner_id(session, "101", sub)
        assert historical.id == ids["ana"]
        assert historical.isActive is False
        assert repo.get_by_hubspot_owner_id(session, "101", uuid.uuid4()) is None


def test_get_by_hubspot_owner_id_prefers_the_active_row_of_a_shared_owner_id(
    database_url: str,
) -> None:
    """Nothing makes (subscriptionId, hubspotOwnerId) unique: a rep re-added under a new email
    keeps the owner id. The active row wins, then the lowest id."""
    with get_session(database_url) as session:
        sub = add_subscription(session)
        old = add_rep(session, sub, "old@acme.test", hubspot_owner_id="7", is_active=False)
        new = add_rep(session, sub, "new@acme.test", hubspot_owner_id="7")
        assert old.id < new.id
        assert repo.get_by_hubspot_owner_id(session, "7", sub).id == new.id
        assert repo.get_active_by_hubspot_owner_id(session, "7", sub).id == new.id
        repo.update(session, new, {"isActive": False})
        assert repo.get_by_hubspot_owner_id(session, "7", sub).id == old.id
        assert repo.get_active_by_hubspot_owner_id(session, "7", sub) is None


def test_list_active_for_subscription_orders_by_id_and_filters(database_url: str) -> None:
    with get_session(database_url) as session:
        sub = add_subscription(session)
        other = add_subscription(session, "Other")
        # Inserted in an order that is neither alphabetical nor by owner id.
        zoe = add_rep(session, sub, "zoe@acme.test", hubspot_owner_id="3", nooks_user_id="n3")
        amy = add_rep(session, sub, "amy@acme.test", hubspot_owner_id="1")
        no_hubspot = add_rep(session, sub, "raw@acme.test", nooks_user_id="n9")
        blank_hubspot = add_rep(session, sub, "blank@acme.test", hubspot_owner_id="")
        add_rep(session, sub, "gone@acme.test", hubspot_owner_id="4", is_active=False)
        bob = add_rep(session, sub, "bob@acme.test", hubspot_owner_id="2", nooks_user_id="n2")
        add_rep(session, other, "zoe@acme.test", hubspot_owner_id="3", nooks_user_id="n3")
    with get_session(database_url) as session:

        def listed(**options: bool) -> list[int]:
            return [r.id for r in repo.list_active_for_subscription(session, sub, **options)]

        assert listed() == [zoe.id, amy.id, bob.id]
        assert listed(require_hubspot=True, require_nooks=False) == [zoe.id, amy.id, bob.id]
        assert listed(require_nooks=True) == [zoe.id, bob.id]
        assert listed(require_hubspot=False) == [
            zoe.id,
            amy.id,
            no_hubspot.id,
            blank_hubspot.id,
            bob.id,
        ]
        assert listed(require_hubspot=False, require_nooks=True) == [
            zoe.id,
            no_hubspot.id,
            bob.id,
        ]
        assert repo.list_active_for_subscription(session, uuid.uuid4()) == []


def test_signatures_are_the_documented_ones() -> None:
    """Session and record arguments positional, options keyword-only (docs/data-layer.md)."""

    def shape(method) -> list[tuple[str, str]]:
        return [(p.name, p.kind.name) for p in inspect.signature(method).parameters.values()]

    positional = "POSITIONAL_OR_KEYWORD"
    for method, names in [
        (repo.get_active_by_email, ["session", "email", "subscription_id"]),
        (repo.get_active_by_hubspot_owner_id, ["session", "hubspot_owner_id", "subscription_id"]),
        (repo.get_by_hubspot_owner_id, ["session", "hubspot_owner_id", "subscription_id"]),
    ]:
        assert shape(method) == [(n, positional) for n in names]
    listing = inspect.signature(repo.list_active_for_subscription).parameters
    assert [(n, p.kind.name, p.default) for n, p in listing.items()] == [
        ("session", positional, inspect.Parameter.empty),
        ("subscription_id", positional, inspect.Parameter.empty),
        ("require_hubspot", "KEYWORD_ONLY", True),
        ("require_nooks", "KEYWORD_ONLY", False),
    ]
