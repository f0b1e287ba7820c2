"""The HubSpot webhook rules (docs/hubspot-webhooks.md): the v3 signature, its time window,
the URI it covers, and what a delivery must hold. Pure: no server, no database."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta

import pytest

from morpheus_pipelines.crm.rules.hubspot_webhooks import (
    EventAction,
    InvalidDelivery,
    SignatureRefused,
    action_of,
    in_applying_order,
    opted_out,
    owner_value,
    parse_delivery,
    signed_uri,
    v3_signature,
    verify_signature,
)

SECRET = "yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy"
NOW = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
URI = "https://crm.example.com/v1/webhooks/hubspot"
BODY = b'[{"eventId":1,"portalId":62515}]'


def _stamp(at: datetime) -> str:
    return str(int(at.timestamp() * 1000))


def _verify(**overrides) -> None:
    stamp = overrides.pop("timestamp", _stamp(NOW))
    values = {
        "method": "POST",
        "uri": URI,
        "body": BODY,
        "signature": v3_signature(SECRET, "POST", URI, BODY, stamp or ""),
        "timestamp": stamp,
        "now": NOW,
    }
    verify_signature(overrides.pop("secret", SECRET), **(values | overrides))


def test_the_signature_is_base64_hmac_sha256_of_method_uri_body_and_timestamp() -> None:
    stamp = _stamp(NOW)
    by_hand = base64.b64encode(
        hmac.new(
            SECRET.encode(), f"POST{URI}{BODY.decode()}{stamp}".encode(), hashlib.sha256
        ).digest()
    ).decode()
    assert v3_signature(SECRET, "POST", URI, BODY, stamp) == by_hand
    _verify()  # and it is accepted


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"signature": None}, "missing_signature"),
        ({"timestamp": None}, "missing_signature"),
        ({"signature": "A" * 44}, "invalid_signature"),
        ({"body": BODY + b" "}, "invalid_signature"),  # one byte of the body changed
        ({"uri": URI + "?x=1"}, "invalid_signature"),
        ({"method": "PUT"}, "invalid_signature"),
        ({"secret": "another-secret"}, "invalid_signature"),
        ({"secret": ""}, "webhook_secret_not_configured"),
        ({"timestamp": "yesterday"}, "invalid_timestamp"),
    ],
)
def test_a_delivery_not_signed_by_the_secret_is_refused(change: dict, reason: str) -> None:
    with pytest.raises(SignatureRefused) as refused:
        _verify(**change)
    assert refused.value.reason == reason


def test_a_timestamp_older_than_five_minutes_is_refused_even_with_a_valid_signature() -> None:
    _verify(now=NOW + timedelta(minutes=4, seconds=59))  # the same delivery, within the window
    with pytest.raises(SignatureRefused) as stale:
        _verify(now=NOW + timedelta(minutes=5, seconds=1))
    assert stale.value.reason == "stale_timestamp"


def test_a_timestamp_too_far_in_the_future_is_refused() -> None:
    _verify(now=NOW - timedelta(minutes=4))  # a sender's clock a little ahead
    with pytest.raises(SignatureRefused) as future:
        _verify(now=NOW - timedelta(minutes=6))
    assert future.value.reason == "timestamp_in_the_future"


def test_the_uri_is_the_public_url_with_path_and_query_when_set_else_the_requests_own() -> None:
    own = "http://10.0.0.5:8080/v1/webhooks/hubspot?a=1"
    assert signed_uri(None, "/v1/webhooks/hubspot", "a=1", own) == own
    assert signed_uri("", "/v1/webhooks/hubspot", "", own) == own
    assert (
        signed_uri("https://crm.example.com/", "/v1/webhooks/hubspot", "a=1", own)
        == "https://crm.example.com/v1/webhooks/hubspot?a=1"
    )
    assert (
        signed_uri("https://crm.example.com", "/v1/webhooks/hubspot", "", own)
        == "https://crm.example.com/v1/webhooks/hubspot"
    )


def _event(**overrides) -> dict:
    event = {
        "eventId": 100,
        "subscriptionId": 7,
        "portalId": 62515,
        "appId": 54321,
        "occurredAt": 1_764_000_000_000,
        "subscriptionType": "contact.propertyChange",
        "attemptNumber": 0,
        "objectId": 501,
        "propertyName": "hubspot_owner_id",
        "propertyValue": "102",
        "changeSource": "CRM_UI",
    }
    return event | overrides


def _body(*events) -> bytes:
    return json.dumps(list(events)).encode()


def test_a_delivery_parses_into_its_events() -> None:
    [event] = parse_delivery(_body(_event()))
    assert (event.event_id, event.portal_id, event.object_id) == (100, 62515, 501)
    assert event.occurred_at == datetime.fromtimestamp(1_764_000_000, UTC)
    assert (event.property_name, event.property_value) == ("hubspot_owner_id", "102")
    assert event.payload["changeSource"] == "CRM_UI"
    assert action_of(event) is EventAction.SET_OWNER


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"not json", "body"),
        (b'{"eventId": 1}', "body"),
        (b"[]", "body"),
        (_body(*[_event(eventId=i) for i in range(1, 102)]), "body"),
        (_body(_event(), "x"), "[1]"),
        (_body(_event(eventId="1")), "[0].eventId"),
        (_body(_event(eventId=True)), "[0].eventId"),
        (_body(_event(portalId=0)), "[0].portalId"),
        (_body({k: v for k, v in _event().items() if k != "objectId"}), "[0].objectId"),
        (_body(_event(subscriptionType="")), "[0].subscriptionType"),
        (_body(_event(occurredAt="2026-12-04")), "[0].occurredAt"),
        (_body(_event(propertyValue=102)), "[0].propertyValue"),
        (_body(_event(subscriptionType="contact.merge")), "[0].mergedObjectIds"),
    ],
)
def test_a_malformed_delivery_is_refused_naming_the_field(body: bytes, field: str) -> None:
    with pytest.raises(InvalidDelivery) as refused:
        parse_delivery(body)
    assert refused.value.field == field


def test_a_hundred_events_is_the_most_a_delivery_holds() -> None:
    assert len(parse_delivery(_body(*[_event(eventId=i) for i in range(1, 101)]))) == 100


@pytest.mark.parametrize(
    ("kind", "name", "action"),
    [
        ("contact.propertyChange", "hubspot_owner_id", EventAction.SET_OWNER),
        ("contact.propertyChange", "call_assigned_to", EventAction.SET_CALL_ASSIGNED),
        ("contact.propertyChange", "hs_email_optout", EventAction.SET_OPT_OUT),
        ("contact.propertyChange", "firstname", EventAction.NONE),
        ("contact.deletion", None, EventAction.DELETE_CONTACT),
        ("contact.creation", None, EventAction.NONE),
        ("deal.propertyChange", "dealstage", EventAction.DEAL_CHANGE),
        ("deal.propertyChange", "hubspot_owner_id", EventAction.DEAL_CHANGE),
        ("deal.propertyChange", "amount", EventAction.NONE),
        ("company.propertyChange", "hubspot_owner_id", EventAction.NONE),
    ],
)
def test_what_each_event_asks_of_us(kind: str, name: str | None, action: EventAction) -> None:
    [event] = parse_delivery(_body(_event(subscriptionType=kind, propertyName=name)))
    assert action_of(event) is action


def test_a_merge_names_its_merged_and_surviving_contacts() -> None:
    merge = _event(
        subscriptionType="contact.merge",
        propertyName=None,
        propertyValue=None,
        objectId=501,
        primaryObjectId=501,
        mergedObjectIds=[777, 778],
    )
    [event] = parse_delivery(_body(merge))
    assert action_of(event) is EventAction.MERGE_CONTACTS
    assert event.merged_object_ids == [777, 778]
    assert event.surviving_object_id == 501
    [renamed] = parse_delivery(_body(merge | {"newObjectId": 900}))
    assert renamed.surviving_object_id == 900


def test_events_are_applied_in_the_order_they_happened() -> None:
    events = parse_delivery(
        _body(
            _event(eventId=3, occurredAt=3_000),
            _event(eventId=1, occurredAt=1_000),
            _event(eventId=2, occurredAt=1_000),
        )
    )
    assert [e.event_id for e in in_applying_order(events)] == [1, 2, 3]


def test_property_values_as_hubspot_sends_them() -> None:
    assert opted_out("true") and opted_out("TRUE") and not opted_out("false")
    assert not opted_out(None) and not opted_out("")
    assert owner_value(" 102 ") == "102"
    assert owner_value("") is None and owner_value(None) is None
