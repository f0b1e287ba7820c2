"""The subscription settings' readers: what each takes, how it is kept, what it refuses."""

from __future__ import annotations

import hashlib

import phonenumbers
import pytest

from morpheus_pipelines.crm.rules.subscription_settings import (
    SettingRefused,
    google_ads_key_hash,
    hubspot_portal_id,
    phone_region,
    rep_id,
    sender_id,
)


@pytest.mark.parametrize(("text", "region"), [("SG", "SG"), ("ph", "PH"), (" au ", "AU")])
def test_a_region_is_any_case_and_kept_upper(text: str, region: str) -> None:
    assert phone_region(text) == region
    # what intake will do with it: read a number without a country code in that region
    assert phonenumbers.parse("9123 4567", phone_region(text)).country_code > 0


@pytest.mark.parametrize("text", ["XX", "", "SGP", "001", "S G", "UK"])
def test_a_region_phonenumbers_has_no_plan_for_is_refused(text: str) -> None:
    with pytest.raises(SettingRefused, match="is not a region phone numbers can be read in"):
        phone_region(text)


def test_sender_ids_are_digits_kept_as_text() -> None:
    assert sender_id(" 0104857600123 ", "Facebook page id") == "0104857600123"
    for bad in ("", "12a", "+6561234567", "1" * 33, "1 2"):
        with pytest.raises(SettingRefused, match=r"is not a Facebook page id \(digits only\)"):
            sender_id(bad, "Facebook page id")


def test_numbers() -> None:
    assert hubspot_portal_id(" 62515 ") == 62515 and rep_id("12") == 12
    for bad in ("0", "-1", "1.5", "x", str(2**63)):
        with pytest.raises(SettingRefused):
            hubspot_portal_id(bad)
        with pytest.raises(SettingRefused, match="must be a positive integer"):
            rep_id(bad)


def test_the_google_ads_key_is_kept_as_its_sha256_and_never_in_a_refusal() -> None:
    key = "gk-7Hq2-secret"
    assert google_ads_key_hash(key) == hashlib.sha256(key.encode()).hexdigest()
    assert google_ads_key_hash(key) != google_ads_key_hash(key + "x")
    for bad in ("   ", f"{key} ", f"\t{key}"):
        with pytest.raises(SettingRefused) as refused:
            google_ads_key_hash(bad)
        assert key not in str(refused.value)
