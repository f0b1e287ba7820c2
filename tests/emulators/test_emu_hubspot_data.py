"""HubSpot emulator data: files, build_data, live mutation, concurrency, the CLI entry point."""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from morpheus_pipelines.devtools.emulators import HubSpotEmulator, build_hubspot_data
from tests.support.emulator_process import serving

LIST_ID = "19544"
MEMBERS_PATH = f"/crm/v3/lists/{LIST_ID}/memberships"
BATCH_READ = "/crm/v3/objects/companies/batch/read"


def _read(session: requests.Session, emu: HubSpotEmulator, ids: list[str], props: list[str]):
    body = {"inputs": [{"id": i} for i in ids], "properties": props, "propertiesWithHistory": []}
    return session.post(emu.url(BATCH_READ), json=body)


def test_build_data_serves_strings_and_nulls(make_hubspot, session) -> None:
    data = build_hubspot_data(
        [
            {"id": 1, "name": "A", "portal_id__c": 42, "is_partner": True, "domain": None},
            {"hs_object_id": "2", "properties": {"name": "B"}, "createdAt": "2025-01-01T00:00:00Z"},
        ],
        token="t",
        members=["1", "2", "3"],
    )
    assert set(data["companies"]) == {"1", "2"}
    emu = make_hubspot(data)
    session.headers["Authorization"] = "Bearer t"
    body = _read(session, emu, ["1", "2", "3"], ["name", "portal_id__c", "is_partner", "domain"])
    assert body.status_code == 207  # member 3 has no company record
    props = {r["id"]: r["properties"] for r in body.json()["results"]}
    assert props["1"]["portal_id__c"] == "42"
    assert props["1"]["is_partner"] == "true"
    assert props["1"]["domain"] is None
    assert props["2"]["name"] == "B"
    assert props["2"]["createdate"] == "2025-01-01T00:00:00Z"
    assert body.json()["errors"][0]["context"]["ids"] == ["3"]


def test_build_data_requires_ids() -> None:
    with pytest.raises(ValueError, match="without id"):
        build_hubspot_data([{"name": "nameless"}])


def test_from_file_and_save_round_trip(tmp_path: Path, dataset, session) -> None:
    path = tmp_path / "hubspot.json"
    path.write_text(json.dumps(dataset(5)), encoding="utf-8")
    with HubSpotEmulator.from_file(path) as emu:
        emu.clear_property("1001", "domain")
        emu.save(tmp_path / "saved.json")
        size = session.get(emu.url(f"/crm/v3/lists/{LIST_ID}")).json()["list"]["size"]
        assert size == 5
    saved = json.loads((tmp_path / "saved.json").read_text())
    assert saved["token"] == emu.token
    assert saved["companies"]["1001"]["properties"]["domain"] is None
    assert [m["id"] for m in saved["lists"][LIST_ID]["members"]] == [
        str(1000 + i) for i in range(5)
    ]
    with HubSpotEmulator(saved) as again:
        assert again.to_data()["companies"] == saved["companies"]


def test_data_file_rate_limit_and_token_override(dataset, make_hubspot) -> None:
    data = dataset(1) | {"rate_limit": {"max_requests": 2, "interval_s": 10}}
    emu = make_hubspot(data, token="other")
    headers = {"Authorization": "Bearer other"}
    url = emu.url(f"/crm/v3/lists/{LIST_ID}")
    statuses = [requests.get(url, headers=headers, timeout=5).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


def test_mutations_while_running(hubspot: HubSpotEmulator, session) -> None:
    before = _read(session, hubspot, ["1000"], ["website", "hs_lastmodifieddate"]).json()
    hubspot.clear_property("1000", "website")
    hubspot.set_company("1000", {"name": "Renamed"})
    hubspot.set_company("5", {"name": "Brand new", "domain": "new.sg"})
    after = _read(session, hubspot, ["1000", "5"], ["name", "website", "domain"]).json()
    props = {r["id"]: r["properties"] for r in after["results"]}
    assert props["1000"]["website"] is None
    assert props["1000"]["name"] == "Renamed"
    assert props["5"]["domain"] == "new.sg"
    old_modified = before["results"][0]["properties"]["hs_lastmodifieddate"]
    assert props["1000"]["hs_lastmodifieddate"] > old_modified
    hubspot.set_company("1000", {"name": "Only"}, replace=True)
    assert "website" not in hubspot.company("1000")["properties"]
    replaced = _read(session, hubspot, ["1000"], ["name", "website"]).json()["results"][0]
    assert replaced["properties"]["website"] is None  # requested but unset -> null
    hubspot.set_company("1000", {}, archived=True)
    assert _read(session, hubspot, ["1000"], ["name"]).status_code == 207


def test_set_companies_replaces_all(hubspot: HubSpotEmulator, session) -> None:
    hubspot.set_companies({"1": {"properties": {"name": "Solo"}}})
    assert hubspot.company("1000") is None
    assert _read(session, hubspot, ["1"], ["name"]).json()["results"][0]["properties"]["name"] == (
        "Solo"
    )


def test_member_changes_between_pages_neither_skip_nor_repeat(
    hubspot: HubSpotEmulator, session
) -> None:
    first = session.get(hubspot.url(MEMBERS_PATH), params={"limit": 100}).json()
    hubspot.remove_list_members(LIST_ID, ["1000", "1001"])  # already read
    cursor = first["paging"]["next"]["after"]
    second = session.get(hubspot.url(MEMBERS_PATH), params={"limit": 100, "after": cursor}).json()
    assert second["results"][0]["recordId"] == "1100"
    hubspot.set_list_members(LIST_ID, ["1", "2"])
    hubspot.add_list_members(LIST_ID, [{"id": "3", "membershipTimestamp": "2026-07-02T00:00:00Z"}])
    results = session.get(hubspot.url(MEMBERS_PATH)).json()["results"]
    assert [r["recordId"] for r in results] == ["1", "2", "3"]
    assert results[2]["membershipTimestamp"] == "2026-07-02T00:00:00Z"
    assert hubspot.list_members(LIST_ID) == ["1", "2", "3"]
    lst = session.get(hubspot.url(f"/crm/v3/lists/{LIST_ID}")).json()["list"]
    assert lst["size"] == 3


def test_concurrent_requests_are_all_logged(hubspot: HubSpotEmulator, session) -> None:
    headers = dict(session.headers)

    def fetch(_: int) -> int:
        url = hubspot.url(f"/crm/v3/lists/{LIST_ID}")
        return requests.get(url, headers=headers, timeout=5).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(fetch, range(40)))
    assert statuses == [200] * 40
    entries = hubspot.log.entries()
    assert sorted(e.seq for e in entries) == list(range(1, 41))
    assert all(e.outcome == "responded" for e in entries)
    assert "Authorization" not in json.dumps([e.query for e in entries])


def test_unknown_route_is_404(hubspot: HubSpotEmulator, session) -> None:
    resp = session.get(hubspot.url("/crm/v3/objects/contacts"))
    assert resp.status_code == 404
    assert hubspot.log.last().endpoint == "unknown"


def test_lifecycle_errors(dataset) -> None:
    emu = HubSpotEmulator(dataset(1))
    with pytest.raises(RuntimeError):
        _ = emu.base_url
    with emu:
        with pytest.raises(RuntimeError, match="already running"):
            emu.start()
        first_url = emu.base_url
    emu.stop()  # idempotent
    with emu:  # restartable
        assert emu.base_url.startswith("http://127.0.0.1:")
    assert first_url.startswith("http://127.0.0.1:")
    with pytest.raises(ValueError):
        HubSpotEmulator(cleared_properties="blank")


@pytest.mark.timeout(30)
def test_main_serves_until_sigterm(tmp_path: Path, dataset) -> None:
    data_file = tmp_path / "hubspot.json"
    data_file.write_text(json.dumps(dataset(3)), encoding="utf-8")
    module = "morpheus_pipelines.devtools.emulators.hubspot"
    cmd = [sys.executable, "-m", module, "--port", "0", "--data", str(data_file)]
    with serving(cmd) as base_url:
        assert base_url.startswith("http://127.0.0.1:")
        headers = {"Authorization": f"Bearer {dataset(1)['token']}"}
        resp = requests.get(f"{base_url}/crm/v3/lists/{LIST_ID}", headers=headers, timeout=5)
        assert resp.json()["list"]["size"] == 3
