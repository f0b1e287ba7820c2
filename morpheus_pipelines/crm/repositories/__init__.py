"""The CRM repositories (docs/data-layer.md, "The CRM tables"): the only sanctioned way to
reach the CRM tables. Stateless; the steps reach them through
:class:`morpheus_pipelines.crm.store.CrmStore`. Every method takes the caller's ``Session``
first and never commits.

Exports exactly the names the data layer has always exported. There is no
``CampaignTargetRepository``: ``CampaignTarget`` is written through the base ``upsert``.
"""

from morpheus_pipelines.crm.repositories.activity import ActivityRepository
from morpheus_pipelines.crm.repositories.call import CallRepository
from morpheus_pipelines.crm.repositories.configs import ConfigsRepository
from morpheus_pipelines.crm.repositories.contact import ContactRepository
from morpheus_pipelines.crm.repositories.email import (
    EmailCampaignTargetRepository,
    EmailRepository,
    EmailVariationRepository,
)
from morpheus_pipelines.crm.repositories.follow_up_task import FollowUpTaskRepository
from morpheus_pipelines.crm.repositories.sales_rep import SalesRepRepository
from morpheus_pipelines.crm.repositories.sales_rep_round_robin import (
    dialer_rr_config_key,
    reserve_sales_rep_round_robin_batch,
    select_next_sales_rep_round_robin,
)
from morpheus_pipelines.crm.repositories.seller import SellerRepository
from morpheus_pipelines.crm.repositories.target_emails import TargetEmailsRepository
from morpheus_pipelines.crm.repositories.target_phone_number import TargetPhoneNumberRepository
from morpheus_pipelines.platform.store.base import BaseRepository

__all__ = [
    "ActivityRepository",
    "BaseRepository",
    "CallRepository",
    "ConfigsRepository",
    "ContactRepository",
    "EmailCampaignTargetRepository",
    "EmailRepository",
    "EmailVariationRepository",
    "FollowUpTaskRepository",
    "SalesRepRepository",
    "SellerRepository",
    "TargetEmailsRepository",
    "TargetPhoneNumberRepository",
    "dialer_rr_config_key",
    "reserve_sales_rep_round_robin_batch",
    "select_next_sales_rep_round_robin",
]
