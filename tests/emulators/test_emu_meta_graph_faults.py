"""Injected faults on the Meta emulator behave as on the other emulators (same pipeline, same
request log), with Graph's and the Cloud API's error bodies."""

from __future__ import annotations

import pytest
import requests

from morpheus_pipelines.devtools.emulators import MetaGraphEmulator
from morpheus_pipelines.devtools.emulators.meta_graph import DEFAULT_PHONE_NUMBER_ID

SEND_PATH = f"/v21.0/{DEFAULT_PHONE_NUMBER_ID}/messages"
LEAD_PATH = "/v21.0/900"
HELLO = {
    "messaging_product": "whatsapp",
    "to": "6591234567",
    "type": "template",
    "template": {"name": "hello_world", "language": {"code": "en_US"}},
}


@pytest.fixture
def emu(meta: MetaGraphEmulator) -> MetaGraphEmulator:
    meta.add_lead("900", page_id="1", form_id="2", field_data={"email": "a@example.com"})
    return meta


@pytest.mark.parametrize(
    ("status", "code"), [(500, 131000), (503, 2), (429, 130429)], ids=["500", "503", "429"]
)
def test_a_status_on_a_send_is_in_the_cloud_api_s_shape_and_sends_nothing(
    emu: MetaGraphEmulator, meta_session: requests.Session, status: int, code: int
) -> None:
    fault = emu.fail(status, endpoint="messages", times=2, retry_after=7)
    statuses = [meta_session.post(emu.url(SEND_PATH), json=HELLO) for _ in range(3)]
    assert [r.status_code for r in statuses] == [status, status, 200]
    error = statuses[0].json()["error"]
    assert (error["code"], error["error_data"]["messaging_product"]) == (code, "whatsapp")
    assert error["message"].startswith(f"(#{code}) ")
    assert statuses[0].headers["Retry-After"] == "7"
    assert fault.fired == 2
    assert len(emu.sent_messages()) == 1
    assert [(e.status, e.fault) for e in emu.log.entries("messages")] == [
        (status, "status"),
        (status, "status"),
        (200, None),
    ]


@pytest.mark.parametrize(("status", "code"), [(500, 1), (503, 2)])
def test_a_status_on_a_lead_read_is_in_graph_s_shape(
    emu: MetaGraphEmulator, meta_session: requests.Session, status: int, code: int
) -> None:
    emu.fail(status, endpoint="lead")
    resp = meta_session.get(emu.url(LEAD_PATH))
    assert resp.status_code == status
    error = resp.json()["error"]
    assert (error["code"], "error_data" in error) == (code, False)
    assert error["fbtrace_id"]
    assert meta_session.get(emu.url(LEAD_PATH)).json()["id"] == "900"


def test_reset_raises_connection_error_and_sends_nothing(
    emu: MetaGraphEmulator, meta_session: requests.Session
) -> None:
    emu.fail("reset", endpoint="messages")
    with pytest.raises(requests.ConnectionError):
        meta_session.post(emu.url(SEND_PATH), json=HELLO)
    record = emu.log.last("messages")
    assert (record.outcome, record.status, record.fault) == ("reset", None, "reset")
    assert emu.sent_messages() == []
    assert meta_session.post(emu.url(SEND_PATH), json=HELLO).status_code == 200


def test_a_lost_answer_still_sends_so_a_blind_retry_sends_twice(
    emu: MetaGraphEmulator, meta_session: requests.Session
) -> None:
    emu.lose_answer()
    with pytest.raises(requests.ConnectionError):
        meta_session.post(emu.url(SEND_PATH), json=HELLO)
    assert len(emu.sent_messages()) == 1
    assert emu.log.last("messages").outcome == "answer_lost"
    meta_session.post(emu.url(SEND_PATH), json=HELLO)
    assert len(emu.sent_messages(to="6591234567")) == 2


def test_truncated_json_and_short_body(
    emu: MetaGraphEmulator, meta_session: requests.Session
) -> None:
    emu.fail("truncated_json", endpoint="lead")
    resp = meta_session.get(emu.url(LEAD_PATH))
    assert resp.status_code == 200
    with pytest.raises(requests.JSONDecodeError):
        resp.json()
    emu.fail("short_body", endpoint="lead")
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        meta_session.get(emu.url(LEAD_PATH))
    assert meta_session.get(emu.url(LEAD_PATH)).json()["id"] == "900"


def test_slow_trips_the_read_timeout(emu: MetaGraphEmulator, meta_session) -> None:
    emu.slow(0.5, endpoint="messages")
    with pytest.raises(requests.ReadTimeout):
        meta_session.post(emu.url(SEND_PATH), json=HELLO, timeout=(1, 0.1))
    assert emu.log.wait_until(lambda rs: rs[-1].outcome == "responded", timeout=5)
    assert emu.log.last().fault == "slow"


def test_an_expired_token_fault_is_190_463_whatever_the_token(
    emu: MetaGraphEmulator, meta_session: requests.Session
) -> None:
    emu.expire_token(times=2)
    send = meta_session.post(emu.url(SEND_PATH), json=HELLO)
    read = meta_session.get(emu.url(LEAD_PATH))
    assert (send.status_code, read.status_code) == (401, 400)
    for resp in (send, read):
        error = resp.json()["error"]
        assert (error["type"], error["code"], error["error_subcode"]) == (
            "OAuthException",
            190,
            463,
        )
    assert emu.sent_messages() == []
    assert meta_session.post(emu.url(SEND_PATH), json=HELLO).status_code == 200


def test_faults_outside_the_emulator_s_kinds_or_endpoints_are_refused(
    emu: MetaGraphEmulator,
) -> None:
    with pytest.raises(ValueError, match="not supported"):
        emu.fail("rate_limit")
    with pytest.raises(ValueError, match="unknown endpoint"):
        emu.fail(500, endpoint="memberships")
