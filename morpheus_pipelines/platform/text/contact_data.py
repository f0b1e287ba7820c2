"""A person's email address and phone number as every path stores and compares them
(docs/leads.md, "Contact data"): the intake API, the ad-platform webhooks and the warehouse's
matching all call these, so one person is one key wherever they came from.

* **Email**: checked and normalised by email-validator (syntax only: no DNS lookup on the
  request path), the domain in its ASCII (IDNA) form, then lower-cased whole, because HubSpot
  and every matcher here compare addresses case-insensitively. ``mailto:`` is dropped.
* **Phone**: parsed by libphonenumber with the subscription's default region for national
  numbers (``0412 345 678`` in AU), the trunk prefix written in brackets after a country code
  dropped as libphonenumber does (``+61 (0)4 1234 5678`` → ``+61412345678``), stored in
  E.164 with the extension kept apart; a number libphonenumber does not consider valid is
  refused.

Pure: no Dagster, no database.
"""

from __future__ import annotations

from dataclasses import dataclass

import phonenumbers
from email_validator import EmailNotValidError, validate_email


class InvalidContactData(ValueError):
    """An email or phone that cannot be stored; the message says why, for the sender."""


@dataclass(frozen=True)
class Phone:
    """A phone number in E.164 and its extension (``None`` without one)."""

    e164: str
    extension: str | None = None


def normalise_email_address(value: str | None) -> str | None:
    """The stored form of an address, ``None`` for empty; :class:`InvalidContactData` when it
    is not one (``Ana@Exämple.COM`` → ``ana@xn--exmple-cua.com``)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text[:7].lower() == "mailto:":
        text = text[7:]
    try:
        checked = validate_email(text, check_deliverability=False)
    except EmailNotValidError as refused:
        raise InvalidContactData(f"not an email address: {refused}") from None
    # An internationalised local part has no ASCII form; its domain is still IDNA-encoded.
    if checked.ascii_email:
        return checked.ascii_email.lower()
    return f"{checked.local_part}@{checked.ascii_domain}".lower()


def normalise_phone_number(value: str | None, default_region: str | None = None) -> Phone | None:
    """The stored form of a number, ``None`` for empty; :class:`InvalidContactData` when it
    cannot be read or is not a valid number. A number without a country code needs
    ``default_region`` (ISO 3166 alpha-2, the subscription's)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.startswith("00"):  # the international prefix most of the world dials
        text = "+" + text[2:]
    try:
        number = phonenumbers.parse(text, (default_region or "").upper() or None)
    except phonenumbers.NumberParseException as refused:
        invalid_country = phonenumbers.NumberParseException.INVALID_COUNTRY_CODE
        if refused.error_type == invalid_country and text.startswith("+"):
            raise InvalidContactData("not a phone number: no country has that code") from None
        if refused.error_type == invalid_country:
            raise InvalidContactData(
                "a national number needs its country code (+65...) or the subscription's "
                "default region (`morpheus subscription set --default-region`)"
            ) from None
        reason = str(refused).split(") ", 1)[-1]  # "(1) The string supplied ..."
        raise InvalidContactData(f"not a phone number: {reason}") from None
    if not phonenumbers.is_valid_number(number):
        raise InvalidContactData("not a valid phone number for its country")
    e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    return Phone(e164, number.extension or None)


def phone_as_recorded(value: str | None, default_region: str | None = None) -> str | None:
    """A number another system already holds (a HubSpot contact's): in E.164 when
    libphonenumber reads it, else as written, trimmed. A CRM's record is never refused or
    dropped for its format; it just cannot match a number it does not equal."""
    try:
        phone = normalise_phone_number(value, default_region)
    except InvalidContactData:
        return value.strip() if value else None
    return None if phone is None else phone.e164
