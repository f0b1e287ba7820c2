"""``morpheus_pipelines.crm.repositories`` exports exactly the data layer's sixteen names, and
bad input names the CRM table and column."""

from __future__ import annotations

import uuid

import pytest

import morpheus_pipelines.crm.repositories as crm_repositories
from morpheus_pipelines.crm.models import Subscription
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.store.base import BaseRepository, RepositoryError

EXPORTS = {
    "ActivityRepository",
    "BaseRepository",
    "CallRepository",
    "ConfigsRepository",
    "ContactRepository",
    "EmailRepository",
    "EmailCampaignTargetRepository",
    "EmailVariationRepository",
    "FollowUpTaskRepository",
    "SalesRepRepository",
    "SellerRepository",
    "TargetEmailsRepository",
    "TargetPhoneNumberRepository",
    "dialer_rr_config_key",
    "reserve_sales_rep_round_robin_batch",
    "select_next_sales_rep_round_robin",
}


def test_exactly_the_sixteen_names() -> None:
    assert set(crm_repositories.__all__) == EXPORTS and len(crm_repositories.__all__) == 16
    public = {
        name
        for name in vars(crm_repositories)
        if not name.startswith("_")
        and not isinstance(getattr(crm_repositories, name), type(crm_repositories))
    }
    assert public == EXPORTS
    assert crm_repositories.BaseRepository is BaseRepository  # the project's own
    assert not hasattr(crm_repositories, "CampaignTargetRepository")


def test_bad_input_names_the_table_and_the_column(database_url: str) -> None:
    contacts = crm_repositories.ContactRepository()
    configs = crm_repositories.ConfigsRepository()
    with get_session(database_url) as session:
        session.add(Subscription(id=uuid.uuid4(), name="Acme"))
        with pytest.raises(RepositoryError, match=r"contacts: unknown column\(s\) \['emial'\]"):
            contacts.filter_by(session, emial="x@example.com")
        with pytest.raises(RepositoryError, match=r"configs: conflict columns \['value'\]"):
            configs.upsert(session, {"key": "k", "value": "v"}, conflict_columns=["value"])
