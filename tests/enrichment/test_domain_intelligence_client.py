"""DomainIntelligenceClient against the real emulator over HTTP: contract, retries, validation."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from morpheus_pipelines.devtools.emulators import DomainIntelEmulator
from morpheus_pipelines.platform.clients.domain_intelligence import (
    DomainIntelligenceClient,
    DomainIntelligenceError,
    coerce_employee_count,
)
from morpheus_pipelines.platform.clients.http import retry_after_seconds
from morpheus_pipelines.resources.domain_intelligence import DomainIntelligenceResource
from tests.enrichment.helpers import sent_batches
from tests.support.events import EventLines
from tests.support.hubspot import RecordingSleep

MakeClient = Callable[..., DomainIntelligenceClient]
NULLS = {"official_website": None, "company_name": None, "industry": None, "country": None}


def _inputs(*ids: str, domain: str | None = None) -> list[dict]:
    return [{"tenant_id": i, "name": f"Name {i}", "email_domain": domain} for i in ids]


def test_enrich_batch_sends_the_contract_and_returns_validated_results(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    client = make_client()
    inputs = [*_inputs("t-1", "t-404"), {"tenant_id": "t-9", "name": None, "extra": "dropped"}]
    inputs[2]["email_domain"] = "sakura.co.jp"
    results = client.enrich_batch(inputs)

    assert [r["tenant_id"] for r in results] == ["t-1", "t-404", "t-9"]
    assert results[0]["company_name"] == "Lion City Pte Ltd"
    assert results[0]["employee_count"] == 120
    assert results[1] == {"tenant_id": "t-404", "employee_count": None, **NULLS}
    assert results[2]["company_name"] == "Sakura KK"  # found by email domain
    # On the wire: exactly the three contract fields per input, nothing else.
    (body,) = sent_batches(emulator)
    assert [set(item) for item in body] == [{"tenant_id", "name", "email_domain"}] * 3
    assert emulator.log.last("enrich").path == "/v1/enrich/batch"
    assert client.stats.requests == 1
    assert client.stats.retries == 0


def test_more_than_100_inputs_is_refused_before_any_request(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    client = make_client()
    with pytest.raises(ValueError, match="at most 100"):
        client.enrich_batch(_inputs(*(f"x-{i}" for i in range(101))))
    assert len(emulator.log) == 0
    assert len(client.enrich_batch(_inputs(*(f"x-{i}" for i in range(100))))) == 100


def test_429_honours_retry_after_exactly(
    emulator: DomainIntelEmulator,
    make_client: MakeClient,
    sleeps: RecordingSleep,
    event_lines: EventLines,
) -> None:
    emulator.fail(429, retry_after=2)
    client = make_client()
    response = client.enrich_batch_detailed(_inputs("t-1"))

    assert response.results[0]["company_name"] == "Lion City Pte Ltd"
    assert response.attempts == 2
    assert emulator.log.statuses("enrich") == [429, 200]
    assert sleeps.waits == [2.0]
    assert client.stats.rate_limited == 1
    assert client.stats.retries == 1
    assert client.stats.by_status == {"429": 1, "200": 1}
    (retry,) = event_lines.events("domain_intelligence_retry")
    assert retry["wait_seconds"] == 2.0


def test_5xx_retried_with_jittered_backoff_then_ok(
    emulator: DomainIntelEmulator, make_client: MakeClient, sleeps: RecordingSleep
) -> None:
    emulator.fail(503, endpoint="enrich", nth=2, times=2)
    client = make_client()
    client.enrich_batch(_inputs("t-1"))
    response = client.enrich_batch_detailed(_inputs("t-2"))

    assert response.results[0]["country"] == "AU"
    assert response.attempts == 3
    assert emulator.log.statuses("enrich") == [200, 503, 503, 200]
    # Full jitter: attempt k waits uniformly in [0, 0.5 * 2^k].
    assert len(sleeps.waits) == 2
    assert 0 <= sleeps.waits[0] <= 0.5
    assert 0 <= sleeps.waits[1] <= 1.0


@pytest.mark.parametrize("fault", ["reset", "truncated_json", "short_body"])
def test_broken_connections_and_bodies_are_retried(
    emulator: DomainIntelEmulator, make_client: MakeClient, sleeps: RecordingSleep, fault: str
) -> None:
    emulator.fail(fault, times=2)
    response = make_client().enrich_batch_detailed(_inputs("t-1"))

    assert response.results[0]["official_website"] == "https://www.lioncity.com.sg"
    assert response.attempts == 3
    assert emulator.log.count("enrich", fault=fault) == 2
    assert len(sleeps.waits) == 2


def test_slow_response_beyond_read_timeout_is_retried(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    emulator.slow(1.0, times=1)
    client = make_client(read_timeout=0.2)
    response = client.enrich_batch_detailed(_inputs("t-1"))

    assert response.attempts == 2
    assert response.results[0]["company_name"] == "Lion City Pte Ltd"
    assert client.stats.by_status.get("ReadTimeout") == 1


def test_persistent_5xx_gives_up_after_bounded_attempts(
    emulator: DomainIntelEmulator, make_client: MakeClient, sleeps: RecordingSleep
) -> None:
    emulator.fail(503, times=None)
    client = make_client(retry_count=2)
    with pytest.raises(DomainIntelligenceError, match="after 3 attempts") as caught:
        client.enrich_batch(_inputs("t-1"))

    assert caught.value.attempts == 3
    assert caught.value.status == 503
    assert emulator.log.statuses("enrich") == [503, 503, 503]
    assert len(sleeps.waits) == 2  # no wait after the last attempt


def test_retry_after_longer_than_max_backoff_fails_at_once(
    emulator: DomainIntelEmulator, make_client: MakeClient, sleeps: RecordingSleep
) -> None:
    emulator.fail(429, retry_after=120, times=None)
    with pytest.raises(DomainIntelligenceError, match="asked to wait 120s") as caught:
        make_client(max_backoff=30).enrich_batch(_inputs("t-1"))

    assert caught.value.attempts == 1
    assert emulator.log.count("enrich") == 1
    assert sleeps.waits == []


@pytest.mark.parametrize("status", [400, 404, 422])
def test_other_4xx_fail_at_once(
    emulator: DomainIntelEmulator, make_client: MakeClient, sleeps: RecordingSleep, status: int
) -> None:
    emulator.fail(status, times=None)
    with pytest.raises(DomainIntelligenceError, match=f"HTTP {status}") as caught:
        make_client().enrich_batch(_inputs("t-1"))

    assert caught.value.status == status
    assert caught.value.attempts == 1
    assert emulator.log.count("enrich") == 1
    assert sleeps.waits == []


def test_401_fails_at_once_and_never_shows_the_token(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    emulator.set_token("di-secret-token-123")
    with pytest.raises(DomainIntelligenceError) as caught:
        make_client(token="wrong-token-456").enrich_batch(_inputs("t-1"))

    assert caught.value.status == 401
    assert "wrong-token-456" not in str(caught.value)
    assert emulator.log.count("enrich") == 1
    assert make_client(token="di-secret-token-123").enrich_batch(_inputs("t-1"))[0]["country"]


def test_results_are_validated_and_bad_entries_counted(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    body = {
        "results": [
            {"tenant_id": "a", "company_name": "  A Co  ", "employee_count": "45", "x": 1},
            {"tenant_id": "b", "official_website": 12, "employee_count": "lots"},
            {"tenant_id": "a", "company_name": "duplicate"},  # repeats a: ignored
            {"tenant_id": "zzz", "company_name": "never asked"},  # not asked: ignored
            {"company_name": "no id"},  # ignored
            "not an object",  # ignored
            None,  # ignored
        ]
    }
    emulator.fail(200, body=body)
    client = make_client()
    response = client.enrich_batch_detailed(_inputs("a", "b", "c"))

    assert response.ignored == 5
    assert client.ignored_results == 5
    assert response.results == [
        {"tenant_id": "a", **NULLS, "company_name": "A Co", "employee_count": 45},
        {"tenant_id": "b", **NULLS, "employee_count": None},
    ]


@pytest.mark.parametrize("body", [{"results": {"a": 1}}, {"items": []}, [], "null"])
def test_200_of_the_wrong_shape_is_an_error(
    emulator: DomainIntelEmulator, make_client: MakeClient, body: object
) -> None:
    emulator.fail(200, body=body if body != "null" else b"null")
    with pytest.raises(DomainIntelligenceError, match="without a 'results' list"):
        make_client().enrich_batch(_inputs("a"))
    assert emulator.log.count("enrich") == 1  # a service bug: not retried


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (45, 45),
        ("45", 45),
        (" 1,200 ", 1200),
        ("45.0", 45),
        (45.0, 45),
        (0, 0),
        (45.5, None),
        ("45.5", None),
        (-3, None),
        ("-3", None),
        (True, None),
        ("abc", None),
        ("1_000", None),
        ("٤٥", None),  # Arabic-Indic digits: int() accepts them, a service never means them
        ("9" * 5000, None),
        (float("nan"), None),
        (float("inf"), None),
        (2**31, None),
        ([45], None),
        (None, None),
    ],
)
def test_coerce_employee_count(raw: object, expected: int | None) -> None:
    assert coerce_employee_count(raw) == expected


@pytest.mark.parametrize("url", ["", "   ", "acme.example", "ftp://host", "http://"])
def test_base_url_must_be_absolute_http(url: str) -> None:
    with pytest.raises(ValueError, match="absolute http"):
        DomainIntelligenceClient(url)


def test_resource_returns_no_client_without_base_url(emulator: DomainIntelEmulator) -> None:
    assert DomainIntelligenceResource().get_client() is None
    assert DomainIntelligenceResource(base_url="  ").get_client() is None
    resource = DomainIntelligenceResource(
        base_url=emulator.base_url + "/", read_timeout=4.0, connect_timeout=1.5, retry_count=1
    )
    with resource.get_client() as client:
        assert client.base_url == emulator.base_url
        assert client.timeout == (1.5, 4.0)
        assert client.retry_count == 1
        assert client.enrich_batch(_inputs("t-2"))[0]["official_website"]


def test_one_retry_after_parser_reads_both_forms() -> None:
    now = datetime(2026, 12, 3, 21, 50, 0, tzinfo=UTC)
    assert retry_after_seconds("7", now=now) == 7.0
    assert retry_after_seconds(" 2.5 ", now=now) == 2.5
    later = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds(later, now=now) == 30.0
    earlier = format_datetime(now - timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds(earlier, now=now) == 0.0
    for bad in (None, "", "soon", "nan", "inf", "-inf"):
        assert retry_after_seconds(bad, now=now) is None, bad
    assert retry_after_seconds("-5", now=now) == 0.0
