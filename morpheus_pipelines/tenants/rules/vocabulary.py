"""The domain's words, each defined once: buckets, routing rules, match methods, priorities,
snapshot statuses and source types (docs/pipeline.md). Models, rules, repositories and
reports use these; the string values are what the tables store."""

from __future__ import annotations

from enum import StrEnum


class Bucket(StrEnum):
    """The two mutually exclusive tenant tables (``tenant_bucket``)."""

    ACTIVE = "active"  # apac_active_tenants: what reporting reads
    SALES_OWNED = "sales_owned"  # apac_sales_owned_tenants: never reported


class RoutingRule(StrEnum):
    """Why a tenant of a partition is where it is (``routing_rule``), in precedence order."""

    FORCED_SALES_OWNED = "forced_sales_owned"
    HUBSPOT_TARGET_ACCOUNT = "hubspot_target_account"
    APAC_SALES_OWNER = "apac_sales_owner"
    DEFAULT_ACTIVE = "default_active"
    REJECTED = "rejected"  # a candidate row that cannot be routed (e.g. a blank id)
    RETIRED = "retired"  # a bucket row the partition no longer selects


class MatchMethod(StrEnum):
    """How a tenant matched a HubSpot target company, in matching order."""

    PORTAL_ID = "portal_id"
    ACCOUNT_ID = "account_id"
    EMAIL_DOMAIN = "email_domain"
    OFFICIAL_WEBSITE = "official_website"


class Priority(StrEnum):
    """Final priority, P0 highest. P0 is never scored: only the HubSpot override sets it."""

    P0 = "P0"
    P1 = "P1"
    P2 = "P2"
    P3 = "P3"


class SnapshotStatus(StrEnum):
    """The HubSpot snapshot a run used: refreshed by the run, an older one, or none."""

    FRESH = "fresh"
    STALE = "stale"
    UNAVAILABLE = "unavailable"


class SourceType(StrEnum):
    """How a tenant was selected for a partition."""

    ACTIVE = "active"  # an active candidate (current state)
    SIGNUP = "signup"  # signed up on the partition's CST day


def values(vocabulary: type[StrEnum]) -> tuple[str, ...]:
    """The stored strings of a vocabulary, in definition order."""
    return tuple(member.value for member in vocabulary)
