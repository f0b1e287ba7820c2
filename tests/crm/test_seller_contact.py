"""SellerRepository and ContactRepository against the real, migrated schema
(docs/data-layer.md, "The CRM tables"): filters, orderings, the fair backfill queues, and the
merge rules of ``upsert_for_seller``."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings, target
from hypothesis import strategies as st
from sqlalchemy import select

from morpheus_pipelines.crm.models import (
    Contact,
    LifeCycleStage,
    Seller,
    SellerPlatform,
)
from morpheus_pipelines.crm.repositories.contact import ContactRepository
from morpheus_pipelines.crm.repositories.seller import SellerRepository
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.store.base import RepositoryError
from tests.support.crm import new_subscription

sellers = SellerRepository()
contacts = ContactRepository()
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _seller(subscription_id: uuid.UUID, seller_id: str, **overrides: object) -> dict:
    row: dict = {
        "subscriptionId": subscription_id,
        "sellerId": seller_id,
        "platform": SellerPlatform.AMAZON,
    }
    row.update(overrides)
    return row


def _ids(rows: list) -> list[str]:
    return [row.sellerId for row in rows]


# -- SellerRepository ---------------------------------------------------------------------------


def test_get_by_seller_id_is_the_marketplace_id_not_the_primary_key(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        inserted = sellers.insert(session, _seller(sub, "A1B2C3"))
    with get_session(database_url) as session:
        assert sellers.get_by_seller_id(session, "A1B2C3").id == inserted.id
        assert sellers.get_by_seller_id(session, str(inserted.id)) is None
        assert sellers.get_by_seller_id(session, "missing") is None


def test_get_by_platform_newest_first_with_id_tiebreak_and_pages(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        for name, platform, created in [
            ("old", SellerPlatform.SHOPIFY, T0),
            ("tie-a", SellerPlatform.SHOPIFY, T0 + timedelta(hours=1)),
            ("tie-b", SellerPlatform.SHOPIFY, T0 + timedelta(hours=1)),
            ("new", SellerPlatform.SHOPIFY, T0 + timedelta(hours=2)),
            ("ebay", SellerPlatform.EBAY, T0 + timedelta(hours=3)),
        ]:
            sellers.insert(session, _seller(sub, name, platform=platform, createdAt=created))
    with get_session(database_url) as session:
        everything = sellers.get_by_platform(session, SellerPlatform.SHOPIFY)
        assert _ids(everything) == ["new", "tie-b", "tie-a", "old"]
        first = sellers.get_by_platform(session, SellerPlatform.SHOPIFY, limit=2)
        second = sellers.get_by_platform(session, SellerPlatform.SHOPIFY, limit=2, offset=2)
        assert _ids(first) + _ids(second) == _ids(everything)
        assert _ids(sellers.get_by_platform(session, SellerPlatform.EBAY)) == ["ebay"]
        assert sellers.get_by_platform(session, SellerPlatform.ETSY) == []


def test_get_by_subscription_is_tenant_scoped_newest_first(database_url: str) -> None:
    acme, globex = new_subscription(database_url, "acme"), new_subscription(database_url, "globex")
    with get_session(database_url) as session:
        sellers.insert(session, _seller(acme, "a-old", createdAt=T0))
        sellers.insert(session, _seller(globex, "g", createdAt=T0 + timedelta(hours=1)))
        sellers.insert(session, _seller(acme, "a-new", createdAt=T0 + timedelta(hours=2)))
    with get_session(database_url) as session:
        assert _ids(sellers.get_by_subscription(session, acme)) == ["a-new", "a-old"]
        assert _ids(sellers.get_by_subscription(session, acme, limit=1, offset=1)) == ["a-old"]
        assert _ids(sellers.get_by_subscription(session, globex)) == ["g"]
        assert sellers.get_by_subscription(session, uuid.uuid4()) == []


def test_pending_enrichment_is_new_and_never_enriched_oldest_first(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        sellers.insert(session, _seller(sub, "young", createdAt=T0 + timedelta(days=2)))
        sellers.insert(session, _seller(sub, "old", createdAt=T0))
        sellers.insert(session, _seller(sub, "enriched", createdAt=T0, enrichedAt=T0))
        sellers.insert(
            session,
            _seller(sub, "qualified", createdAt=T0, lifeCycleStage=LifeCycleStage.QUALIFIED),
        )
    with get_session(database_url) as session:
        assert _ids(sellers.get_pending_enrichment(session)) == ["old", "young"]
        assert _ids(sellers.get_pending_enrichment(session, limit=1)) == ["old"]


def test_pending_scoring_is_enriched_and_unscored_oldest_enrichment_first(
    database_url: str,
) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        sellers.insert(session, _seller(sub, "never-enriched"))
        sellers.insert(session, _seller(sub, "late", enrichedAt=T0 + timedelta(days=1)))
        # Created later but enriched earlier: enrichment time decides, not creation time.
        sellers.insert(
            session, _seller(sub, "early", enrichedAt=T0, createdAt=T0 + timedelta(days=9))
        )
        sellers.insert(
            session, _seller(sub, "scored", enrichedAt=T0, payoutPainScore=Decimal("12.50"))
        )
    with get_session(database_url) as session:
        assert _ids(sellers.get_pending_scoring(session)) == ["early", "late"]
        assert _ids(sellers.get_pending_scoring(session, limit=1)) == ["early"]


def test_get_suspended(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        for name in ["s1", "ok", "s2", "s3"]:
            sellers.insert(session, _seller(sub, name, isSuspended=name.startswith("s")))
    with get_session(database_url) as session:
        assert _ids(sellers.get_suspended(session)) == ["s1", "s2", "s3"]
        assert _ids(sellers.get_suspended(session, limit=2, offset=1)) == ["s2", "s3"]


def test_upsert_by_seller_id_inserts_then_updates_in_place(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        first = sellers.upsert_by_seller_id(
            session, _seller(sub, "X1", businessName="Old Name", website="old.example")
        )
    with get_session(database_url) as session:
        second = sellers.upsert_by_seller_id(
            session,
            {
                "subscriptionId": sub,
                "sellerId": "X1",
                "platform": SellerPlatform.AMAZON,
                "businessName": "New Name",
                "enrichedAt": T0,
                # Never rewritten by an upsert, even when the payload carries them.
                "createdAt": T0 - timedelta(days=365),
            },
        )
    assert second.id == first.id
    assert second.businessName == "New Name"
    assert second.enrichedAt == T0
    assert second.website == "old.example"  # absent from data: left alone
    assert second.createdAt == first.createdAt
    assert second.updatedAt > first.updatedAt  # stamped although data had no updatedAt
    with get_session(database_url) as session:
        assert len(sellers.get_all(session)) == 1
        assert sellers.get_by_seller_id(session, "X1").businessName == "New Name"


def test_upsert_by_seller_id_with_only_the_key_returns_the_row(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        first = sellers.upsert_by_seller_id(session, _seller(sub, "K", businessName="B"))
        again = sellers.upsert_by_seller_id(session, _seller(sub, "K"))
    assert (again.id, again.businessName) == (first.id, "B")


def test_upsert_by_seller_id_rejects_unknown_columns(database_url: str) -> None:
    sub = new_subscription(database_url)
    with pytest.raises(RepositoryError, match="sellers"), get_session(database_url) as session:
        sellers.upsert_by_seller_id(session, _seller(sub, "K", business_name="snake"))


def _drain(database_url: str, take, finish, limit: int) -> list[str]:
    """Run a backfill: each tick takes ``limit`` rows from the queue in its own transaction
    and finishes them; returns the sellerIds in the order they were served."""
    served: list[str] = []
    for _ in range(1000):
        with get_session(database_url) as session:
            batch = take(session, limit=limit)
            for seller in batch:
                finish(seller)
        if not batch:
            return served
        served += _ids(batch)
    raise AssertionError("the queue never drained")


@pytest.mark.parametrize(("limit", "seed"), [(1, 1), (3, 2), (7, 3), (50, 4)])
def test_enrichment_queue_serves_every_row_in_age_order(
    database_url: str, limit: int, seed: int
) -> None:
    """Taking ``limit`` at a time and marking them enriched serves every pending seller
    exactly once, oldest first, ties by id: nothing starves and the order is total."""
    rng = random.Random(seed)
    sub = new_subscription(database_url)
    ages = [T0 + timedelta(minutes=rng.randrange(6)) for _ in range(23)]  # many ties
    with get_session(database_url) as session:
        inserted = [
            sellers.insert(session, _seller(sub, f"s{i:02d}", createdAt=created))
            for i, created in enumerate(ages)
        ]
        sellers.insert(session, _seller(sub, "done", enrichedAt=T0))
    expected = _ids(sorted(inserted, key=lambda s: (s.createdAt, s.id)))

    def enrich(seller: Seller) -> None:
        seller.enrichedAt = T0 + timedelta(days=1)

    assert _drain(database_url, sellers.get_pending_enrichment, enrich, limit) == expected


def test_enrichment_queue_is_not_starved_by_new_arrivals(database_url: str) -> None:
    """Fresh sellers arriving every tick do not push the backlog back: the oldest pending
    seller is always served next."""
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        for i in range(6):
            sellers.insert(session, _seller(sub, f"backlog{i}", createdAt=T0 + timedelta(i)))
    served: list[str] = []
    for tick in range(12):
        with get_session(database_url) as session:
            # Two arrivals per tick, more than the tick serves: the queue keeps growing.
            for n in range(2):
                sellers.insert(
                    session, _seller(sub, f"t{tick}-{n}", createdAt=T0 + timedelta(30 + tick))
                )
            batch = sellers.get_pending_enrichment(session, limit=1)
            batch[0].lifeCycleStage = LifeCycleStage.ENRICHED
            served += _ids(batch)
    assert served[:6] == [f"backlog{i}" for i in range(6)]
    assert served[6:] == ["t0-0", "t0-1", "t1-0", "t1-1", "t2-0", "t2-1"]


def test_scoring_queue_serves_every_row_in_enrichment_order(database_url: str) -> None:
    rng = random.Random(7)
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        inserted = [
            sellers.insert(
                session,
                _seller(sub, f"s{i:02d}", enrichedAt=T0 + timedelta(hours=rng.randrange(4))),
            )
            for i in range(17)
        ]
    expected = _ids(sorted(inserted, key=lambda s: (s.enrichedAt, s.id)))

    def score(seller: Seller) -> None:
        seller.payoutPainScore = Decimal("1.00")

    assert _drain(database_url, sellers.get_pending_scoring, score, 4) == expected


# -- ContactRepository --------------------------------------------------------------------------


def _contact(subscription_id: uuid.UUID, **fields: object) -> dict:
    return {"subscriptionId": subscription_id, **fields}


def test_lookups_by_email_phone_and_hubspot_id(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        first = contacts.insert(session, _contact(sub, email="a@x.com", hubspotContactId="h"))
        second = contacts.insert(session, _contact(sub, phone="+61400", hubspotContactId="h"))
    with get_session(database_url) as session:
        assert contacts.get_by_email(session, "a@x.com").id == first.id
        assert contacts.get_by_email(session, "A@X.COM") is None  # exact match
        assert contacts.get_by_phone(session, "+61400").id == second.id
        assert contacts.get_by_phone(session, "61400") is None
        # hubspotContactId is not unique: the oldest row answers, every time.
        assert contacts.get_by_hubspot_contact_id(session, "h").id == first.id
        assert contacts.get_by_hubspot_contact_id(session, "nope") is None


def test_get_by_seller_newest_first(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        seller = sellers.insert(session, _seller(sub, "S"))
        other = sellers.insert(session, _seller(sub, "O"))
        for name, created in [
            ("old", T0),
            ("new", T0 + timedelta(1)),
            ("mid", T0 + timedelta(hours=1)),
        ]:
            contacts.insert(
                session, _contact(sub, sellerId=seller.id, firstName=name, createdAt=created)
            )
        contacts.insert(session, _contact(sub, sellerId=other.id, firstName="other"))
    with get_session(database_url) as session:
        names = [c.firstName for c in contacts.get_by_seller(session, seller.id)]
        assert names == ["new", "mid", "old"]
        page = contacts.get_by_seller(session, seller.id, limit=1, offset=1)
        assert [c.firstName for c in page] == ["mid"]


def test_missing_hubspot_id_population_and_age_order(database_url: str) -> None:
    sub, other = new_subscription(database_url, "a"), new_subscription(database_url, "b")
    with get_session(database_url) as session:
        for name, created, fields in [
            ("mobile", T0 + timedelta(3), {"mobilePhone": "+1"}),
            ("email", T0, {"email": "e@x.com"}),
            ("phone", T0 + timedelta(1), {"phone": "+2"}),
            ("resolved", T0, {"email": "r@x.com", "hubspotContactId": "9"}),
            ("unreachable", T0, {}),
        ]:
            contacts.insert(session, _contact(sub, firstName=name, createdAt=created, **fields))
        contacts.insert(session, _contact(other, firstName="elsewhere", email="o@x.com"))
    with get_session(database_url) as session:
        found = contacts.list_missing_hubspot_contact_id(session, subscription_id=sub, limit=10)
        assert [c.firstName for c in found] == ["email", "phone", "mobile"]
        two = contacts.list_missing_hubspot_contact_id(session, subscription_id=sub, limit=2)
        assert [c.firstName for c in two] == ["email", "phone"]


def test_missing_hubspot_id_by_last_sync_priority_then_never_synced_first(
    database_url: str,
) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        for name, priority, synced in [
            ("low-never", 0, None),
            ("high-recent", 5, T0 + timedelta(1)),
            ("high-never", 5, None),
            ("high-old", 5, T0),
            ("mid-old", 2, T0),
        ]:
            contacts.insert(
                session,
                _contact(
                    sub,
                    firstName=name,
                    email=f"{name}@x.com",
                    hubspotSyncPriority=priority,
                    hubspotLastSyncedAt=synced,
                ),
            )
        contacts.insert(
            session,
            _contact(
                sub, firstName="done", email="d@x.com", hubspotContactId="1", hubspotSyncPriority=9
            ),
        )
    with get_session(database_url) as session:
        found = contacts.list_missing_hubspot_id_by_last_sync(session, subscription_id=sub)
        assert [c.firstName for c in found] == [
            "high-never",
            "high-old",
            "high-recent",
            "mid-old",
            "low-never",
        ]
        top = contacts.list_missing_hubspot_id_by_last_sync(session, subscription_id=sub, limit=1)
        assert [c.firstName for c in top] == ["high-never"]


def test_find_existing_tries_hubspot_id_then_email_then_phone(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        by_hubspot = contacts.insert(session, _contact(sub, hubspotContactId="h1"))
        by_email = contacts.insert(session, _contact(sub, email="e@x.com"))
        by_phone = contacts.insert(session, _contact(sub, phone="+61"))
    with get_session(database_url) as session:

        def find(email=None, phone=None, hubspot_contact_id=None):
            found = contacts.find_existing(
                session, email=email, phone=phone, hubspot_contact_id=hubspot_contact_id
            )
            return None if found is None else found.id

        assert find("e@x.com", "+61", "h1") == by_hubspot.id
        assert find("e@x.com", "+61", "unknown") == by_email.id
        assert find("e@x.com", "+61") == by_email.id
        assert find("nobody@x.com", "+61") == by_phone.id
        assert find("", "  ", "") is None  # blank identifiers are no identifiers
        assert find() is None


def test_upsert_for_seller_creates_when_nothing_matches(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        created = contacts.upsert_for_seller(
            session, _contact(sub, email="new@x.com", phone="", firstName="  ", jobTitle="CEO")
        )
    assert created.id is not None
    # Blank scrape values are not stored, not even on a new row.
    assert (created.email, created.phone, created.firstName) == ("new@x.com", None, None)
    assert created.lifeCycleStage == LifeCycleStage.NEW


def test_upsert_for_seller_never_overwrites_with_null_or_blank(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        original = contacts.upsert_for_seller(
            session,
            _contact(sub, email="v@x.com", phone="+61400", firstName="Ada", jobTitle="CTO"),
        )
    with get_session(database_url) as session:
        merged = contacts.upsert_for_seller(
            session,
            _contact(
                sub, email="v@x.com", phone=None, firstName="", jobTitle="   ", lastName="Lovelace"
            ),
        )
    assert merged.id == original.id
    assert (merged.phone, merged.firstName, merged.jobTitle) == ("+61400", "Ada", "CTO")
    assert merged.lastName == "Lovelace"


def test_upsert_for_seller_newer_non_blank_values_win(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        original = contacts.upsert_for_seller(session, _contact(sub, phone="+1", jobTitle="CTO"))
    with get_session(database_url) as session:
        merged = contacts.upsert_for_seller(
            session, _contact(sub, phone="+1", jobTitle="CEO", email="found@x.com")
        )
    assert merged.id == original.id
    assert (merged.jobTitle, merged.email) == ("CEO", "found@x.com")


def test_upsert_for_seller_strips_an_email_owned_by_another_contact(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        mine = contacts.insert(session, _contact(sub, hubspotContactId="h1", email="mine@x.com"))
        theirs = contacts.insert(session, _contact(sub, email="theirs@x.com", firstName="T"))
    with get_session(database_url) as session:
        merged = contacts.upsert_for_seller(
            session, _contact(sub, hubspotContactId="h1", email="theirs@x.com", firstName="M")
        )
    assert merged.id == mine.id
    assert merged.email == "mine@x.com"  # the colliding email was dropped, not raised on
    assert merged.firstName == "M"  # ... and the rest of the payload still landed
    with get_session(database_url) as session:
        unchanged = contacts.get_by_id(session, theirs.id)
        assert (unchanged.email, unchanged.firstName) == ("theirs@x.com", "T")


def test_upsert_for_seller_strips_a_phone_owned_by_another_contact(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        mine = contacts.insert(session, _contact(sub, email="mine@x.com"))
        contacts.insert(session, _contact(sub, phone="+61999"))
    with get_session(database_url) as session:
        merged = contacts.upsert_for_seller(
            session, _contact(sub, email="mine@x.com", phone="+61999", mobilePhone="+61999")
        )
    assert merged.id == mine.id
    assert merged.phone is None
    assert merged.mobilePhone == "+61999"  # not unique: no collision to avoid
    with get_session(database_url) as session:
        assert len(contacts.get_all(session)) == 2


def test_upsert_for_seller_keeps_the_owning_subscription(database_url: str) -> None:
    acme, globex = new_subscription(database_url, "acme"), new_subscription(database_url, "globex")
    with get_session(database_url) as session:
        original = contacts.upsert_for_seller(session, _contact(acme, email="p@x.com"))
    with get_session(database_url) as session:
        merged = contacts.upsert_for_seller(
            session, _contact(globex, email="p@x.com", firstName="P")
        )
    assert (merged.id, merged.subscriptionId, merged.firstName) == (original.id, acme, "P")


def test_upsert_for_seller_rejects_unknown_columns(database_url: str) -> None:
    sub = new_subscription(database_url)
    with pytest.raises(RepositoryError, match="contacts"), get_session(database_url) as session:
        contacts.upsert_for_seller(session, _contact(sub, first_name="snake"))


# -- upsert_for_seller: property ----------------------------------------------------------------

FIELDS = ("email", "phone", "mobilePhone", "hubspotContactId", "firstName", "jobTitle")
# Mostly an index into a two-value pool per field and example (so that identities match and
# emails and phones collide often), otherwise a value a scrape returns when it found nothing.
_value = st.sampled_from([0, 1, 0, 1, None, "", "  "])
_update = st.fixed_dictionaries({}, optional=dict.fromkeys(FIELDS, _value))


def _concrete(tag: str, update: dict) -> dict:
    return {
        field: f"{field}-{tag}-{value}" if isinstance(value, int) else value
        for field, value in update.items()
    }


def _snapshot(session, subscription_id: uuid.UUID) -> dict[int, dict]:
    rows = session.scalars(select(Contact).where(Contact.subscriptionId == subscription_id))
    return {row.id: {field: getattr(row, field) for field in FIELDS} for row in rows}


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(updates=st.lists(_update, min_size=2, max_size=10))
def test_partial_updates_never_lose_a_verified_value(
    database_url: str, updates: list[dict]
) -> None:
    """Any sequence of partial scrapes — random subsets of fields, some None or blank, values
    drawn from a small pool so that email and phone collide often — never raises and never
    turns a stored value back into NULL; each write lands every non-blank value except an
    email or phone another contact holds. Each example runs on its own subscription and its
    own identifiers in the test's database; generation is steered towards examples with
    many collisions."""
    tag = uuid.uuid4().hex[:12]
    collisions = 0
    sub = new_subscription(database_url, tag)
    for update in updates:
        data = _concrete(tag, update)
        with get_session(database_url) as session:
            before = _snapshot(session, sub)
            result = contacts.upsert_for_seller(session, {"subscriptionId": sub, **data})
            after = _snapshot(session, sub)
        assert set(before) <= set(after)
        for contact_id, fields in before.items():
            for field, value in fields.items():
                if value is not None:
                    assert after[contact_id][field] is not None, (contact_id, field)
                    if contact_id != result.id:
                        assert after[contact_id][field] == value  # other rows untouched
        for field, value in data.items():
            stored = after[result.id][field]
            if value is None or not value.strip():
                assert stored == before.get(result.id, {}).get(field)
            elif stored != value:
                assert field in ("email", "phone")
                holders = [cid for cid, row in after.items() if row[field] == value]
                assert holders and result.id not in holders
                collisions += 1
    target(float(collisions), label="stripped collisions")
