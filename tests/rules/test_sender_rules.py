"""The ad-platform and WhatsApp deliveries as rules: the handshake, the signature, reading a
delivery without losing the rest of it, a lead's answers as a contact."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from morpheus_pipelines.crm.rules.contact_retrieval import (
    MAX_ATTEMPTS,
    contact_columns,
    next_attempt_at,
)
from morpheus_pipelines.crm.rules.google_ads import InvalidLeadForm, google_key_of, parse_lead_form
from morpheus_pipelines.crm.rules.meta_webhooks import (
    InvalidDelivery,
    SignatureRefused,
    lead_answers,
    parse_delivery,
    verification_challenge,
    verify_signature,
)

SECRET = "app-secret"


def _sign(body: bytes) -> str:
    return "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


def test_the_handshake_needs_our_token_the_subscribe_mode_and_a_challenge() -> None:
    assert verification_challenge("tok", "subscribe", "tok", "42") == "42"
    assert verification_challenge("tok", "subscribe", "nope", "42") is None
    assert verification_challenge("tok", "unsubscribe", "tok", "42") is None
    assert verification_challenge("tok", "subscribe", "tok", "") is None
    assert verification_challenge("", "subscribe", "", "42") is None  # nothing configured


@given(st.binary(max_size=300))
def test_a_body_verifies_with_its_own_signature_and_no_other(body: bytes) -> None:
    verify_signature(SECRET, body, _sign(body))
    with pytest.raises(SignatureRefused):
        verify_signature(SECRET, body + b" ", _sign(body))
    with pytest.raises(SignatureRefused):
        verify_signature("another-secret", body, _sign(body))


@pytest.mark.parametrize(
    ("header", "reason"),
    [(None, "missing_signature"), ("", "missing_signature"), ("sha1=abc", "invalid_signature")],
)
def test_a_signature_header_that_is_not_one_is_refused(header: str | None, reason: str) -> None:
    with pytest.raises(SignatureRefused, match=reason):
        verify_signature(SECRET, b"{}", header)


def test_no_secret_refuses_every_delivery() -> None:
    with pytest.raises(SignatureRefused, match="not_configured"):
        verify_signature("", b"{}", _sign(b"{}"))


def _envelope(*changes: object) -> bytes:
    return json.dumps({"object": "page", "entry": [{"id": "1", "changes": list(changes)}]}).encode()


def test_a_delivery_is_read_change_by_change_and_the_unreadable_ones_are_counted() -> None:
    body = _envelope(
        {"field": "leadgen", "value": {"leadgen_id": 44, "page_id": "1", "ad_id": "9"}},
        {"field": "leadgen", "value": {"page_id": "1"}},
        {"field": "feed", "value": {}},
        "garbage",
        {
            "field": "messages",
            "value": {
                "messaging_product": "whatsapp",
                "metadata": {"phone_number_id": "77"},
                "messages": [
                    {"from": "6591234567", "id": "wamid.1", "timestamp": "1700000000",
                     "type": "text", "text": {"body": "hi"}},
                    {"from": "+not-a-number", "id": "wamid.2", "timestamp": "1"},
                ],
                "statuses": [
                    {"id": "wamid.9", "status": "failed", "timestamp": "1700000001",
                     "errors": [{"code": 131047, "title": "Re-engagement message",
                                 "error_data": {"details": "more than 24 hours"}}]},
                    {"id": "wamid.8", "status": "exploded", "timestamp": "1"},
                ],
            },
        },
    )  # fmt: skip
    delivery = parse_delivery(body)
    assert [lead.leadgen_id for lead in delivery.leadgen] == ["44"]
    assert delivery.leadgen[0].campaign_ids() == ["9"]
    assert [(m.from_e164, m.text) for m in delivery.messages] == [("+6591234567", "hi")]
    (failed,) = delivery.statuses
    assert (failed.error_code, failed.error_reason) == ("131047", "more than 24 hours")
    assert delivery.skipped == {
        "unreadable_leadgen": 1,
        "field_feed": 1,
        "unreadable_change": 1,
        "unreadable_whatsapp_message": 1,
        "unreadable_whatsapp_status": 1,
    }


@pytest.mark.parametrize(
    ("body", "field"), [(b"nope", "body"), (b"[1]", "body"), (b'{"entry": {}}', "entry")]
)
def test_a_body_that_is_not_a_delivery_names_where(body: bytes, field: str) -> None:
    with pytest.raises(InvalidDelivery) as refused:
        parse_delivery(body)
    assert refused.value.field == field


def test_a_leads_answers_are_its_contact_and_the_rest_is_kept() -> None:
    answers = lead_answers(
        [
            {"name": "email", "values": ["Ana@Example.com"]},
            {"name": "full_name", "values": ["Ana Maria Lima"]},
            {"name": "phone_number", "values": ["0412 345 678"]},
            {"name": "budget", "values": ["10k"]},
            {"name": "ignored", "values": "not a list"},
        ]
    )
    assert (answers.first_name, answers.last_name) == ("Ana", "Maria Lima")
    columns = contact_columns(answers, "AU")
    assert (columns["email"], columns["phone"]) == ("ana@example.com", "+61412345678")
    assert columns["answers"] == {"budget": ["10k"], "ignored": []}


def test_an_answer_that_is_no_email_or_phone_fills_nothing_and_is_kept() -> None:
    columns = contact_columns(lead_answers([{"name": "email", "values": ["a@b..com"]},
                                            {"name": "phone_number", "values": ["soon"]}]),
                              None)  # fmt: skip
    assert columns["email"] is None and columns["phone"] is None
    assert columns["answers"] == {"email": ["a@b..com"], "phone_number": ["soon"]}


@given(st.integers(min_value=1, max_value=20))
def test_retries_back_off_and_stop_after_the_last_attempt(attempts: int) -> None:
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 1, 1, tzinfo=UTC)
    after = next_attempt_at(attempts, now)
    if attempts >= MAX_ATTEMPTS:
        assert after is None
    else:
        assert after is not None and timedelta(minutes=1) <= after - now <= timedelta(hours=1)
        later = next_attempt_at(attempts + 1, now)
        assert later is None or later >= after


def test_the_google_key_is_read_before_anything_else() -> None:
    assert google_key_of(b'{"google_key": "k", "lead_id": null}') == "k"
    assert google_key_of(b"not json") is None and google_key_of(b'{"google_key": 7}') is None


def test_a_lead_form_maps_google_columns_to_the_contact() -> None:
    lead = parse_lead_form(
        json.dumps(
            {
                "google_key": "k",
                "lead_id": "L1",
                "campaign_id": 5,
                "adgroup_id": 6,
                "user_column_data": [
                    {"column_id": "WORK_EMAIL", "string_value": "w@acme.com"},
                    {"column_id": "FIRST_NAME", "string_value": "Ana"},
                    {"column_id": "POSTAL_CODE", "string_value": "2000"},
                ],
            }
        ).encode()
    )
    assert (lead.email, lead.first_name, lead.is_test) == ("w@acme.com", "Ana", False)
    assert lead.campaign_ids() == ["5", "6"] and lead.other == {"POSTAL_CODE": "2000"}
    with pytest.raises(InvalidLeadForm, match="column's value"):
        parse_lead_form(
            b'{"google_key": "k", "lead_id": "L", '
            b'"user_column_data": [{"column_id": "EMAIL", "string_value": 5}]}'
        )
