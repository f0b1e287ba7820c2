"""Email, EmailVariation and EmailCampaignTarget repositories (docs/data-layer.md)."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime
from uuid import UUID

import pytest

from morpheus_pipelines.crm.models import EmailCampaignTarget
from morpheus_pipelines.crm.repositories.email import (
    EmailCampaignTargetRepository,
    EmailRepository,
    EmailVariationRepository,
)
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.store.base import BaseRepository
from tests.support.crm import new_subscription

email_repo = EmailRepository()
variation_repo = EmailVariationRepository()
target_repo = EmailCampaignTargetRepository()
CATEGORISED_AT = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)


@pytest.fixture
def subscription_id(database_url: str) -> UUID:
    return new_subscription(database_url)


def test_email_and_variation_repositories_are_plain_wrappers() -> None:
    for repo in (email_repo, variation_repo):
        own = {name for name in vars(type(repo)) if not name.startswith("_")}
        assert own == {"model_class"}, own
        assert isinstance(repo, BaseRepository)


def test_email_and_variation_round_trip(database_url: str, subscription_id) -> None:
    with get_session(database_url) as session:
        email = email_repo.insert(
            session, {"subscriptionId": subscription_id, "campaignId": "c1", "subject": "Hi"}
        )
        variation = variation_repo.insert(session, {"emailId": email.id, "subject": "Hello"})
    with get_session(database_url) as session:
        assert email_repo.filter_by(session, campaignId="c1")[0].subject == "Hi"
        assert variation_repo.filter_by(session, emailId=email.id) == [
            variation_repo.get_by_id(session, variation.id)
        ]


def test_categorisation_signatures_are_the_documented_ones() -> None:
    assert str(inspect.signature(target_repo.get_by_campaign_and_email)) == (
        "(session: 'Session', *, campaign_id: 'str', email: 'str') -> 'EmailCampaignTarget | None'"
    )
    assert str(inspect.signature(target_repo.update_categorisation)) == (
        "(session: 'Session', record: 'EmailCampaignTarget', *, category: 'str', "
        "categorised_at: 'datetime', category_model: 'str') -> 'EmailCampaignTarget'"
    )


def test_get_by_campaign_and_email_ignores_case_and_scopes_to_the_campaign(
    database_url: str, subscription_id
) -> None:
    with get_session(database_url) as session:
        wanted = target_repo.insert(
            session, {"subscriptionId": subscription_id, "campaignId": "c1", "email": "Jane@X.io"}
        )
        target_repo.insert(
            session, {"subscriptionId": subscription_id, "campaignId": "c2", "email": "jane@x.io"}
        )
    with get_session(database_url) as session:
        for probe in ("Jane@X.io", "jane@x.io", "JANE@X.IO"):
            found = target_repo.get_by_campaign_and_email(session, campaign_id="c1", email=probe)
            assert found is not None
            assert found.id == wanted.id
        assert (
            target_repo.get_by_campaign_and_email(session, campaign_id="c3", email="jane@x.io")
            is None
        )
        assert (
            target_repo.get_by_campaign_and_email(session, campaign_id="c1", email="jane@x.io ")
            is None
        )
        # LIKE wildcards are not wildcards here
        assert target_repo.get_by_campaign_and_email(session, campaign_id="c1", email="%") is None


def test_get_by_campaign_and_email_picks_the_oldest_of_case_variants(
    database_url: str, subscription_id
) -> None:
    """The unique constraint is case-sensitive, so case variants can coexist."""
    with get_session(database_url) as session:
        first = target_repo.insert(
            session, {"subscriptionId": subscription_id, "campaignId": "c1", "email": "a@x.io"}
        )
        target_repo.insert(
            session, {"subscriptionId": subscription_id, "campaignId": "c1", "email": "A@X.IO"}
        )
    with get_session(database_url) as session:
        found = target_repo.get_by_campaign_and_email(session, campaign_id="c1", email="A@x.io")
    assert found.id == first.id


def test_update_categorisation_writes_the_three_columns_and_returns_the_record(
    database_url: str, subscription_id
) -> None:
    with get_session(database_url) as session:
        record = target_repo.insert(
            session, {"subscriptionId": subscription_id, "campaignId": "c1", "email": "a@x.io"}
        )
    with get_session(database_url) as session:
        record = target_repo.get_by_campaign_and_email(session, campaign_id="c1", email="a@x.io")
        returned = target_repo.update_categorisation(
            session,
            record,
            category="INTERESTED",
            categorised_at=CATEGORISED_AT,
            category_model="claude-x",
        )
        assert returned is record
        # flushed, not committed: visible inside the caller's transaction
        assert session.get(EmailCampaignTarget, record.id).category == "INTERESTED"
    with get_session(database_url) as session:
        stored = target_repo.get_by_id(session, record.id)
    assert (stored.category, stored.categorisedAt, stored.categoryModel) == (
        "INTERESTED",
        CATEGORISED_AT,
        "claude-x",
    )
    assert (stored.campaignId, stored.email) == ("c1", "a@x.io")


def test_update_categorisation_is_rolled_back_with_the_callers_transaction(
    database_url: str, subscription_id
) -> None:
    with get_session(database_url) as session:
        record = target_repo.insert(
            session, {"subscriptionId": subscription_id, "campaignId": "c1", "email": "a@x.io"}
        )
    with pytest.raises(RuntimeError), get_session(database_url) as session:
        target_repo.update_categorisation(
            session,
            target_repo.get_by_id(session, record.id),
            category="SPAM",
            categorised_at=CATEGORISED_AT,
            category_model="m",
        )
        raise RuntimeError("handler failed after categorising")
    with get_session(database_url) as session:
        assert target_repo.get_by_id(session, record.id).category is None
