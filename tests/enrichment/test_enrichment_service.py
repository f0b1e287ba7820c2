"""enrich_candidates against the real Domain Intelligence emulator over HTTP (no mocks)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from morpheus_pipelines.devtools.emulators import DomainIntelEmulator
from morpheus_pipelines.platform.clients.domain_intelligence import DomainIntelligenceClient
from morpheus_pipelines.platform.text.normalise import email_domain
from morpheus_pipelines.tenants.steps.enrichment import OUTPUT_COLUMNS, enrich_candidates
from tests.enrichment.helpers import ListHandler, candidates, sent_batches, sent_ids
from tests.support.events import EventLines
from tests.support.hubspot import RecordingSleep

MakeClient = Callable[..., DomainIntelligenceClient]
RunLog = tuple[logging.Logger, ListHandler]


def _frame(rows: list[tuple[object, object, object]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["tenant_id", "name", "email"])


def test_results_merged_per_tenant_in_input_order(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    frame = _frame(
        [
            ("t-404", "Nobody", "ops@unknown-co.com"),
            ("t-2", "Harbour", "Jane@Harbour.com.AU"),
            ("t-9", "Sakura", "taro@sakura.co.jp"),
            ("t-1", "Lion City", "ceo@gmail.com"),
        ]
    )
    frame.index = [40, 20, 90, 10]  # a caller's index survives, rows are not re-sorted
    result = enrich_candidates(frame, make_client(), run_id="run-1")
    out = result.frame

    assert tuple(out.columns) == OUTPUT_COLUMNS
    assert list(out.index) == [40, 20, 90, 10]
    assert out["tenant_id"].tolist() == ["t-404", "t-2", "t-9", "t-1"]
    assert out["enrichment_status"].tolist() == ["not_found", "enriched", "enriched", "enriched"]
    assert out["email_domain"].tolist() == [
        "unknown-co.com",
        "harbour.com.au",
        "sakura.co.jp",
        "gmail.com",
    ]
    assert out["email_domain_class"].tolist() == ["corporate", "corporate", "corporate", "free"]
    assert out.loc[10, "company_name"] == "Lion City Pte Ltd"
    assert out.loc[10, "employee_count"] == 120
    assert out.loc[20, "official_website"] == "https://harbour.com.au"
    assert out.loc[20, "company_name"] is None  # None, not NaN, for the database layer
    assert pd.isna(out.loc[20, "employee_count"])
    assert out.loc[90, "company_name"] == "Sakura KK"  # the service matched the email domain
    assert out.loc[40, ["official_website", "company_name", "industry", "country"]].isna().all()
    assert str(out["employee_count"].dtype) == "Int64"
    assert out["enrichment_error_count"].dtype == np.int64
    assert out["enrichment_error_count"].tolist() == [0, 0, 0, 0]
    assert out["enrichment_ms"].dtype == np.int64
    assert (out["enrichment_ms"] >= 0).all()
    assert result.status_counts == {"enriched": 3, "not_found": 1, "unavailable": 0}
    assert (result.batches, result.failed_batches, result.requests, result.retries) == (1, 0, 1, 0)


def test_personal_email_domains_are_not_sent_to_the_service(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    frame = _frame(
        [
            ("t-1", "A", "a@gmail.com"),
            ("x-2", "B", "b@guerrillamail.com"),
            ("x-3", "C", "c@acme.sg"),
        ]
    )
    out = enrich_candidates(frame, make_client()).frame

    (batch,) = sent_batches(emulator)
    assert [item["email_domain"] for item in batch] == [None, None, "acme.sg"]
    assert out["email_domain_class"].tolist() == ["free", "disposable", "corporate"]
    assert out["email_domain"].tolist() == ["gmail.com", "guerrillamail.com", "acme.sg"]


def test_more_than_100_candidates_are_split_into_batches_of_at_most_100(
    emulator: DomainIntelEmulator, make_client: MakeClient, run_log: RunLog
) -> None:
    frame = candidates(250)
    frame.loc[7, "tenant_id"] = "t-1"  # one known tenant in the first batch
    logger, handler = run_log
    result = enrich_candidates(frame, make_client(), max_workers=3, log=logger, progress_every=2)

    batches = sent_ids(emulator)
    assert sorted(len(b) for b in batches) == [50, 100, 100]
    sent = [tenant for batch in batches for tenant in batch]
    assert sorted(sent) == sorted(frame["tenant_id"])  # each tenant exactly once
    assert result.batches == 3
    assert result.requests == 3
    assert result.frame["tenant_id"].tolist() == frame["tenant_id"].tolist()
    assert result.frame.loc[7, "enrichment_status"] == "enriched"
    assert result.status_counts == {"enriched": 1, "not_found": 249, "unavailable": 0}
    progress = [m for _, m in handler.messages if "batches done" in m]
    assert progress == [
        "enrichment: 2/3 batches done, 0 failed, 2 requests",
        "enrichment: 3/3 batches done, 0 failed, 3 requests",
    ]


def test_batches_are_sent_concurrently(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    emulator.slow(0.5, times=4)
    client = make_client()
    started = time.monotonic()
    result = enrich_candidates(candidates(40), client, batch_size=10, max_workers=4)
    elapsed = time.monotonic() - started

    assert result.batches == 4
    assert result.status_counts["not_found"] == 40
    assert elapsed < 1.5  # four 0.5 s calls one after the other would take 2 s
    assert all(ms >= 450 for ms in result.frame["enrichment_ms"])
    # A second run with the same client reuses its HTTP sessions instead of opening more.
    enrich_candidates(candidates(40), client, batch_size=10, max_workers=4)
    assert len(client._all_sessions) <= 4


def test_duplicate_and_missing_tenant_ids(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    frame = _frame(
        [
            ("t-1", "A", "a@acme.sg"),
            (" t-1 ", "A again", "a@acme.sg"),
            (None, "no id", "x@acme.sg"),
            ("", "empty id", "y@acme.sg"),
            ("t-2", "B", None),
        ]
    )
    frame.index = [5, 5, 5, 6, 6]  # repeated labels must not confuse the merge
    out = enrich_candidates(frame, make_client()).frame

    assert list(out.index) == [5, 5, 5, 6, 6]
    assert sent_ids(emulator) == [["t-1", "t-2"]]  # distinct, trimmed, no empty ids
    assert out["tenant_id"].tolist()[:2] == ["t-1", " t-1 "]  # the caller's values untouched
    assert out["enrichment_status"].tolist() == [
        "enriched",
        "enriched",
        "unavailable",
        "unavailable",
        "enriched",
    ]
    assert out["company_name"].tolist()[:2] == ["Lion City Pte Ltd"] * 2


def test_transient_failures_retried_and_counted_per_tenant(
    emulator: DomainIntelEmulator, make_client: MakeClient, sleeps: RecordingSleep
) -> None:
    emulator.fail(429, retry_after=2)
    emulator.fail(503, times=1)
    emulator.fail("reset", times=1)
    result = enrich_candidates(candidates(30), make_client(), max_workers=1)

    assert emulator.log.statuses("enrich") == [429, 503, None, 200]
    assert emulator.log.count("enrich", fault="reset") == 1
    assert sleeps.waits[0] == 2.0  # Retry-After honoured exactly
    assert len(sleeps.waits) == 3
    assert result.status_counts["not_found"] == 30
    assert result.frame["enrichment_error_count"].tolist() == [3] * 30
    assert (result.requests, result.retries, result.failed_batches) == (4, 3, 0)


def test_permanent_failure_marks_only_that_batch_unavailable(
    emulator: DomainIntelEmulator,
    make_client: MakeClient,
    sleeps: RecordingSleep,
    event_lines: EventLines,
    run_log: RunLog,
) -> None:
    # One worker makes the order deterministic: batch 1 is request 1, batch 2 gets requests 2-4
    # (all 503), batch 3 request 5.
    emulator.fail(503, endpoint="enrich", nth=2, times=3)
    frame = candidates(25)
    frame.loc[0, "tenant_id"] = "t-1"
    frame.loc[12, "tenant_id"] = "t-2"  # in the failing batch: known, but not reachable
    frame.loc[24, "email"] = "boss@sakura.co.jp"
    logger, handler = run_log
    result = enrich_candidates(
        frame, make_client(retry_count=2), batch_size=10, max_workers=1, log=logger, run_id="r-7"
    )
    out = result.frame

    assert emulator.log.statuses("enrich") == [200, 503, 503, 503, 200]
    assert (out.loc[10:19, "enrichment_status"] == "unavailable").all()
    assert out.loc[10:19, "enrichment_error_count"].tolist() == [3] * 10
    assert out.loc[12, "official_website"] is None
    assert out.loc[0, "enrichment_status"] == "enriched"
    assert out.loc[24, "company_name"] == "Sakura KK"
    assert (out.drop(index=range(10, 20))["enrichment_error_count"] == 0).all()
    assert result.status_counts == {"enriched": 2, "not_found": 13, "unavailable": 10}
    assert (result.batches, result.failed_batches, result.requests, result.retries) == (3, 1, 5, 2)

    (failed,) = event_lines.events("enrichment_batch_failed")
    assert failed["run_id"] == "r-7"
    assert failed["batch"] == 2
    assert failed["attempts"] == 3
    assert failed["http_status"] == 503
    assert failed["tenant_ids"][2] == "t-2"
    assert all("@" not in line for line in event_lines.lines)  # no email, masked or not
    assert any(level == logging.WARNING and "batch 2" in m for level, m in handler.messages)


def test_service_down_for_good_marks_remaining_batches_unavailable(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    emulator.fail(503, endpoint="enrich", nth=2, times=None)
    result = enrich_candidates(
        candidates(30), make_client(retry_count=1), batch_size=10, max_workers=1
    )
    statuses = result.frame["enrichment_status"].tolist()

    assert statuses == ["not_found"] * 10 + ["unavailable"] * 20
    assert result.frame["enrichment_error_count"].tolist() == [0] * 10 + [2] * 20
    assert result.failed_batches == 2
    assert emulator.log.count("enrich") == 5


def test_no_service_configured_marks_everyone_unavailable_at_once(
    event_lines: EventLines,
) -> None:
    frame = _frame([("a", "A", "x@Acme.com.au"), ("b", "B", "y@qq.com"), ("c", "C", None)] * 1000)
    started = time.monotonic()
    result = enrich_candidates(frame, None, run_id="r-0")

    assert time.monotonic() - started < 2.0
    assert result.status_counts == {"enriched": 0, "not_found": 0, "unavailable": 3000}
    assert (result.batches, result.requests, result.failed_batches) == (0, 0, 0)
    out = result.frame
    assert out["email_domain"].tolist()[:3] == ["acme.com.au", "qq.com", None]
    assert out["email_domain_class"].tolist()[:3] == ["corporate", "free", "missing"]
    assert (out["enrichment_error_count"] == 0).all()
    assert (out["enrichment_ms"] == 0).all()
    assert out["employee_count"].isna().all()
    (completed,) = event_lines.events("enrichment_completed")
    assert completed["configured"] is False
    assert completed["run_id"] == "r-0"


MALFORMED_EMAILS: list[object] = [
    None,
    "",
    "   ",
    "no-at-sign",
    "a@@b",
    "@acme.com",
    "user@",
    "用户@例子.中国",
    "\uff2a\uff21\uff2e\uff25\uff20\uff21\uff23\uff2d\uff25\uff0e\uff23\uff2f\uff2d",  # full width
    "x" * 5000,
    "a" * 5000 + "@acme.com",
    "b@" + "c" * 5000 + ".com",
    "tab\t@acme.com",
    "nul\x00@acme.com",
    "x@1.2.3.4",
    "x@[::1]",
    float("nan"),
    12345,
    b"bytes@acme.com",
    ["list@acme.com"],
]


def test_malformed_candidate_data_never_crashes(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    n = len(MALFORMED_EMAILS)
    names: list[object] = [None, float("nan"), "", "n" * 5000, 42, "Ünïcödé 公司"] * n
    frame = pd.DataFrame(
        {
            "tenant_id": [f"m-{i}" for i in range(n)],
            "name": names[:n],
            "email": pd.Series(MALFORMED_EMAILS, dtype=object),
        }
    )
    result = enrich_candidates(frame, make_client())
    out = result.frame

    assert len(out) == n
    assert out["email_domain"].tolist() == [email_domain(e) for e in MALFORMED_EMAILS]
    assert out["email_domain"].tolist()[7] == "xn--fsqu00a.xn--fiqs8s"  # punycode
    assert out.loc[out["email_domain"].isna(), "email_domain_class"].eq("missing").all()
    assert result.status_counts["not_found"] == n
    (batch,) = sent_batches(emulator)
    assert all(item["name"] is None or len(item["name"]) <= 256 for item in batch)
    assert all(item["name"] is None or isinstance(item["name"], str) for item in batch)
    assert [item["email_domain"] for item in batch] == [
        d if c == "corporate" else None
        for d, c in zip(out["email_domain"], out["email_domain_class"], strict=True)
    ]


def test_service_garbage_is_coerced_not_fatal(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    emulator.fail(
        200,
        body={
            "results": [
                {"tenant_id": "c-0", "company_name": "Zero", "employee_count": "45"},
                {"tenant_id": "c-1", "company_name": "One", "employee_count": "about 50"},
                {"tenant_id": "c-2", "employee_count": None, "country": ["SG"]},
                # c-3 left out of the answer
                {"tenant_id": "nobody-asked", "company_name": "X"},
            ]
        },
    )
    result = enrich_candidates(candidates(4), make_client())
    out = result.frame

    assert out["employee_count"].tolist()[:2] == [45, pd.NA]
    assert str(out["employee_count"].dtype) == "Int64"
    assert out["enrichment_status"].tolist() == ["enriched", "enriched", "not_found", "unavailable"]
    assert out["country"].tolist()[2] is None
    assert out["enrichment_error_count"].tolist() == [0, 0, 0, 1]
    assert result.ignored_results == 1


def test_slow_service_beyond_read_timeout(
    emulator: DomainIntelEmulator, make_client: MakeClient
) -> None:
    # First batch: one slow answer, retried, then fine. Second batch: slow for good.
    emulator.slow(1.0, nth=1, times=1)
    emulator.slow(1.0, nth=3, times=None)
    client = make_client(read_timeout=0.2, retry_count=1)
    result = enrich_candidates(candidates(20), client, batch_size=10, max_workers=1)
    out = result.frame

    assert out["enrichment_status"].tolist() == ["not_found"] * 10 + ["unavailable"] * 10
    assert out["enrichment_error_count"].tolist() == [1] * 10 + [2] * 10
    assert client.stats.by_status.get("ReadTimeout") == 3
    assert result.failed_batches == 1


def test_empty_candidates_give_an_empty_frame_with_the_contract(make_client: MakeClient) -> None:
    result = enrich_candidates(_frame([]), make_client())
    assert tuple(result.frame.columns) == OUTPUT_COLUMNS
    assert len(result.frame) == 0
    assert str(result.frame["employee_count"].dtype) == "Int64"
    assert result.requests == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_size": 101}, "batch_size"),
        ({"batch_size": 0}, "batch_size"),
        ({"max_workers": 0}, "max_workers"),
    ],
)
def test_wrong_calls_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        enrich_candidates(candidates(1), None, **kwargs)
    with pytest.raises(ValueError, match="lack column"):
        enrich_candidates(candidates(1).drop(columns=["email"]), None)
