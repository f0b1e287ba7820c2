"""Every environment variable the product reads (README, "Configuration"), with its default.

This is the one place that knows variable names and defaults. Dagster resources receive
the same values through ``dg.EnvVar`` (see ``definitions.py``); plain Python code (the CLI,
the embedded database, benchmarks) calls :func:`load_settings`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

DEFAULT_TARGET_LIST_ID = "19544"

DEFAULTS: dict[str, str] = {
    "MORPHEUS_DATABASE_URL": "",
    "MORPHEUS_SOURCE_DATABASE_URL": "",
    "MORPHEUS_SOURCE_SCHEMA": "devops",
    "MORPHEUS_HOME": "./.morpheus",
    "HUBSPOT_BASE_URL": "https://api.hubapi.com",
    "HUBSPOT_PRIVATE_APP_TOKEN": "",
    "HUBSPOT_TARGET_LIST_ID": DEFAULT_TARGET_LIST_ID,
    "HUBSPOT_REQUEST_TIMEOUT": "30",
    "HUBSPOT_RETRY_COUNT": "3",
    "HUBSPOT_REQUESTS_PER_10S": "100",
    "DOMAIN_INTELLIGENCE_BASE_URL": "",
    "DOMAIN_INTELLIGENCE_MAX_AGE_DAYS": "30",
    "APAC_SALES_EMAILS": "",
    "FORCED_SALES_OWNED_TENANT_IDS": "",
    "MORPHEUS_ALERT_WEBHOOK_URL": "",
    "PHONE_AGENT_BATCH_SIZE": "50",
    "MORPHEUS_SUBSCRIPTION_ID": "",
    "HUBSPOT_UNASSIGNED_LIST_ID": "",
    "MORPHEUS_INTAKE_REQUESTS_PER_MINUTE": "6000",
    "MORPHEUS_INTAKE_AUTH_FAILURES_PER_MINUTE": "30",
    "MORPHEUS_INTAKE_ORIGIN_REQUESTS_PER_MINUTE": "600",
    "HUBSPOT_CLIENT_SECRET": "",
    "MORPHEUS_PUBLIC_URL": "",
    "MORPHEUS_LEAD_STALE_DAYS": "30",
    "META_APP_SECRET": "",
    "META_VERIFY_TOKEN": "",
    "META_GRAPH_BASE_URL": "https://graph.facebook.com",
    "META_GRAPH_API_VERSION": "v21.0",
    "META_ACCESS_TOKEN": "",
    "META_WHATSAPP_TEMPLATE_LANGUAGE": "en_US",
    "MORPHEUS_SMTP_URL": "",
    "MORPHEUS_EMAIL_FROM": "",
    # Empty: $MORPHEUS_HOME/reports (docs/reports.md, "Where reports go").
    "MORPHEUS_REPORTS_URL": "",
    "MORPHEUS_REPORTS_PUBLIC_URL": "",
    "MORPHEUS_REPORT_RECIPIENTS": "",
    "MORPHEUS_SLACK_WEBHOOK_URL": "",
}

# Values that must never be printed: repr() and logs show only whether they are set.
SECRET_VARIABLES = frozenset(
    {
        "HUBSPOT_PRIVATE_APP_TOKEN",
        "HUBSPOT_CLIENT_SECRET",
        "APAC_SALES_EMAILS",
        "META_APP_SECRET",
        "META_VERIFY_TOKEN",
        "META_ACCESS_TOKEN",
        # It may carry the mail server's password.
        "MORPHEUS_SMTP_URL",
        # Managers' addresses; the webhook URL is its own credential.
        "MORPHEUS_REPORT_RECIPIENTS",
        "MORPHEUS_SLACK_WEBHOOK_URL",
    }
)


def env(name: str, environ: Mapping[str, str] | None = None) -> str:
    """The value of a documented variable (README, "Configuration"), or its documented default."""
    source = os.environ if environ is None else environ
    value = source.get(name)
    return DEFAULTS[name] if value is None or value == "" else value


def mask_secret(value: str) -> str:
    return "<set>" if value else "<empty>"


def _secret() -> str:
    return field(default="", repr=False)


@dataclass(frozen=True)
class Settings:
    """A snapshot of the environment; secrets are excluded from ``repr``."""

    database_url: str
    source_database_url: str
    source_schema: str
    home: Path
    hubspot_base_url: str
    hubspot_target_list_id: str
    hubspot_request_timeout: float
    hubspot_retry_count: int
    hubspot_requests_per_10s: int
    domain_intelligence_base_url: str
    domain_intelligence_max_age_days: int
    forced_sales_owned_tenant_ids: str
    alert_webhook_url: str
    phone_agent_batch_size: int
    subscription_id: str
    hubspot_unassigned_list_id: str
    intake_requests_per_minute: int
    intake_auth_failures_per_minute: int
    intake_origin_requests_per_minute: int = 600
    public_url: str = ""
    lead_stale_days: int = 30
    meta_graph_base_url: str = DEFAULTS["META_GRAPH_BASE_URL"]
    meta_graph_api_version: str = DEFAULTS["META_GRAPH_API_VERSION"]
    whatsapp_template_language: str = DEFAULTS["META_WHATSAPP_TEMPLATE_LANGUAGE"]
    email_from: str = ""
    reports_url: str = ""
    reports_public_url: str = ""
    hubspot_private_app_token: str = _secret()
    hubspot_client_secret: str = _secret()
    apac_sales_emails: str = _secret()
    meta_app_secret: str = _secret()
    meta_verify_token: str = _secret()
    meta_access_token: str = _secret()
    smtp_url: str = _secret()
    report_recipients: str = _secret()
    slack_webhook_url: str = _secret()

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        hidden = ", ".join(
            f"{f.name}={mask_secret(getattr(self, f.name))}" for f in fields(self) if not f.repr
        )
        return f"Settings({shown}, {hidden})"

    __str__ = __repr__

    @property
    def uses_embedded_database(self) -> bool:
        return not self.database_url


def _number(name: str, environ: Mapping[str, str] | None, kind: type) -> int | float:
    raw = env(name, environ)
    try:
        return kind(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None


def _days(name: str, environ: Mapping[str, str] | None) -> int:
    days = int(_number(name, environ, int))
    if days < 0:
        raise ValueError(f"{name} must be 0 (never) or a number of days, got {days}")
    return days


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read every documented variable; raises ``ValueError`` naming a malformed number."""
    return Settings(
        database_url=env("MORPHEUS_DATABASE_URL", environ),
        source_database_url=env("MORPHEUS_SOURCE_DATABASE_URL", environ),
        source_schema=env("MORPHEUS_SOURCE_SCHEMA", environ),
        home=Path(env("MORPHEUS_HOME", environ)).expanduser().resolve(),
        hubspot_base_url=env("HUBSPOT_BASE_URL", environ).rstrip("/"),
        hubspot_target_list_id=env("HUBSPOT_TARGET_LIST_ID", environ),
        hubspot_request_timeout=float(_number("HUBSPOT_REQUEST_TIMEOUT", environ, float)),
        hubspot_retry_count=int(_number("HUBSPOT_RETRY_COUNT", environ, int)),
        hubspot_requests_per_10s=int(_number("HUBSPOT_REQUESTS_PER_10S", environ, int)),
        domain_intelligence_base_url=env("DOMAIN_INTELLIGENCE_BASE_URL", environ).rstrip("/"),
        domain_intelligence_max_age_days=int(
            _number("DOMAIN_INTELLIGENCE_MAX_AGE_DAYS", environ, int)
        ),
        forced_sales_owned_tenant_ids=env("FORCED_SALES_OWNED_TENANT_IDS", environ),
        alert_webhook_url=env("MORPHEUS_ALERT_WEBHOOK_URL", environ),
        phone_agent_batch_size=int(_number("PHONE_AGENT_BATCH_SIZE", environ, int)),
        subscription_id=env("MORPHEUS_SUBSCRIPTION_ID", environ),
        hubspot_unassigned_list_id=env("HUBSPOT_UNASSIGNED_LIST_ID", environ),
        intake_requests_per_minute=int(
            _number("MORPHEUS_INTAKE_REQUESTS_PER_MINUTE", environ, int)
        ),
        intake_auth_failures_per_minute=int(
            _number("MORPHEUS_INTAKE_AUTH_FAILURES_PER_MINUTE", environ, int)
        ),
        intake_origin_requests_per_minute=int(
            _number("MORPHEUS_INTAKE_ORIGIN_REQUESTS_PER_MINUTE", environ, int)
        ),
        public_url=env("MORPHEUS_PUBLIC_URL", environ).rstrip("/"),
        lead_stale_days=_days("MORPHEUS_LEAD_STALE_DAYS", environ),
        meta_graph_base_url=env("META_GRAPH_BASE_URL", environ).rstrip("/"),
        meta_graph_api_version=env("META_GRAPH_API_VERSION", environ).strip("/"),
        whatsapp_template_language=env("META_WHATSAPP_TEMPLATE_LANGUAGE", environ),
        email_from=env("MORPHEUS_EMAIL_FROM", environ),
        reports_url=env("MORPHEUS_REPORTS_URL", environ),
        reports_public_url=env("MORPHEUS_REPORTS_PUBLIC_URL", environ),
        report_recipients=env("MORPHEUS_REPORT_RECIPIENTS", environ),
        slack_webhook_url=env("MORPHEUS_SLACK_WEBHOOK_URL", environ),
        meta_access_token=env("META_ACCESS_TOKEN", environ),
        smtp_url=env("MORPHEUS_SMTP_URL", environ),
        hubspot_private_app_token=env("HUBSPOT_PRIVATE_APP_TOKEN", environ),
        hubspot_client_secret=env("HUBSPOT_CLIENT_SECRET", environ),
        apac_sales_emails=env("APAC_SALES_EMAILS", environ),
        meta_app_secret=env("META_APP_SECRET", environ),
        meta_verify_token=env("META_VERIFY_TOKEN", environ),
    )
