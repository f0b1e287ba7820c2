"""Subscriptions (workspaces): every CRM row belongs to one (docs/ownership.md)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import Subscription
from morpheus_pipelines.crm.rules import subscription_settings as read
from morpheus_pipelines.crm.steps.portal_setup import SetupRefused, assignable_rep
from morpheus_pipelines.crm.store import CrmStore


def create_subscription(session: Session, name: str) -> uuid.UUID:
    """A new workspace named ``name``; its id is what ``MORPHEUS_SUBSCRIPTION_ID`` takes."""
    if not name.strip():
        raise ValueError("a subscription needs a non-empty name")
    subscription = Subscription(name=name.strip())
    session.add(subscription)
    session.flush()
    return subscription.id


def list_subscriptions(session: Session) -> list[tuple[uuid.UUID, str]]:
    statement = select(Subscription.id, Subscription.name).order_by(Subscription.createdAt)
    return [(row.id, row.name) for row in session.execute(statement)]


def subscription_exists(url: str, subscription_id: uuid.UUID) -> bool:
    from morpheus_pipelines.db.session import get_session

    with get_session(url) as session:
        return session.get(Subscription, subscription_id) is not None


class SubscriptionRefused(ValueError):
    """A subscription setting refused; ``option`` names the command-line option it came from."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


@dataclass(frozen=True)
class Setting:
    """One setting of ``morpheus subscription set``: its option, the column it is kept in, how
    its text is read, and, for a UNIQUE column, what to say when another subscription has the
    value (``{value}`` and ``{holder}`` filled in; a secret's names no value)."""

    option: str
    column: str
    read: Callable[[str], Any]
    taken: str | None = None


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "--hubspot-portal-id",
        "hubspotPortalId",
        read.hubspot_portal_id,
        "portal {value} belongs to {holder}",
    ),
    Setting("--default-region", "defaultRegion", read.phone_region),
    Setting("--fallback-rep", "fallbackSalesRepId", read.rep_id),
    Setting(
        "--meta-page-id",
        "metaPageId",
        lambda text: read.sender_id(text, "Facebook page id"),
        "Facebook page {value} belongs to {holder}",
    ),
    Setting(
        "--whatsapp-phone-number-id",
        "whatsappPhoneNumberId",
        lambda text: read.sender_id(text, "WhatsApp phone-number id"),
        "WhatsApp phone number {value} belongs to {holder}",
    ),
    Setting(
        "--google-ads-key",
        "googleAdsKeyHash",
        read.google_ads_key_hash,
        "the key is already set on {holder}",
    ),
)
_BY_OPTION = {setting.option: setting for setting in SETTINGS}
# The UNIQUE constraints' names (the naming convention's) → the setting they keep unique.
_BY_CONSTRAINT = {f"uq_subscriptions_{s.column}": s for s in SETTINGS if s.taken is not None}


def subscription_settings(session: Session, subscription_id: uuid.UUID) -> dict[str, Any] | None:
    """The subscription's id, name and settings, or None when it does not exist. Of the
    Google Ads key only whether one is set: the hash is not for showing either."""
    subscription = session.get(Subscription, subscription_id)
    if subscription is None:
        return None
    return {
        "id": subscription.id,
        "name": subscription.name,
        "hubspot_portal_id": subscription.hubspotPortalId,
        "default_region": subscription.defaultRegion,
        "fallback_rep_id": subscription.fallbackSalesRepId,
        "meta_page_id": subscription.metaPageId,
        "whatsapp_phone_number_id": subscription.whatsappPhoneNumberId,
        "google_ads_key_set": subscription.googleAdsKeyHash is not None,
    }


def change_settings(session: Session, subscription_id: uuid.UUID, given: Mapping[str, str]) -> None:
    """Set the settings ``given`` (option → its text, as typed; ``""`` clears the setting),
    all or none: every value is read and checked before anything is written, and a value
    another subscription has (its UNIQUE constraint) refuses the whole change. Setting what
    is already set changes nothing."""
    unknown = set(given) - set(_BY_OPTION)
    if unknown:
        raise ValueError(f"not a subscription setting: {', '.join(sorted(unknown))}")
    if not given:
        options = [setting.option for setting in SETTINGS]
        raise SubscriptionRefused(
            SETTINGS[0].option,
            f"nothing to set: give {', '.join(options[:-1])} or {options[-1]}",
        )
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        if setting.option not in given:
            continue
        text = given[setting.option]
        try:
            values[setting.option] = None if text == "" else setting.read(text)
        except read.SettingRefused as refused:
            raise SubscriptionRefused(setting.option, str(refused)) from None
    subscription = session.get(Subscription, subscription_id, with_for_update=True)
    if subscription is None:
        raise SubscriptionRefused("SUBSCRIPTION", f"subscription {subscription_id} does not exist")
    rep = values.get("--fallback-rep")
    if rep is not None:
        try:
            assignable_rep(CrmStore(session), subscription_id, "--fallback-rep", rep)
        except SetupRefused as refused:
            raise SubscriptionRefused(refused.option, str(refused)) from None
    try:
        # A savepoint, so that a refused value leaves the subscription as it was for the
        # message's own query below.
        with session.begin_nested():
            for option, value in values.items():
                setattr(subscription, _BY_OPTION[option].column, value)
            session.flush()
    except IntegrityError as error:
        # The UNIQUE constraints decide, so two subscriptions set at the same moment cannot
        # both take a value; the error itself is not passed on (it quotes the value).
        setting = _BY_CONSTRAINT.get(getattr(error.orig.diag, "constraint_name", None) or "")
        if setting is None:
            raise
        value = values[setting.option]
        holder = session.scalar(
            select(Subscription.id).where(
                getattr(Subscription, setting.column) == value, Subscription.id != subscription_id
            )
        )
        named = f"subscription {holder}" if holder else "another subscription"
        message = (setting.taken or "").format(value=value, holder=named)
        raise SubscriptionRefused(setting.option, message) from None
