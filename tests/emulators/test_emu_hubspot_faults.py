"""Every HubSpot fault behaves as specified: statuses, headers, bodies, transport failures."""

from __future__ import annotations

import time

import pytest
import requests

from morpheus_pipelines.devtools.emulators import Fault, HubSpotEmulator

LIST_ID = "19544"
LIST_PATH = f"/crm/v3/lists/{LIST_ID}"
MEMBERS_PATH = f"/crm/v3/lists/{LIST_ID}/memberships"
BATCH_READ = "/crm/v3/objects/companies/batch/read"
RATE_HEADERS = (
    "X-HubSpot-RateLimit-Max",
    "X-HubSpot-RateLimit-Remaining",
    "X-HubSpot-RateLimit-Interval-Milliseconds",
)
DAILY_HEADERS = ("X-HubSpot-RateLimit-Daily", "X-HubSpot-RateLimit-Daily-Remaining")


def _page_cursor(emu: HubSpotEmulator, session: requests.Session, limit: int = 100) -> str:
    body = session.get(emu.url(MEMBERS_PATH), params={"limit": limit}).json()
    return body["paging"]["next"]["after"]


def _batch(ids: list[str]) -> dict:
    return {"inputs": [{"id": i} for i in ids], "properties": ["name"], "propertiesWithHistory": []}


@pytest.mark.parametrize("status", ["500", "502", "503", "504"])
def test_fail_page_with_5xx_k_times_then_recovers(
    hubspot: HubSpotEmulator, session, status: str
) -> None:
    fault = hubspot.fail_page(1, status, times=2)
    cursor = _page_cursor(hubspot, session)
    statuses = [
        session.get(hubspot.url(MEMBERS_PATH), params={"limit": 100, "after": cursor}).status_code
        for _ in range(3)
    ]
    assert statuses == [int(status), int(status), 200]
    assert fault.fired == 2
    entries = hubspot.log.entries("memberships")
    assert [(e.page, e.status, e.fault) for e in entries] == [
        (0, 200, None),
        (1, int(status), "status"),
        (1, int(status), "status"),
        (1, 200, None),
    ]


def test_page_fault_does_not_fire_on_other_pages(hubspot: HubSpotEmulator, session) -> None:
    hubspot.fail_page(2, "503")
    cursor = _page_cursor(hubspot, session)
    resp = session.get(hubspot.url(MEMBERS_PATH), params={"limit": 100, "after": cursor})
    assert resp.status_code == 200
    assert hubspot.faults.pending()  # still armed for page 2


def test_reset_raises_connection_error_and_is_logged(hubspot: HubSpotEmulator, session) -> None:
    hubspot.fail_page(0, "reset")
    with pytest.raises(requests.ConnectionError):
        session.get(hubspot.url(MEMBERS_PATH))
    record = hubspot.log.last("memberships")
    assert (record.outcome, record.status, record.fault) == ("reset", None, "reset")
    # The next attempt on a fresh connection succeeds.
    assert session.get(hubspot.url(MEMBERS_PATH)).status_code == 200


def test_truncated_json_fails_to_parse(hubspot: HubSpotEmulator, session) -> None:
    hubspot.fail_page(0, "truncated_json")
    resp = session.get(hubspot.url(MEMBERS_PATH))
    assert resp.status_code == 200
    with pytest.raises(requests.JSONDecodeError):
        resp.json()
    assert session.get(hubspot.url(MEMBERS_PATH)).json()["results"]


def test_short_body_breaks_the_transfer(hubspot: HubSpotEmulator, session) -> None:
    hubspot.fail("short_body", endpoint="list")
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        session.get(hubspot.url(LIST_PATH))
    assert session.get(hubspot.url(LIST_PATH)).status_code == 200


def test_slow_response_trips_read_timeout(hubspot: HubSpotEmulator, session) -> None:
    hubspot.slow(0.5, endpoint="memberships")
    with pytest.raises(requests.ReadTimeout):
        session.get(hubspot.url(MEMBERS_PATH), timeout=(1, 0.2))
    # The server still answers once the delay is over; the log shows it.
    assert hubspot.log.wait_until(lambda rs: rs[-1].outcome == "responded", timeout=5)
    assert hubspot.log.last().fault == "slow"
    assert session.get(hubspot.url(MEMBERS_PATH), timeout=(1, 2)).status_code == 200


def test_slow_503_combines_delay_and_status(hubspot: HubSpotEmulator, session) -> None:
    hubspot.fail("503", endpoint="list", delay=0.05)
    started = time.monotonic()
    assert session.get(hubspot.url(LIST_PATH)).status_code == 503
    assert time.monotonic() - started >= 0.05


def test_stop_does_not_wait_for_delayed_responses(hubspot: HubSpotEmulator) -> None:
    hubspot.slow(30, endpoint="list")
    with pytest.raises(requests.RequestException):
        requests.get(hubspot.url(LIST_PATH), timeout=(1, 0.1))
    started = time.monotonic()
    hubspot.stop()
    assert time.monotonic() - started < 2
    assert hubspot.log.last().outcome == "aborted"


@pytest.mark.parametrize("policy", ["TEN_SECONDLY_ROLLING", "SECONDLY", "DAILY"])
@pytest.mark.parametrize("retry_after", [None, 3])
@pytest.mark.parametrize("rate_headers", [True, False])
def test_rate_limit_bodies_and_headers(
    hubspot: HubSpotEmulator, session, policy: str, retry_after: int | None, rate_headers: bool
) -> None:
    hubspot.rate_limit(policy, retry_after=retry_after, rate_headers=rate_headers)
    resp = session.get(hubspot.url(LIST_PATH))
    assert resp.status_code == 429
    body = resp.json()
    assert set(body) == {"status", "message", "errorType", "correlationId", "policyName"}
    assert body["status"] == "error"
    assert body["errorType"] == "RATE_LIMIT"
    assert body["policyName"] == policy
    assert body["message"] == f"You have reached your {policy.lower()} limit."
    assert resp.headers.get("Retry-After") == (None if retry_after is None else "3")
    for name in RATE_HEADERS:
        assert (name in resp.headers) is rate_headers
    for name in DAILY_HEADERS:
        assert (name in resp.headers) is (rate_headers and policy == "DAILY")
    if rate_headers:
        interval = {"TEN_SECONDLY_ROLLING": "10000", "SECONDLY": "1000", "DAILY": "10000"}
        assert resp.headers["X-HubSpot-RateLimit-Interval-Milliseconds"] == interval[policy]
        if policy != "DAILY":
            assert resp.headers["X-HubSpot-RateLimit-Remaining"] == "0"
        else:
            assert resp.headers["X-HubSpot-RateLimit-Daily-Remaining"] == "0"
    assert session.get(hubspot.url(LIST_PATH)).status_code == 200


@pytest.mark.parametrize("budget", [100, 190])
def test_token_bucket_enforces_budget_per_rolling_window(
    make_hubspot, session, fake_clock, budget: int
) -> None:
    emu = make_hubspot(rate_limit=budget, clock=fake_clock)
    remaining = []
    for _ in range(budget):
        resp = session.get(emu.url(LIST_PATH))
        assert resp.status_code == 200
        assert resp.headers["X-HubSpot-RateLimit-Max"] == str(budget)
        assert resp.headers["X-HubSpot-RateLimit-Interval-Milliseconds"] == "10000"
        remaining.append(int(resp.headers["X-HubSpot-RateLimit-Remaining"]))
    assert remaining == list(range(budget - 1, -1, -1))
    over = session.get(emu.url(LIST_PATH))
    assert over.status_code == 429
    assert over.json()["policyName"] == "TEN_SECONDLY_ROLLING"
    assert over.headers["X-HubSpot-RateLimit-Remaining"] == "0"
    assert "Retry-After" not in over.headers
    fake_clock.advance(9.9)
    assert session.get(emu.url(LIST_PATH)).status_code == 429
    fake_clock.advance(0.2)  # the whole first burst has left the rolling window
    assert session.get(emu.url(LIST_PATH)).status_code == 200
    assert emu.log.count(status=429) == 2


def test_token_bucket_window_rolls_request_by_request(make_hubspot, session, fake_clock) -> None:
    emu = make_hubspot(rate_limit=100, clock=fake_clock, retry_after_on_rate_limit=True)
    for _ in range(50):
        session.get(emu.url(LIST_PATH))
    fake_clock.advance(5)
    for _ in range(50):
        session.get(emu.url(LIST_PATH))
    limited = session.get(emu.url(LIST_PATH))
    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "5"  # until the first 50 leave the window
    fake_clock.advance(5)
    assert session.get(emu.url(LIST_PATH)).headers["X-HubSpot-RateLimit-Remaining"] == "49"


def test_401_without_or_with_wrong_token(hubspot: HubSpotEmulator, session) -> None:
    assert requests.get(hubspot.url(LIST_PATH), timeout=5).status_code == 401
    wrong = {"Authorization": "Bearer nope"}
    assert requests.get(hubspot.url(LIST_PATH), headers=wrong, timeout=5).status_code == 401
    assert session.get(hubspot.url(LIST_PATH)).status_code == 200
    hubspot.set_token(None)
    assert requests.get(hubspot.url(LIST_PATH), timeout=5).status_code == 200


def test_unauthorized_fault_fires_despite_good_token(hubspot: HubSpotEmulator, session) -> None:
    hubspot.unauthorized(endpoint="batch_read")
    resp = session.post(hubspot.url(BATCH_READ), json=_batch(["1000"]))
    assert resp.status_code == 401
    assert resp.json()["category"] == "INVALID_AUTHENTICATION"
    assert session.post(hubspot.url(BATCH_READ), json=_batch(["1000"])).status_code == 200


def test_duplicate_members_across_pages(hubspot: HubSpotEmulator, session) -> None:
    hubspot.duplicate_members(page=1)
    first = session.get(hubspot.url(MEMBERS_PATH), params={"limit": 250}).json()
    cursor = first["paging"]["next"]["after"]
    second = session.get(hubspot.url(MEMBERS_PATH), params={"limit": 250, "after": cursor}).json()
    ids = [r["recordId"] for r in first["results"] + second["results"]]
    assert second["results"][0]["recordId"] == first["results"][-1]["recordId"]
    assert len(ids) == 261
    assert len(set(ids)) == 260


def test_duplicate_members_within_first_page(hubspot: HubSpotEmulator, session) -> None:
    hubspot.duplicate_members(page=0)
    ids = [r["recordId"] for r in session.get(hubspot.url(MEMBERS_PATH)).json()["results"]]
    assert ids[0] == ids[-1]


def test_list_size_and_processing_status_faults(hubspot: HubSpotEmulator, session) -> None:
    hubspot.misreport_list_size()
    hubspot.misreport_list_size(7)
    hubspot.report_processing_status("PROCESSING")
    sizes = [session.get(hubspot.url(LIST_PATH)).json()["list"]["size"] for _ in range(3)]
    assert sizes == [261, 7, 260]
    status = session.get(hubspot.url(LIST_PATH)).json()["list"]["processingStatus"]
    assert status == "COMPLETE"  # the status fault was queued behind the two size faults


def test_processing_status_fault_and_persistent_state(hubspot: HubSpotEmulator, session) -> None:
    hubspot.report_processing_status("REFRESHING")
    assert session.get(hubspot.url(LIST_PATH)).json()["list"]["processingStatus"] == "REFRESHING"
    assert session.get(hubspot.url(LIST_PATH)).json()["list"]["processingStatus"] == "COMPLETE"
    hubspot.set_list(LIST_ID, processing_status="PROCESSING", size=999)
    lst = session.get(hubspot.url(LIST_PATH)).json()["list"]
    assert (lst["processingStatus"], lst["size"]) == ("PROCESSING", 999)
    hubspot.set_list(LIST_ID, size=None)
    assert session.get(hubspot.url(LIST_PATH)).json()["list"]["size"] == 260


def test_drop_companies_answers_207(hubspot: HubSpotEmulator, session) -> None:
    hubspot.drop_companies()
    hubspot.drop_companies(["1002", "1003"])
    first = session.post(hubspot.url(BATCH_READ), json=_batch(["1000", "1001"]))
    second = session.post(hubspot.url(BATCH_READ), json=_batch(["1002", "1003", "1004"]))
    assert first.status_code == second.status_code == 207
    assert first.json()["errors"][0]["context"]["ids"] == ["1000"]
    assert second.json()["errors"][0]["context"]["ids"] == ["1002", "1003"]
    assert [r["id"] for r in second.json()["results"]] == ["1004"]
    assert session.post(hubspot.url(BATCH_READ), json=_batch(["1000"])).status_code == 200


def test_nth_request_targeting(hubspot: HubSpotEmulator, session) -> None:
    hubspot.fail("503", nth=3, times=2)  # over all endpoints
    hubspot.fail("500", endpoint="owners", nth=2)  # the 2nd owners request
    urls = [LIST_PATH, MEMBERS_PATH, LIST_PATH, "/crm/v3/owners", "/crm/v3/owners", LIST_PATH]
    statuses = [session.get(hubspot.url(u)).status_code for u in urls]
    assert statuses == [200, 200, 503, 503, 500, 200]
    assert [e.seq for e in hubspot.log.entries()] == [1, 2, 3, 4, 5, 6]
    assert [e.nth for e in hubspot.log.entries("owners")] == [1, 2]


def test_times_none_fires_until_cleared(hubspot: HubSpotEmulator, session) -> None:
    hubspot.faults.add(Fault("502", endpoint="owners", times=None))
    assert [session.get(hubspot.url("/crm/v3/owners")).status_code for _ in range(3)] == [502] * 3
    hubspot.faults.clear()
    assert session.get(hubspot.url("/crm/v3/owners")).status_code == 200


def test_status_fault_with_retry_after_and_custom_body(hubspot: HubSpotEmulator, session) -> None:
    hubspot.fail(
        "502", endpoint="list", retry_after=2, body="<html>bad gateway</html>", headers={"X-A": "1"}
    )
    resp = session.get(hubspot.url(LIST_PATH))
    assert resp.status_code == 502
    assert resp.headers["Retry-After"] == "2"
    assert resp.headers["X-A"] == "1"
    assert resp.text == "<html>bad gateway</html>"


def test_fault_registry_rejects_mistargeted_faults(hubspot: HubSpotEmulator) -> None:
    with pytest.raises(ValueError, match="bogus"):
        hubspot.fail("bogus")
    with pytest.raises(ValueError, match="unknown endpoint"):
        hubspot.fail("500", endpoint="contacts")
    with pytest.raises(ValueError, match="memberships"):
        hubspot.faults.add(Fault("duplicate_members", endpoint="list"))
    assert hubspot.faults.add(Fault("list_size")).endpoint == "list"
    with pytest.raises(ValueError, match="delay"):
        Fault("slow")
    with pytest.raises(ValueError, match="policy"):
        hubspot.rate_limit("HOURLY")
