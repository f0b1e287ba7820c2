"""A subscription's settings as ``morpheus subscription set`` reads them (docs/ownership.md,
"Setting up a portal"): each value from its text, or the reason it is refused.

Plain Python: no database. Whether a value is free (no other subscription has it) and whether
a rep may take leads are the step's to check.
"""

from __future__ import annotations

import hashlib
import re

import phonenumbers

# Larger than any BIGINT, the column's type.
_BIGINT = 2**63
# Facebook page and WhatsApp Business phone-number ids are numeric ids of the Graph API;
# anything longer than this is a paste of something else.
_MAX_SENDER_ID_DIGITS = 32


class SettingRefused(ValueError):
    """A value refused; the message says why, without repeating a secret."""


def hubspot_portal_id(text: str) -> int:
    """A HubSpot account (portal) id: a positive whole number that fits the column."""
    stripped = text.strip()
    if not re.fullmatch(r"-?[0-9]+", stripped):
        raise SettingRefused(f"{text!r} is not a whole number")
    portal_id = int(stripped)
    if portal_id <= 0:
        raise SettingRefused("a HubSpot portal id is positive")
    if portal_id >= _BIGINT:
        raise SettingRefused(f"{portal_id} is larger than any HubSpot portal id")
    return portal_id


def phone_region(text: str) -> str:
    """The region a phone number without a country code is read in: an ISO 3166 alpha-2
    code the ``phonenumbers`` library has numbering plans for (any case; stored upper)."""
    region = text.strip().upper()
    if region not in phonenumbers.SUPPORTED_REGIONS:
        raise SettingRefused(f"{text!r} is not a region phone numbers can be read in")
    return region


def rep_id(text: str) -> int:
    """A sales rep's id (``morpheus rep list``): a positive whole number (said as ``pool add
    --fallback-rep`` says it)."""
    stripped = text.strip()
    if not re.fullmatch(r"[0-9]+", stripped) or not 0 < int(stripped) < _BIGINT:
        raise SettingRefused("must be a positive integer")
    return int(stripped)


def sender_id(text: str, what: str) -> str:
    """A Facebook page id or a WhatsApp Business phone-number id (``what`` names which): the
    digits Meta sends in each webhook delivery, kept as text as Meta sends them."""
    stripped = text.strip()
    if not re.fullmatch(r"[0-9]+", stripped) or len(stripped) > _MAX_SENDER_ID_DIGITS:
        raise SettingRefused(f"{text!r} is not a {what} (digits only)")
    return stripped


def google_ads_key_hash(key: str) -> str:
    """What is stored of the key Google Ads sends as ``google_key`` in each lead-form
    webhook body: its SHA-256, hex. The key is a shared secret, like an API key: whoever has
    it can post leads as the advertiser, so neither the database nor a log may hold it. The
    hash is not salted so that a delivery finds its subscription by the hash of the key it
    carries (one indexed lookup, and the UNIQUE constraint keeps a key to one subscription).

    The key is hashed exactly as given: a key with spaces at its ends is refused, since a
    delivery's key would never match it if the spaces came from copying."""
    if not key.strip():
        raise SettingRefused("the key is blank")
    if key != key.strip():
        raise SettingRefused("the key starts or ends with a space; give it exactly as Google does")
    return hashlib.sha256(key.encode()).hexdigest()
