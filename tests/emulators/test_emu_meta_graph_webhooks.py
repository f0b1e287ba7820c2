"""The webhooks the Meta emulator posts, checked by an independent receiver: signatures over the
raw body, the documented payload shapes, failed deliveries, the automatic statuses."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest
import requests

from morpheus_pipelines.devtools.emulators import MetaGraphEmulator
from morpheus_pipelines.devtools.emulators.meta_graph import (
    DEFAULT_DISPLAY_PHONE_NUMBER,
    DEFAULT_PHONE_NUMBER_ID,
    DEFAULT_WABA_ID,
)
from tests.support.meta_graph import META_VERIFY_TOKEN, DateClock, WebhookReceiver

SEND_PATH = f"/v21.0/{DEFAULT_PHONE_NUMBER_ID}/messages"
USER = "6591234567"
METADATA = {
    "display_phone_number": DEFAULT_DISPLAY_PHONE_NUMBER,
    "phone_number_id": DEFAULT_PHONE_NUMBER_ID,
}
HELLO = {
    "messaging_product": "whatsapp",
    "to": USER,
    "type": "template",
    "template": {"name": "hello_world", "language": {"code": "en_US"}},
}


def _closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/webhooks/meta"


def _status(payload: dict) -> tuple[str, str]:
    [status] = payload["entry"][0]["changes"][0]["value"]["statuses"]
    return status["id"], status["status"]


def _send(meta: MetaGraphEmulator, session: requests.Session, body: dict = HELLO) -> str:
    resp = session.post(meta.url(SEND_PATH), json=body)
    assert resp.status_code == 200, resp.text
    return resp.json()["messages"][0]["id"]


def test_the_signature_verifies_over_the_raw_body(
    meta: MetaGraphEmulator, receiver: WebhookReceiver
) -> None:
    assert meta.deliver_leadgen("555", "900", form_id="777") == 200
    [got] = receiver.received
    assert got.signature_valid
    assert got.headers["X-Hub-Signature-256"] == receiver.expected_signature(got.body)
    assert got.headers["X-Hub-Signature"].startswith("sha1=")
    assert got.headers["Content-Type"] == "application/json"
    [delivery] = meta.deliveries.entries()
    assert delivery.body == got.body  # what was signed is what arrived, byte for byte


def test_a_signature_under_another_secret_does_not_verify(
    make_meta: Callable[..., MetaGraphEmulator], receiver: WebhookReceiver
) -> None:
    meta = make_meta(app_secret="someone-else's-secret")
    meta.deliver_leadgen("555", "900", form_id="777")
    assert [got.signature_valid for got in receiver.wait_for(1)] == [False]


def test_leadgen_has_the_page_webhook_shape(
    meta: MetaGraphEmulator, receiver: WebhookReceiver, date_clock: DateClock
) -> None:
    meta.add_lead(
        "900",
        page_id="555",
        form_id="777",
        ad_id="238",
        field_data={"email": "a@example.com"},
        created_time=date_clock.now,
    )
    date_clock.advance(seconds=5)
    assert meta.deliver_leadgen("555", "900") == 200
    stamp = int(date_clock.now.timestamp())
    assert receiver.received[0].json == {
        "object": "page",
        "entry": [
            {
                "id": "555",
                "time": stamp,
                "changes": [
                    {
                        "field": "leadgen",
                        "value": {
                            "leadgen_id": "900",
                            "page_id": "555",
                            "form_id": "777",
                            "created_time": stamp - 5,
                            "ad_id": "238",
                            "adgroup_id": "238",
                        },
                    }
                ],
            }
        ],
    }


def test_an_organic_leadgen_has_no_ad_and_an_unknown_one_needs_its_form(
    meta: MetaGraphEmulator, receiver: WebhookReceiver
) -> None:
    with pytest.raises(ValueError, match="form_id"):
        meta.deliver_leadgen("555", "901")
    meta.deliver_leadgen("555", "901", form_id="777")
    value = receiver.received[0].json["entry"][0]["changes"][0]["value"]
    assert "ad_id" not in value and "adgroup_id" not in value


def test_an_inbound_message_has_the_waba_shape_and_opens_the_window(
    meta: MetaGraphEmulator,
    receiver: WebhookReceiver,
    meta_session: requests.Session,
    date_clock: DateClock,
) -> None:
    text = {"messaging_product": "whatsapp", "to": USER, "text": {"body": "Hello Mei"}}
    assert meta_session.post(meta.url(SEND_PATH), json=text).status_code == 400
    status = meta.send_inbound_message(
        DEFAULT_PHONE_NUMBER_ID, USER, "Is it available in blue?", profile_name="Mei Tan"
    )
    assert status == 200
    payload = receiver.received[0].json
    [message] = payload["entry"][0]["changes"][0]["value"]["messages"]
    assert message["id"].startswith("wamid.")
    assert payload == {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": DEFAULT_WABA_ID,
                "changes": [
                    {
                        "value": {
                            "messaging_product": "whatsapp",
                            "metadata": METADATA,
                            "contacts": [{"profile": {"name": "Mei Tan"}, "wa_id": USER}],
                            "messages": [
                                {
                                    "from": USER,
                                    "id": message["id"],
                                    "timestamp": str(int(date_clock.now.timestamp())),
                                    "type": "text",
                                    "text": {"body": "Is it available in blue?"},
                                }
                            ],
                        },
                        "field": "messages",
                    }
                ],
            }
        ],
    }
    assert meta_session.post(meta.url(SEND_PATH), json=text).status_code == 200


def test_statuses_have_the_documented_shape(
    meta: MetaGraphEmulator,
    receiver: WebhookReceiver,
    meta_session: requests.Session,
    date_clock: DateClock,
) -> None:
    wamid = _send(meta, meta_session)
    assert meta.deliver_statuses(wamid, ["sent", "delivered", "read"]) == [200, 200, 200]
    stamp = str(int(date_clock.now.timestamp()))
    values = [got.json["entry"][0]["changes"][0]["value"] for got in receiver.received]
    assert all(v["metadata"] == METADATA and v["messaging_product"] == "whatsapp" for v in values)
    sent, delivered, read = (v["statuses"] for v in values)
    pricing = {"billable": True, "pricing_model": "PMP", "category": "utility", "type": "regular"}
    assert sent == [
        {
            "id": wamid,
            "status": "sent",
            "timestamp": stamp,
            "recipient_id": USER,
            "conversation": {
                "id": sent[0]["conversation"]["id"],
                "origin": {"type": "utility"},
                "expiration_timestamp": str(int(stamp) + 24 * 3600),
            },
            "pricing": pricing,
        }
    ]
    assert delivered[0]["status"] == "delivered"
    assert delivered[0]["pricing"] == pricing
    assert "expiration_timestamp" not in delivered[0]["conversation"]
    assert read == [{"id": wamid, "status": "read", "timestamp": stamp, "recipient_id": USER}]
    assert all(got.signature_valid for got in receiver.received)


def test_a_failed_status_carries_its_errors(
    meta: MetaGraphEmulator, receiver: WebhookReceiver, meta_session: requests.Session
) -> None:
    wamid = _send(meta, meta_session)
    assert meta.deliver_failure(wamid, 131026) == 200
    [status] = receiver.received[0].json["entry"][0]["changes"][0]["value"]["statuses"]
    assert status["status"] == "failed"
    assert "pricing" not in status and "conversation" not in status
    [error] = status["errors"]
    assert {k: error[k] for k in ("code", "title", "message", "error_data")} == {
        "code": 131026,
        "title": "Message undeliverable",
        "message": "Message undeliverable",
        "error_data": {"details": "Message Undeliverable."},
    }


def test_a_status_for_an_unknown_message_needs_its_number_and_recipient(
    meta: MetaGraphEmulator, receiver: WebhookReceiver
) -> None:
    with pytest.raises(KeyError):
        meta.deliver_statuses("wamid.unknown", ["read"])
    assert meta.deliver_statuses(
        "wamid.unknown", ["read"], phone_number_id=DEFAULT_PHONE_NUMBER_ID, recipient_id=USER
    ) == [200]
    with pytest.raises(ValueError, match="status must be one of"):
        meta.deliver_statuses("wamid.x", ["seen"], phone_number_id="1", recipient_id=USER)


def test_a_non_2xx_answer_is_returned_and_logged(
    meta: MetaGraphEmulator, receiver: WebhookReceiver
) -> None:
    receiver.status = 503
    assert meta.deliver_leadgen("555", "900", form_id="777") == 503
    [delivery] = meta.deliveries.entries("leadgen")
    assert (delivery.status, delivery.ok, delivery.error) == (503, False, None)


def test_a_refused_connection_is_none_and_logged(
    make_meta: Callable[..., MetaGraphEmulator],
) -> None:
    meta = make_meta(webhook_url=_closed_port_url())
    assert meta.deliver_leadgen("555", "900", form_id="777") is None
    [delivery] = meta.deliveries.entries()
    assert delivery.status is None
    assert "Connection refused" in delivery.error or "Errno" in delivery.error


def test_auto_status_follows_each_send_with_sent_then_delivered(
    make_meta: Callable[..., MetaGraphEmulator],
    receiver: WebhookReceiver,
    meta_session: requests.Session,
) -> None:
    meta = make_meta(auto_status=True, auto_status_delay=0.01)
    wamid = _send(meta, meta_session)
    deliveries = meta.wait_for_deliveries(2, kind="statuses")
    assert [_status(d.payload) for d in deliveries] == [(wamid, "sent"), (wamid, "delivered")]
    assert all(d.background and d.ok for d in deliveries)
    got = receiver.wait_for(2)
    assert [_status(g.json) for g in got] == [(wamid, "sent"), (wamid, "delivered")]
    assert all(g.signature_valid for g in got)


def test_auto_status_deliveries_that_fail_are_logged_not_raised(
    make_meta: Callable[..., MetaGraphEmulator], meta_session: requests.Session
) -> None:
    meta = make_meta(auto_status=True, auto_status_delay=0, webhook_url=_closed_port_url())
    _send(meta, meta_session)
    assert meta.wait_idle()
    deliveries = meta.deliveries.entries("statuses")
    assert len(deliveries) == 2
    assert all(d.status is None and d.error for d in deliveries)
    assert meta.errors == []
    assert _send(meta, meta_session)  # the server and the sender keep going


def test_auto_status_needs_somewhere_to_post() -> None:
    with pytest.raises(ValueError, match="auto_status"):
        MetaGraphEmulator(token="t", auto_status=True)
    with pytest.raises(RuntimeError, match="webhook_url"):
        MetaGraphEmulator(token="t").deliver_leadgen("1", "2", form_id="3")


def test_reengagement_failure_by_webhook_accepts_then_reports_131047(
    make_meta: Callable[..., MetaGraphEmulator],
    receiver: WebhookReceiver,
    meta_session: requests.Session,
) -> None:
    meta = make_meta(reengagement_failure="webhook", auto_status_delay=0)
    text = {"messaging_product": "whatsapp", "to": USER, "type": "text", "text": {"body": "Hi"}}
    wamid = _send(meta, meta_session, text)
    [sent] = meta.sent_messages()
    assert (sent.wamid, sent.failed_code) == (wamid, 131047)
    [delivery] = meta.wait_for_deliveries(1, kind="statuses")
    [status] = delivery.payload["entry"][0]["changes"][0]["value"]["statuses"]
    assert (status["id"], status["status"]) == (wamid, "failed")
    assert [e["code"] for e in status["errors"]] == [131047]
    assert status["errors"][0]["title"] == "Re-engagement message"
    assert receiver.wait_for(1)[0].signature_valid


def test_verify_webhook_sends_meta_s_challenge(
    meta: MetaGraphEmulator, receiver: WebhookReceiver
) -> None:
    assert meta.verify_webhook(META_VERIFY_TOKEN, challenge="8080")
    got = receiver.received[0]
    assert (got.method, got.query) == (
        "GET",
        {"hub.mode": "subscribe", "hub.challenge": "8080", "hub.verify_token": META_VERIFY_TOKEN},
    )
    assert not meta.verify_webhook("wrong-token")


def test_the_delivery_log_keeps_what_was_sent(
    meta: MetaGraphEmulator, receiver: WebhookReceiver
) -> None:
    meta.deliver_leadgen("555", "900", form_id="777")
    [delivery] = meta.deliveries.entries("leadgen")
    [got] = receiver.received
    assert delivery.url == receiver.url
    assert delivery.headers["X-Hub-Signature-256"] == got.headers["X-Hub-Signature-256"]
    assert delivery.payload == got.json
    assert (delivery.seq, delivery.background) == (1, False)
