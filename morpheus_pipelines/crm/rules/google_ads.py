"""Google Ads lead-form deliveries, as rules (docs/senders.md, "Google Ads"): what a delivery
must hold and what it is to us.

Google posts one lead per request: ``lead_id``, the form's answers as ``user_column_data``
(``[{"column_id": "EMAIL", "string_value": "…", "column_name": "User Email"}, …]``), the
campaign, form, ad group and creative ids, ``is_test`` for the "send test data" button, and
``google_key``, the secret the advertiser typed into the form's webhook settings, which is the
only proof a delivery is Google's. Its SHA-256 picks the subscription
(:func:`~morpheus_pipelines.crm.rules.subscription_settings.google_ads_key_hash`).

Pure: no HTTP, no database.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from morpheus_pipelines.crm.rules.delivery_json import mapping_value, text_value

GOOGLE_ADS_SOURCE = "google_ads"
MAX_KEY_LENGTH = 500

# Google's column ids for the contact; every other column goes to the lead's payload.
_EMAIL_COLUMNS = ("EMAIL", "WORK_EMAIL")
_PHONE_COLUMNS = ("PHONE_NUMBER", "WORK_PHONE")
_IDS = ("campaign_id", "form_id", "adgroup_id", "creative_id", "asset_group_id")


class InvalidLeadForm(ValueError):
    """A delivery we cannot store; ``field`` names where."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class GoogleAdsLead:
    google_key: str
    lead_id: str
    is_test: bool
    email: str | None = None
    phone: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    ids: dict[str, str] = field(default_factory=dict)
    gcl_id: str | None = None
    other: dict[str, str] = field(default_factory=dict)

    def campaign_ids(self) -> list[str]:
        """What routing rules may name: the campaign and its ad group."""
        return [self.ids[name] for name in ("campaign_id", "adgroup_id") if name in self.ids]

    def payload(self) -> dict[str, Any]:
        return {
            "google_ads": {
                **self.ids,
                "gcl_id": self.gcl_id,
                "is_test": self.is_test,
                "answers": self.other,
            }
        }


def google_key_of(body: bytes) -> str | None:
    """The key alone, read before anything else is checked: an unsigned body gets a 401
    whatever else is wrong with it."""
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return None
    key = document.get("google_key") if isinstance(document, dict) else None
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH:
        return None
    return key


def parse_lead_form(body: bytes) -> GoogleAdsLead:
    """The lead of a delivery whose key was found valid; :class:`InvalidLeadForm` naming the
    field when it cannot be stored."""
    document = json.loads(body)
    lead_id = text_value(document.get("lead_id"))
    if lead_id is None or len(lead_id) > 200:
        raise InvalidLeadForm("lead_id", "a Google Ads lead has a lead_id")
    is_test = document.get("is_test", False)
    if not isinstance(is_test, bool):
        raise InvalidLeadForm("is_test", "is_test is true or false")
    columns = document.get("user_column_data", [])
    if not isinstance(columns, list):
        raise InvalidLeadForm("user_column_data", "user_column_data is a list of columns")
    answers: dict[str, str] = {}
    for position, column in enumerate(columns):
        column_id = text_value(mapping_value(column).get("column_id"))
        value = mapping_value(column).get("string_value")
        if column_id is None:
            raise InvalidLeadForm(f"user_column_data.{position}.column_id", "a column has an id")
        if value is not None and not isinstance(value, str):
            raise InvalidLeadForm(
                f"user_column_data.{position}.string_value", "a column's value is text"
            )
        if value and value.strip():
            answers.setdefault(column_id.upper(), value.strip())
    first, last = answers.get("FIRST_NAME"), answers.get("LAST_NAME")
    if "FULL_NAME" in answers and not (first or last):
        first, _, rest = answers["FULL_NAME"].partition(" ")
        last = rest.strip() or None
    contact_columns = {*_EMAIL_COLUMNS, *_PHONE_COLUMNS, "FIRST_NAME", "LAST_NAME", "FULL_NAME"}
    return GoogleAdsLead(
        google_key=str(document["google_key"]),
        lead_id=lead_id,
        is_test=is_test,
        email=next((answers[c] for c in _EMAIL_COLUMNS if c in answers), None),
        phone=next((answers[c] for c in _PHONE_COLUMNS if c in answers), None),
        first_name=first,
        last_name=last,
        ids={name: text for name in _IDS if (text := text_value(document.get(name))) is not None},
        gcl_id=text_value(document.get("gcl_id")),
        other={c: v for c, v in answers.items() if c not in contact_columns},
    )
