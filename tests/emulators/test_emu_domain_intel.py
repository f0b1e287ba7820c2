"""Domain Intelligence emulator: the enrichment contract, faults, data files, CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import requests

from morpheus_pipelines.devtools.emulators import DomainIntelEmulator
from tests.support.emulator_process import serving

ENRICH = "/v1/enrich/batch"
FIELDS = {"tenant_id", "official_website", "company_name", "industry", "employee_count", "country"}


def _inputs(*tenants: tuple[str, str | None]) -> dict:
    return {
        "inputs": [
            {"tenant_id": t, "name": f"Tenant {t}", "email_domain": domain} for t, domain in tenants
        ]
    }


def test_enrich_known_unknown_and_domain_fallback(domain_intel: DomainIntelEmulator) -> None:
    body = _inputs(("t-1", "gmail.com"), ("t-9", "Sakura.co.jp"), ("t-404", None), ("t-2", None))
    resp = requests.post(domain_intel.url(ENRICH), json=body, timeout=5)
    assert resp.status_code == 200
    results = resp.json()["results"]
    assert [r["tenant_id"] for r in results] == ["t-1", "t-9", "t-404", "t-2"]
    assert all(set(r) == FIELDS for r in results)
    assert results[0]["official_website"] == "https://www.lioncity.com.sg"
    assert results[0]["employee_count"] == 120
    assert results[1]["company_name"] == "Sakura KK"  # matched by email domain
    assert results[1]["employee_count"] == 45
    assert results[2] == dict.fromkeys(FIELDS) | {"tenant_id": "t-404"}
    assert results[3]["industry"] is None  # known tenant, field unknown


def test_enrich_accepts_100_and_rejects_101(domain_intel: DomainIntelEmulator) -> None:
    hundred = _inputs(*[(f"x-{i}", None) for i in range(100)])
    assert requests.post(domain_intel.url(ENRICH), json=hundred, timeout=5).status_code == 200
    hundred["inputs"].append({"tenant_id": "x-100", "name": "n", "email_domain": None})
    resp = requests.post(domain_intel.url(ENRICH), json=hundred, timeout=5)
    assert resp.status_code == 400
    assert resp.json()["error"] == "too_many_inputs"


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[]", b'{"inputs": {}}', b'{"inputs": [{"name": "no id"}]}'],
)
def test_enrich_rejects_malformed_bodies(domain_intel: DomainIntelEmulator, body: bytes) -> None:
    resp = requests.post(domain_intel.url(ENRICH), data=body, timeout=5)
    assert resp.status_code == 400
    assert resp.json()["error"] == "invalid_request"


def test_health_and_unknown_route(domain_intel: DomainIntelEmulator) -> None:
    assert requests.get(domain_intel.url("/healthz"), timeout=5).json() == {"status": "ok"}
    assert requests.get(domain_intel.url("/v1/nope"), timeout=5).status_code == 404


def test_429_with_retry_after_then_recovers(domain_intel: DomainIntelEmulator) -> None:
    domain_intel.fail(429, retry_after=2)
    body = _inputs(("t-1", None))
    first = requests.post(domain_intel.url(ENRICH), json=body, timeout=5)
    assert first.status_code == 429
    assert first.headers["Retry-After"] == "2"
    assert first.json()["error"] == "rate_limited"
    assert requests.post(domain_intel.url(ENRICH), json=body, timeout=5).status_code == 200
    assert domain_intel.log.statuses("enrich") == [429, 200]


def test_5xx_n_times_on_nth_request(domain_intel: DomainIntelEmulator) -> None:
    domain_intel.fail(503, endpoint="enrich", nth=2, times=2)
    body = _inputs(("t-1", None))
    statuses = [
        requests.post(domain_intel.url(ENRICH), json=body, timeout=5).status_code for _ in range(4)
    ]
    assert statuses == [200, 503, 503, 200]


def test_transport_faults(domain_intel: DomainIntelEmulator) -> None:
    body = _inputs(("t-1", None))
    domain_intel.fail("reset")
    with pytest.raises(requests.ConnectionError):
        requests.post(domain_intel.url(ENRICH), json=body, timeout=5)
    domain_intel.fail("truncated_json")
    resp = requests.post(domain_intel.url(ENRICH), json=body, timeout=5)
    with pytest.raises(requests.JSONDecodeError):
        resp.json()
    domain_intel.slow(0.5)
    with pytest.raises(requests.ReadTimeout):
        requests.post(domain_intel.url(ENRICH), json=body, timeout=(1, 0.2))
    assert [e.fault for e in domain_intel.log.entries()] == ["reset", "truncated_json", "slow"]


def test_hubspot_only_faults_are_refused(domain_intel: DomainIntelEmulator) -> None:
    with pytest.raises(ValueError, match="not supported"):
        domain_intel.fail("rate_limit")


def test_token_and_mutations(domain_intel: DomainIntelEmulator) -> None:
    body = _inputs(("t-3", None), ("t-1", None))
    domain_intel.set_token("secret")
    assert requests.post(domain_intel.url(ENRICH), json=body, timeout=5).status_code == 401
    domain_intel.set_tenant("t-3", {"country": "NZ"})
    domain_intel.remove_tenant("t-1")
    headers = {"Authorization": "Bearer secret"}
    resp = requests.post(domain_intel.url(ENRICH), json=body, headers=headers, timeout=5)
    results = resp.json()["results"]
    assert results[0]["country"] == "NZ"
    assert results[1]["official_website"] is None


def test_from_file_and_save(tmp_path: Path, domain_intel_data: dict) -> None:
    path = tmp_path / "di.json"
    path.write_text(json.dumps(domain_intel_data), encoding="utf-8")
    with DomainIntelEmulator.from_file(path) as emu:
        emu.set_domain("Kiwi.NZ", {"country": "NZ"})
        emu.save(tmp_path / "saved.json")
        resp = requests.post(emu.url(ENRICH), json=_inputs(("t-7", "kiwi.nz")), timeout=5)
        assert resp.json()["results"][0]["country"] == "NZ"
    saved = json.loads((tmp_path / "saved.json").read_text())
    assert saved["domains"]["kiwi.nz"]["country"] == "NZ"
    assert saved["tenants"]["t-1"]["employee_count"] == 120


@pytest.mark.timeout(30)
def test_main_serves_until_sigterm(tmp_path: Path, domain_intel_data: dict) -> None:
    path = tmp_path / "di.json"
    path.write_text(json.dumps(domain_intel_data), encoding="utf-8")
    module = "morpheus_pipelines.devtools.emulators.domain_intel"
    cmd = [sys.executable, "-m", module, "--port", "0", "--data", str(path)]
    with serving(cmd) as base_url:
        resp = requests.post(f"{base_url}{ENRICH}", json=_inputs(("t-1", None)), timeout=5)
        assert resp.json()["results"][0]["country"] == "SG"
