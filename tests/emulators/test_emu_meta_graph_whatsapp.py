"""WhatsApp Cloud API sends over real HTTP: the 24-hour window, templates, numbers, bodies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests

from morpheus_pipelines.devtools.emulators import MetaGraphEmulator
from morpheus_pipelines.devtools.emulators.meta_graph import DEFAULT_PHONE_NUMBER_ID
from tests.support.meta_graph import DateClock

SEND_PATH = f"/v21.0/{DEFAULT_PHONE_NUMBER_ID}/messages"
USER = "6591234567"


def text(to: str = "+65 9123 4567", body: str = "Hi Mei, thanks for your enquiry") -> dict:
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "text",
        "text": {"body": body},
    }


def template(name: str = "hello_world", code: str = "en_US", to: str = USER) -> dict:
    return {
        "messaging_product": "whatsapp",
        "to": to,
        "type": "template",
        "template": {"name": name, "language": {"code": code}},
    }


def cloud_error(resp: requests.Response) -> dict[str, Any]:
    """The error object, checked for the Cloud API's shape."""
    error = resp.json()["error"]
    assert set(error) >= {"message", "type", "code", "error_data", "fbtrace_id"}
    assert error["error_data"]["messaging_product"] == "whatsapp"
    assert error["message"].startswith(f"(#{error['code']}) ")
    return error


def test_text_inside_the_window_is_accepted_and_recorded(
    meta: MetaGraphEmulator, meta_session: requests.Session, date_clock: DateClock
) -> None:
    meta.record_inbound(DEFAULT_PHONE_NUMBER_ID, USER)
    date_clock.advance(hours=23, minutes=59)
    resp = meta_session.post(meta.url(SEND_PATH), json=text())
    assert resp.status_code == 200
    body = resp.json()
    assert body["messaging_product"] == "whatsapp"
    assert body["contacts"] == [{"input": "+65 9123 4567", "wa_id": USER}]
    [message] = body["messages"]
    assert message["id"].startswith("wamid.")
    [sent] = meta.sent_messages(to=USER)
    assert (sent.wamid, sent.type, sent.text, sent.wa_id) == (
        message["id"],
        "text",
        "Hi Mei, thanks for your enquiry",
        USER,
    )
    assert sent.request == text()
    assert sent.sent_at == date_clock.now


def test_text_once_the_window_has_closed_is_131047_and_not_sent(
    meta: MetaGraphEmulator, meta_session: requests.Session, date_clock: DateClock
) -> None:
    meta.record_inbound(DEFAULT_PHONE_NUMBER_ID, USER)
    date_clock.advance(hours=24)
    resp = meta_session.post(meta.url(SEND_PATH), json=text())
    assert resp.status_code == 400
    error = cloud_error(resp)
    assert error["code"] == 131047
    assert error["message"] == "(#131047) Re-engagement message"
    assert "24 hours" in error["error_data"]["details"]
    assert meta.sent_messages() == []
    assert not meta.window_open(DEFAULT_PHONE_NUMBER_ID, USER)


def test_text_to_someone_who_never_wrote_is_131047(
    meta: MetaGraphEmulator, meta_session: requests.Session
) -> None:
    resp = meta_session.post(meta.url(SEND_PATH), json=text(to="+61400000000"))
    assert resp.status_code == 400
    assert cloud_error(resp)["code"] == 131047


def test_the_window_is_per_business_number(
    make_meta: Callable[..., MetaGraphEmulator], meta_session: requests.Session
) -> None:
    meta = make_meta({"phone_numbers": {"111": "15550000111", "222": "15550000222"}})
    meta.record_inbound("111", USER)
    assert meta_session.post(meta.url("/v21.0/111/messages"), json=text()).status_code == 200
    assert meta_session.post(meta.url("/v21.0/222/messages"), json=text()).status_code == 400


def test_a_later_inbound_message_reopens_the_window(
    meta: MetaGraphEmulator, meta_session: requests.Session, date_clock: DateClock
) -> None:
    first = date_clock.now
    meta.record_inbound(DEFAULT_PHONE_NUMBER_ID, USER)
    date_clock.advance(hours=30)
    assert meta_session.post(meta.url(SEND_PATH), json=text()).status_code == 400
    meta.record_inbound(DEFAULT_PHONE_NUMBER_ID, f"+{USER}")  # any spelling of the number
    meta.record_inbound(DEFAULT_PHONE_NUMBER_ID, USER, first)  # an older time changes nothing
    assert meta_session.post(meta.url(SEND_PATH), json=text()).status_code == 200
    meta.forget_inbound(DEFAULT_PHONE_NUMBER_ID, USER)
    assert meta_session.post(meta.url(SEND_PATH), json=text()).status_code == 400


def test_a_template_outside_the_window_is_accepted(
    meta: MetaGraphEmulator, meta_session: requests.Session
) -> None:
    resp = meta_session.post(meta.url(SEND_PATH), json=template())
    assert resp.status_code == 200
    [message] = resp.json()["messages"]
    assert message["message_status"] == "accepted"
    [sent] = meta.sent_messages()
    assert (sent.type, sent.template, sent.category) == (
        "template",
        ("hello_world", "en_US"),
        "utility",
    )


def test_an_unknown_template_or_language_is_132001(
    meta: MetaGraphEmulator, meta_session: requests.Session
) -> None:
    meta.add_template("lead_follow_up", "en", category="MARKETING")
    for name, code in (("lead_follow_up_v2", "en"), ("lead_follow_up", "zh_CN")):
        resp = meta_session.post(meta.url(SEND_PATH), json=template(name, code))
        assert resp.status_code == 404
        error = cloud_error(resp)
        assert error["code"] == 132001
        assert error["error_data"]["details"] == f"template name ({name}) does not exist in {code}"
    assert meta_session.post(meta.url(SEND_PATH), json=template("lead_follow_up", "en")).ok
    meta.remove_template("lead_follow_up", "en")
    assert (
        meta_session.post(meta.url(SEND_PATH), json=template("lead_follow_up", "en")).status_code
        == 404
    )
    assert len(meta.sent_messages()) == 1


def test_an_unknown_phone_number_id_is_graph_s_nonexisting_object(
    meta: MetaGraphEmulator, meta_session: requests.Session
) -> None:
    resp = meta_session.post(meta.url("/v21.0/999999/messages"), json=template())
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert (error["type"], error["code"], error["error_subcode"]) == (
        "GraphMethodException",
        100,
        33,
    )
    assert "Unsupported post request. Object with ID '999999'" in error["message"]
    assert meta.sent_messages() == []


@pytest.mark.parametrize(
    ("body", "code", "details"),
    [
        ({}, 100, "messaging_product is required"),
        ({"messaging_product": "sms", "to": USER}, 100, "must be one of {WHATSAPP}"),
        ({"messaging_product": "whatsapp"}, 100, "The parameter to is required."),
        ({"messaging_product": "whatsapp", "to": "mei"}, 100, "must be a phone number"),
        ({"messaging_product": "whatsapp", "to": USER, "type": "fax"}, 100, 'got "fax"'),
        ({"messaging_product": "whatsapp", "to": USER, "type": "text"}, 131008, "text['body']"),
        (
            {"messaging_product": "whatsapp", "to": USER, "text": {"body": ""}},
            131008,
            "text['body']",
        ),
        (
            {"messaging_product": "whatsapp", "to": USER, "type": "template", "template": {}},
            131008,
            "template['name']",
        ),
        (
            {
                "messaging_product": "whatsapp",
                "to": USER,
                "type": "template",
                "template": {"name": "hello_world", "language": "en_US"},
            },
            131008,
            "template['language']['code']",
        ),
        (
            {"messaging_product": "whatsapp", "to": USER, "type": "image"},
            131008,
            "The parameter image is required.",
        ),
    ],
)
def test_malformed_bodies_are_refused_with_the_cloud_api_s_codes(
    meta: MetaGraphEmulator,
    meta_session: requests.Session,
    body: dict,
    code: int,
    details: str,
) -> None:
    meta.record_inbound(DEFAULT_PHONE_NUMBER_ID, USER)  # the window is not what fails
    resp = meta_session.post(meta.url(SEND_PATH), json=body)
    assert resp.status_code == 400
    error = cloud_error(resp)
    assert error["code"] == code
    assert details in error["error_data"]["details"]
    assert meta.sent_messages() == []


def test_a_body_that_is_not_json_lacks_every_parameter(
    meta: MetaGraphEmulator, meta_session: requests.Session
) -> None:
    resp = meta_session.post(meta.url(SEND_PATH), data=b"to=6591234567&type=text")
    assert resp.status_code == 400
    assert cloud_error(resp)["code"] == 100


def test_a_wrong_token_on_a_send_is_401_code_190(meta: MetaGraphEmulator) -> None:
    resp = requests.post(
        meta.url(SEND_PATH), json=template(), headers={"Authorization": "Bearer expired"}
    )
    assert resp.status_code == 401
    error = resp.json()["error"]
    assert (error["type"], error["code"]) == ("OAuthException", 190)
    assert meta.sent_messages() == []


def test_each_accepted_send_is_recorded_once_with_its_own_wamid(
    meta: MetaGraphEmulator, meta_session: requests.Session
) -> None:
    ids = [meta_session.post(meta.url(SEND_PATH), json=template()).json() for _ in range(3)]
    wamids = [body["messages"][0]["id"] for body in ids]
    assert len(set(wamids)) == 3
    assert [sent.wamid for sent in meta.sent_messages(to=USER)] == wamids
    assert meta.sent_message(wamids[1]).template == ("hello_world", "en_US")
    assert meta.sent_messages(to="+10000000000") == []


def test_the_data_file_seeds_numbers_templates_leads_and_windows(
    make_meta: Callable[..., MetaGraphEmulator], meta_session: requests.Session, date_clock
) -> None:
    meta = make_meta(
        {
            "phone_numbers": {"333": "15550000333"},
            "templates": [{"name": "intro", "language": "en_SG", "category": "MARKETING"}],
            "leads": {
                "77": {
                    "page_id": "1",
                    "form_id": "2",
                    "ad_id": "3",
                    "created_time": "2026-06-30T10:00:00+00:00",
                    "field_data": {"email": "a@example.com"},
                }
            },
            "inbound": [
                {"phone_number_id": "333", "wa_id": USER, "at": "2026-07-01T07:00:00+00:00"}
            ],
        }
    )
    assert meta.phone_numbers() == {"333": "15550000333"}
    assert meta.templates() == [("intro", "en_SG", "MARKETING")]
    assert meta.lead("77")["created_time"] == "2026-06-30T10:00:00+0000"
    assert meta_session.post(meta.url("/v21.0/333/messages"), json=text()).status_code == 200
    resp = meta_session.post(meta.url("/v21.0/333/messages"), json=template())
    assert resp.status_code == 404  # hello_world is only the default when no templates are given
