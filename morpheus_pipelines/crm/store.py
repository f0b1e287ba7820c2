"""``CrmStore``: every CRM repository within one caller-owned session.

Steps take a store instead of reaching for module-level repository singletons, so what a step
touches is visible in its signature and a test can hand it a store over its own session. The
repositories are stateless; the store holds nothing but the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sqlalchemy.orm import Session

from morpheus_pipelines.crm.repositories.activity import ActivityRepository
from morpheus_pipelines.crm.repositories.call import CallRepository, CampaignTargetRepository
from morpheus_pipelines.crm.repositories.configs import ConfigsRepository
from morpheus_pipelines.crm.repositories.contact import ContactRepository
from morpheus_pipelines.crm.repositories.email import (
    EmailCampaignTargetRepository,
    EmailRepository,
    EmailVariationRepository,
)
from morpheus_pipelines.crm.repositories.first_touch import FirstTouchRepository
from morpheus_pipelines.crm.repositories.follow_up_task import FollowUpTaskRepository
from morpheus_pipelines.crm.repositories.hubspot_outbox import HubSpotOutboxRepository
from morpheus_pipelines.crm.repositories.hubspot_webhooks import HubSpotWebhookRepository
from morpheus_pipelines.crm.repositories.intake_keys import IntakeApiKeyRepository
from morpheus_pipelines.crm.repositories.lead_contact_retrievals import (
    LeadContactRetrievalRepository,
)
from morpheus_pipelines.crm.repositories.lead_follow_up import LeadFollowUpRepository
from morpheus_pipelines.crm.repositories.leads import LeadRepository
from morpheus_pipelines.crm.repositories.reengagement import (
    FollowUpEscalationRepository,
    ReengagementAssignmentRepository,
    ReengagementSegmentMemberRepository,
    SalesRepFairnessRepository,
)
from morpheus_pipelines.crm.repositories.rep_hand_overs import RepHandOverRepository
from morpheus_pipelines.crm.repositories.routing_config import RoutingConfigRepository
from morpheus_pipelines.crm.repositories.routing_directory import RoutingDirectoryRepository
from morpheus_pipelines.crm.repositories.sales_rep import SalesRepRepository
from morpheus_pipelines.crm.repositories.segment_lists import ReengagementSegmentListRepository
from morpheus_pipelines.crm.repositories.seller import SellerRepository
from morpheus_pipelines.crm.repositories.subscriptions import SubscriptionRepository
from morpheus_pipelines.crm.repositories.target_emails import TargetEmailsRepository
from morpheus_pipelines.crm.repositories.target_phone_number import TargetPhoneNumberRepository
from morpheus_pipelines.crm.repositories.timeline import (
    AttributionRepository,
    AutomationRepository,
    OutboundMessageRepository,
    TimelineRepository,
)


@dataclass(frozen=True)
class CrmStore:
    """The CRM tables as seen through ``session``: ``store.members.claim_new(store.session,
    ...)``. The caller owns the session and its transaction."""

    session: Session

    sellers: ClassVar[SellerRepository] = SellerRepository()
    contacts: ClassVar[ContactRepository] = ContactRepository()
    activities: ClassVar[ActivityRepository] = ActivityRepository()
    calls: ClassVar[CallRepository] = CallRepository()
    campaign_targets: ClassVar[CampaignTargetRepository] = CampaignTargetRepository()
    sales_reps: ClassVar[SalesRepRepository] = SalesRepRepository()
    configs: ClassVar[ConfigsRepository] = ConfigsRepository()
    tasks: ClassVar[FollowUpTaskRepository] = FollowUpTaskRepository()
    emails: ClassVar[EmailRepository] = EmailRepository()
    email_variations: ClassVar[EmailVariationRepository] = EmailVariationRepository()
    email_targets: ClassVar[EmailCampaignTargetRepository] = EmailCampaignTargetRepository()
    target_emails: ClassVar[TargetEmailsRepository] = TargetEmailsRepository()
    target_phones: ClassVar[TargetPhoneNumberRepository] = TargetPhoneNumberRepository()
    members: ClassVar[ReengagementSegmentMemberRepository] = ReengagementSegmentMemberRepository()
    assignments: ClassVar[ReengagementAssignmentRepository] = ReengagementAssignmentRepository()
    fairness: ClassVar[SalesRepFairnessRepository] = SalesRepFairnessRepository()
    escalations: ClassVar[FollowUpEscalationRepository] = FollowUpEscalationRepository()
    leads: ClassVar[LeadRepository] = LeadRepository()
    hand_overs: ClassVar[RepHandOverRepository] = RepHandOverRepository()
    routing: ClassVar[RoutingDirectoryRepository] = RoutingDirectoryRepository()
    intake_keys: ClassVar[IntakeApiKeyRepository] = IntakeApiKeyRepository()
    subscriptions: ClassVar[SubscriptionRepository] = SubscriptionRepository()
    contact_retrievals: ClassVar[LeadContactRetrievalRepository] = LeadContactRetrievalRepository()
    lead_follow_up: ClassVar[LeadFollowUpRepository] = LeadFollowUpRepository()
    timeline: ClassVar[TimelineRepository] = TimelineRepository()
    messages: ClassVar[OutboundMessageRepository] = OutboundMessageRepository()
    automations: ClassVar[AutomationRepository] = AutomationRepository()
    attribution: ClassVar[AttributionRepository] = AttributionRepository()
    outbox: ClassVar[HubSpotOutboxRepository] = HubSpotOutboxRepository()
    first_touch: ClassVar[FirstTouchRepository] = FirstTouchRepository()
    webhooks: ClassVar[HubSpotWebhookRepository] = HubSpotWebhookRepository()
    segment_lists: ClassVar[ReengagementSegmentListRepository] = ReengagementSegmentListRepository()
    routing_config: ClassVar[RoutingConfigRepository] = RoutingConfigRepository()
