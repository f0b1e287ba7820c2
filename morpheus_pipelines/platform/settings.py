"""Every environment variable the product reads (README, "Configuration"), with its default.

This is the one place that knows variable names, defaults and forms. Dagster resources receive
the same values through ``dg.EnvVar`` (see ``resources/``); plain Python code (the CLI, the
embedded database, benchmarks) calls :func:`load_settings`, which reads them through
pydantic-settings and reports every malformed variable at once, by name, with the form it
expects (:class:`SettingsError`). Secrets are ``SecretStr``: ``.get_secret_value()`` where one
is used, ``<set>``/``<empty>`` wherever settings are printed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from sqlalchemy.engine import make_url

DEFAULT_TARGET_LIST_ID = "19544"

DEFAULTS: dict[str, str] = {
    "MORPHEUS_ENV": "development",
    "MORPHEUS_DATABASE_URL": "",
    "MORPHEUS_DAGSTER_DATABASE_URL": "",
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
    # 1 mounts the intake benchmark's floor endpoint (benchmarks/lead_intake_wrk.py); refused
    # with MORPHEUS_ENV=production.
    "MORPHEUS_INTAKE_BENCHMARK_FLOOR": "0",
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

# Values that must never be printed: repr() and errors show only whether they are set.
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

DATABASE_URL_FORM = "a PostgreSQL URL, postgresql+psycopg://user:password@host:port/database"

# The form a variable must have, where its type alone does not say it.
_EXPECTED = {
    "MORPHEUS_ENV": "development or production",
    "MORPHEUS_DATABASE_URL": DATABASE_URL_FORM,
    "MORPHEUS_DAGSTER_DATABASE_URL": DATABASE_URL_FORM,
    "MORPHEUS_SOURCE_DATABASE_URL": DATABASE_URL_FORM,
    "HUBSPOT_REQUEST_TIMEOUT": "a number of seconds greater than 0",
    "HUBSPOT_RETRY_COUNT": "a whole number, 0 or more",
    "DOMAIN_INTELLIGENCE_MAX_AGE_DAYS": "0 (never reuse) or a whole number of days",
    "MORPHEUS_LEAD_STALE_DAYS": "0 (never) or a whole number of days",
    "MORPHEUS_INTAKE_BENCHMARK_FLOOR": "0 or 1 (a boolean), and 0 with MORPHEUS_ENV=production",
}

_PASSWORD = re.compile(r"(://[^:/@]*:)[^@]*@")


def env(name: str, environ: Mapping[str, str] | None = None) -> str:
    """The value of a documented variable (README, "Configuration"), or its documented default."""
    source = os.environ if environ is None else environ
    value = source.get(name)
    return DEFAULTS[name] if value is None or value == "" else value


def mask_secret(value: str | SecretStr) -> str:
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    return "<set>" if value else "<empty>"


def mask_password(url: str) -> str:
    """``url`` with the password between ``user:`` and ``@`` replaced by ``***``; works on a
    URL too malformed to parse."""
    return _PASSWORD.sub(r"\1***@", url)


class SettingsError(ValueError):
    """Malformed variables, every one of them: ``problems`` holds ``(name, expected, got)``
    with secrets and passwords masked. The first line of the message names them all."""

    def __init__(self, problems: list[tuple[str, str, str]]) -> None:
        self.problems = problems
        names = ", ".join(name for name, _, _ in problems)
        lines = [f"{name}: expected {expected}, got {got}" for name, expected, got in problems]
        super().__init__("\n".join([f"malformed environment variables: {names}", *lines]))

    @property
    def lines(self) -> list[str]:
        """One line per bad variable, ``NAME: expected <form>, got '<value>'``."""
        return str(self).splitlines()[1:]


def _var(name: str, **constraints: Any) -> Any:
    return Field(default=DEFAULTS[name], validation_alias=name, **constraints)


def _secret(name: str) -> Any:
    return Field(default=SecretStr(DEFAULTS[name]), validation_alias=name, repr=False)


class Settings(BaseSettings):
    """A snapshot of the environment; secrets are ``SecretStr`` and never in ``repr``."""

    model_config = SettingsConfigDict(
        frozen=True,
        case_sensitive=True,
        env_ignore_empty=True,  # an empty variable means its default, as it always has
        validate_default=True,
        extra="ignore",
    )

    environment: Literal["development", "production"] = _var("MORPHEUS_ENV")
    database_url: str = _var("MORPHEUS_DATABASE_URL")
    dagster_database_url: str = _var("MORPHEUS_DAGSTER_DATABASE_URL")
    source_database_url: str = _var("MORPHEUS_SOURCE_DATABASE_URL")
    source_schema: str = _var("MORPHEUS_SOURCE_SCHEMA")
    home: Path = _var("MORPHEUS_HOME")
    hubspot_base_url: str = _var("HUBSPOT_BASE_URL")
    hubspot_target_list_id: str = _var("HUBSPOT_TARGET_LIST_ID")
    hubspot_request_timeout: float = _var("HUBSPOT_REQUEST_TIMEOUT", gt=0)
    hubspot_retry_count: int = _var("HUBSPOT_RETRY_COUNT", ge=0)
    hubspot_requests_per_10s: int = _var("HUBSPOT_REQUESTS_PER_10S")
    domain_intelligence_base_url: str = _var("DOMAIN_INTELLIGENCE_BASE_URL")
    domain_intelligence_max_age_days: int = _var("DOMAIN_INTELLIGENCE_MAX_AGE_DAYS", ge=0)
    forced_sales_owned_tenant_ids: str = _var("FORCED_SALES_OWNED_TENANT_IDS")
    alert_webhook_url: str = _var("MORPHEUS_ALERT_WEBHOOK_URL")
    phone_agent_batch_size: int = _var("PHONE_AGENT_BATCH_SIZE")
    subscription_id: str = _var("MORPHEUS_SUBSCRIPTION_ID")
    hubspot_unassigned_list_id: str = _var("HUBSPOT_UNASSIGNED_LIST_ID")
    intake_requests_per_minute: int = _var("MORPHEUS_INTAKE_REQUESTS_PER_MINUTE")
    intake_auth_failures_per_minute: int = _var("MORPHEUS_INTAKE_AUTH_FAILURES_PER_MINUTE")
    intake_origin_requests_per_minute: int = _var("MORPHEUS_INTAKE_ORIGIN_REQUESTS_PER_MINUTE")
    intake_benchmark_floor: bool = _var("MORPHEUS_INTAKE_BENCHMARK_FLOOR")
    public_url: str = _var("MORPHEUS_PUBLIC_URL")
    lead_stale_days: int = _var("MORPHEUS_LEAD_STALE_DAYS", ge=0)
    meta_graph_base_url: str = _var("META_GRAPH_BASE_URL")
    meta_graph_api_version: str = _var("META_GRAPH_API_VERSION")
    whatsapp_template_language: str = _var("META_WHATSAPP_TEMPLATE_LANGUAGE")
    email_from: str = _var("MORPHEUS_EMAIL_FROM")
    hubspot_private_app_token: SecretStr = _secret("HUBSPOT_PRIVATE_APP_TOKEN")
    hubspot_client_secret: SecretStr = _secret("HUBSPOT_CLIENT_SECRET")
    apac_sales_emails: SecretStr = _secret("APAC_SALES_EMAILS")
    meta_app_secret: SecretStr = _secret("META_APP_SECRET")
    meta_verify_token: SecretStr = _secret("META_VERIFY_TOKEN")
    meta_access_token: SecretStr = _secret("META_ACCESS_TOKEN")
    smtp_url: SecretStr = _secret("MORPHEUS_SMTP_URL")
    reports_url: str = _var("MORPHEUS_REPORTS_URL")
    reports_public_url: str = _var("MORPHEUS_REPORTS_PUBLIC_URL")
    report_recipients: SecretStr = _secret("MORPHEUS_REPORT_RECIPIENTS")
    slack_webhook_url: SecretStr = _secret("MORPHEUS_SLACK_WEBHOOK_URL")

    @field_validator("database_url", "dagster_database_url", "source_database_url")
    @classmethod
    def _postgres_url(cls, value: str) -> str:
        if value:
            try:
                url = make_url(value)
            except ValueError:  # ArgumentError is one too
                raise ValueError("unparseable") from None
            if not re.fullmatch(r"postgres(ql)?(\+\w+)?", url.drivername):
                raise ValueError("not postgresql")
            if url.port is not None and not 0 < url.port < 65536:
                raise ValueError("port out of range")
        return value

    @field_validator("intake_benchmark_floor")
    @classmethod
    def _no_floor_in_production(cls, value: bool, info: ValidationInfo) -> bool:
        # The floor endpoint takes unauthenticated writes: a production server never mounts it.
        if value and info.data.get("environment") == "production":
            raise ValueError("the benchmark's floor endpoint in production")
        return value

    @field_validator("home")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @field_validator(
        "hubspot_base_url", "domain_intelligence_base_url", "public_url", "meta_graph_base_url"
    )
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @field_validator("meta_graph_api_version")
    @classmethod
    def _bare_version(cls, value: str) -> str:
        return value.strip("/")

    def __repr__(self) -> str:
        shown, hidden = [], []
        for name, info in type(self).model_fields.items():
            value = getattr(self, name)
            if info.repr:
                shown.append(f"{name}={value!r}")
            else:
                hidden.append(f"{name}={mask_secret(value)}")
        return f"Settings({', '.join(shown + hidden)})"

    __str__ = __repr__

    @property
    def production(self) -> bool:
        """``MORPHEUS_ENV=production``: no embedded database, ever."""
        return self.environment == "production"

    @property
    def uses_embedded_database(self) -> bool:
        return not self.database_url


class _GivenSettings(Settings):
    """The same settings read from a mapping of its own instead of ``os.environ`` (a test's,
    a resource's configuration)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        **_: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def _shown(name: str, value: object) -> str:
    if name in SECRET_VARIABLES:
        return "a value that is not shown (a secret)"
    return repr(mask_password(str(value)))


def _expected(name: str, error: Any) -> str:
    if name in _EXPECTED:
        return _EXPECTED[name]
    if error["type"].startswith("int"):
        return "a whole number"
    if error["type"].startswith("float"):
        return "a number"
    return error["msg"].lower()


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read every documented variable from ``environ`` (default: the process's environment;
    an empty value is the default); raises :class:`SettingsError` naming every malformed one."""
    try:
        if environ is None:
            return Settings()
        return _GivenSettings(**{k: v for k, v in environ.items() if k in DEFAULTS and v != ""})
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            name = str(error["loc"][0])
            problems.append((name, _expected(name, error), _shown(name, error["input"])))
        raise SettingsError(problems) from None
