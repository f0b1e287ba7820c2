"""Contact data as every path stores it: libphonenumber for numbers, email-validator for
addresses (docs/leads.md, "Contact data")."""

from __future__ import annotations

import phonenumbers
import pytest
from hypothesis import given
from hypothesis import strategies as st

from morpheus_pipelines.crm.rules.lead_intake import (
    InvalidContact,
    normalise_email,
    normalise_phone,
)
from morpheus_pipelines.platform.text import normalise
from morpheus_pipelines.platform.text.contact_data import (
    InvalidContactData,
    Phone,
    normalise_email_address,
    normalise_phone_number,
)


@pytest.mark.parametrize(
    ("written", "region", "stored"),
    [
        ("+61 (0)4 1234 5678", None, Phone("+61412345678")),  # the trunk prefix in brackets
        ("+44 (0)20 7946 0018", None, Phone("+442079460018")),
        ("0412 345 678", "AU", Phone("+61412345678")),  # national, the subscription's region
        ("0412 345 678", "au", Phone("+61412345678")),
        ("021 123 4567", "NZ", Phone("+64211234567")),
        ("0065 (9123)-4567", None, Phone("+6591234567")),
        ("+65 9123 4567", "AU", Phone("+6591234567")),  # a country code beats the region
        ("+61 2 9876 5432 ext. 123", None, Phone("+61298765432", "123")),
        ("tel:+61-2-9876-5432", None, Phone("+61298765432")),
    ],
)
def test_numbers_are_stored_as_libphonenumber_reads_them(
    written: str, region: str | None, stored: Phone
) -> None:
    assert normalise_phone_number(written, region) == stored


@pytest.mark.parametrize(
    ("written", "region", "reason"),
    [
        ("0412 345 678", None, "country code"),  # national, and no region to read it in
        ("+61 4 1234", None, "not a valid phone number"),  # too short for AU mobiles
        ("+999 1234 5678", None, "not a phone number"),
        ("call me", None, "not a phone number"),
        ("+65 1234 5678", None, "not a valid phone number"),  # no SG number starts with 1
    ],
)
def test_unreadable_or_invalid_numbers_are_refused(
    written: str, region: str | None, reason: str
) -> None:
    with pytest.raises(InvalidContactData, match=reason):
        normalise_phone_number(written, region)


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("  Mailto:Ana@Example.COM ", "ana@example.com"),
        ("ana@exämple.com", "ana@xn--exmple-cua.com"),
        ("Ana@XN--EXMPLE-CUA.com", "ana@xn--exmple-cua.com"),
        ("ana.o'neil+leads@example.com.au", "ana.o'neil+leads@example.com.au"),
    ],
)
def test_addresses_are_stored_as_email_validator_normalises_them(written: str, stored: str) -> None:
    assert normalise_email_address(written) == stored


@pytest.mark.parametrize(
    "written",
    [
        "a@b..com",
        "ana@example.com.",
        "ana@-x.com",
        "ana@",
        "@example.com",
        "ana example@x.com",
        "ana@exam_ple.com",
        "not-an-email",
    ],
)
def test_addresses_that_are_not_addresses_are_refused(written: str) -> None:
    with pytest.raises(InvalidContactData, match="not an email address"):
        normalise_email_address(written)


def test_empty_contact_fields_are_absent_not_refused() -> None:
    assert normalise_email_address("  ") is None and normalise_phone_number("", "AU") is None
    assert normalise_email_address(None) is None and normalise_phone_number(None) is None


def test_the_intake_names_the_field_it_refuses() -> None:
    with pytest.raises(InvalidContact) as refused:
        normalise_email("a@b..com")
    assert refused.value.field == "contact.email" and "contact.email" in str(refused.value)
    with pytest.raises(InvalidContact) as refused:
        normalise_phone("+61 4 1234", field="phone_number")
    assert refused.value.field == "phone_number"


def test_the_warehouse_matcher_and_the_intake_agree_on_an_internationalised_address() -> None:
    written = " Ana@Exämple.COM"
    assert normalise.normalise_email(written) == normalise_email_address(written)


_REGIONS = sorted(r for r in phonenumbers.SUPPORTED_REGIONS if r not in {"001"})


@given(st.sampled_from(_REGIONS), st.sampled_from(["MOBILE", "FIXED_LINE"]))
def test_every_regions_example_number_round_trips(region: str, kind: str) -> None:
    """A number written nationally in its region, or internationally from anywhere, is stored
    as the same E.164; storing the stored form again changes nothing."""
    number_type = getattr(phonenumbers.PhoneNumberType, kind)
    example = phonenumbers.example_number_for_type(region, number_type)
    if example is None or not phonenumbers.is_valid_number(example):
        return  # the region has no such example in libphonenumber's metadata
    e164 = phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.E164)
    national = phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.NATIONAL)
    international = phonenumbers.format_number(
        example, phonenumbers.PhoneNumberFormat.INTERNATIONAL
    )
    assert normalise_phone_number(national, region) == Phone(e164)
    assert normalise_phone_number(international, "AU") == Phone(e164)
    assert normalise_phone_number("00" + e164[1:]) == Phone(e164)
    assert normalise_phone_number(e164) == Phone(e164)


_LABEL = st.from_regex(r"[a-z][a-z0-9]{0,10}", fullmatch=True)
_IDN_LABEL = st.text(alphabet="abcäöüéñçå", min_size=1, max_size=10)


@given(
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,20}[A-Za-z0-9]", fullmatch=True),
    st.one_of(_LABEL, _IDN_LABEL),
    st.sampled_from(["com", "com.au", "co.nz", "de"]),
)
def test_a_stored_address_is_its_own_stored_form(local: str, label: str, suffix: str) -> None:
    written = f"{local}@{label}.{suffix}"
    try:
        stored = normalise_email_address(written)
    except InvalidContactData:
        return  # e.g. ".." in the local part: refused, which the examples above pin
    assert stored is not None and stored.isascii() and stored == stored.lower()
    assert normalise_email_address(stored) == stored
    assert normalise_email_address(written.upper()) == stored
    assert normalise.normalise_email(written) == stored
