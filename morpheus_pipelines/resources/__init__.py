"""Dagster resources: configuration comes from the environment (README, "Configuration") via
``dg.EnvVar``.

:func:`build_resources` is the one place the code location's resources are built.
"""

from typing import Any

from morpheus_pipelines.platform.settings import load_settings
from morpheus_pipelines.resources.domain_intelligence import DomainIntelligenceResource
from morpheus_pipelines.resources.env import env_int_or_default, env_or_default
from morpheus_pipelines.resources.hubspot import HubSpotResource, TargetListResource
from morpheus_pipelines.resources.messaging import MessageSendersResource
from morpheus_pipelines.resources.meta import MetaGraphResource
from morpheus_pipelines.resources.notifier import NotifierResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.pipeline import PipelineSettingsResource
from morpheus_pipelines.resources.report_delivery import ReportDeliveryResource
from morpheus_pipelines.resources.routing import TenantRoutingResource
from morpheus_pipelines.resources.scoring import ScoringModelResource
from morpheus_pipelines.resources.warehouse import WarehouseResource


def build_resources() -> dict[str, Any]:
    """Every resource, from the environment as it is now (a variable set later needs the code
    location reloaded)."""
    return {
        "warehouse": WarehouseResource(
            database_url=env_or_default("MORPHEUS_DATABASE_URL"),
            home=env_or_default("MORPHEUS_HOME"),
            source_database_url=env_or_default("MORPHEUS_SOURCE_DATABASE_URL"),
            source_schema=env_or_default("MORPHEUS_SOURCE_SCHEMA"),
            reports_url=env_or_default("MORPHEUS_REPORTS_URL"),
            reports_public_url=env_or_default("MORPHEUS_REPORTS_PUBLIC_URL"),
        ),
        # The token: given only to the assets that call HubSpot (docs/observability.md).
        "hubspot": HubSpotResource(
            base_url=env_or_default("HUBSPOT_BASE_URL"),
            private_app_token=env_or_default("HUBSPOT_PRIVATE_APP_TOKEN"),
            request_timeout=load_settings().hubspot_request_timeout,
            retry_count=env_int_or_default("HUBSPOT_RETRY_COUNT"),
            requests_per_10s=env_int_or_default("HUBSPOT_REQUESTS_PER_10S"),
        ),
        "target_list": TargetListResource(list_id=env_or_default("HUBSPOT_TARGET_LIST_ID")),
        "domain_intelligence": DomainIntelligenceResource(
            base_url=env_or_default("DOMAIN_INTELLIGENCE_BASE_URL"),
            max_age_days=env_int_or_default("DOMAIN_INTELLIGENCE_MAX_AGE_DAYS"),
        ),
        "routing": TenantRoutingResource(
            apac_sales_emails=env_or_default("APAC_SALES_EMAILS"),
            forced_sales_owned_tenant_ids=env_or_default("FORCED_SALES_OWNED_TENANT_IDS"),
        ),
        "pipeline": PipelineSettingsResource(),
        "scoring": ScoringModelResource(),
        "notifier": NotifierResource(webhook_url=env_or_default("MORPHEUS_ALERT_WEBHOOK_URL")),
        # The token: given only to the assets that call the Graph API.
        "meta_graph": MetaGraphResource(
            base_url=env_or_default("META_GRAPH_BASE_URL"),
            api_version=env_or_default("META_GRAPH_API_VERSION"),
            access_token=env_or_default("META_ACCESS_TOKEN"),
        ),
        # The senders' credentials: given only to the delivery of messages.
        "message_senders": MessageSendersResource(
            graph_base_url=env_or_default("META_GRAPH_BASE_URL"),
            graph_api_version=env_or_default("META_GRAPH_API_VERSION"),
            access_token=env_or_default("META_ACCESS_TOKEN"),
            template_language=env_or_default("META_WHATSAPP_TEMPLATE_LANGUAGE"),
            smtp_url=env_or_default("MORPHEUS_SMTP_URL"),
            email_from=env_or_default("MORPHEUS_EMAIL_FROM"),
        ),
        # The managers' addresses and the channels' credentials: given only to the deliveries.
        "report_delivery": ReportDeliveryResource(
            recipients=env_or_default("MORPHEUS_REPORT_RECIPIENTS"),
            smtp_url=env_or_default("MORPHEUS_SMTP_URL"),
            email_from=env_or_default("MORPHEUS_EMAIL_FROM"),
            slack_webhook_url=env_or_default("MORPHEUS_SLACK_WEBHOOK_URL"),
        ),
        "ownership": OwnershipResource(
            subscription_id=env_or_default("MORPHEUS_SUBSCRIPTION_ID"),
            unassigned_list_id=env_or_default("HUBSPOT_UNASSIGNED_LIST_ID"),
        ),
    }
