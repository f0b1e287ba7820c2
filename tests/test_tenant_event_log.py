"""The per-tenant event log: one valid JSON line per tenant, whatever the tenant id holds."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morpheus_pipelines.platform.observability.events import json_lines
from morpheus_pipelines.platform.observability.redaction import register_secret
from morpheus_pipelines.tenants.steps.tenant_events import TenantEventLog

SECRET = "pat-na1-EVENTLOG-SECRET-0000"
AWKWARD_IDS = [
    "t1",
    'quote " and backslash \\',
    'line\n{"tenant_id": "spliced"} and a brace',
    "tab\tand unicode 日本語 ✓",
    f"holds {SECRET}",
]


def _context() -> SimpleNamespace:
    snapshot = SimpleNamespace(sync_id="20261129T000000Z-abc", status="stale", age_seconds=90.5)
    return SimpleNamespace(run_id="run-1", partition_key="2026-11-29", snapshot=snapshot)


def _strict(constant: str) -> None:
    raise AssertionError(f"{constant} is not JSON")


def _lines(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line, parse_constant=_strict) for line in text.split("\n")[:-1]]


def test_every_tenant_gets_one_parseable_line_with_batch_and_tenant_fields(tmp_path) -> None:
    register_secret(SECRET)
    log = TenantEventLog(tmp_path / "events.jsonl")
    frame = pd.DataFrame(
        {
            "tenant_id": AWKWARD_IDS,
            "source_type": ["active"] * 4 + ["signup"],
            "enrichment_status": ["enriched", None, "unavailable", "not_found", "enriched"],
            "enrichment_error_count": [0, 0, 2, 0, 1],
        }
    )
    log.tenants_started(frame, _context(), offset=10)
    decisions = frame.assign(
        hubspot_match_method=["portal_id", None, None, "email_domain", None],
        hubspot_company_id=["7000", None, None, "7001", None],
        ambiguous_match=[False, False, True, False, False],
        sales_owned_match=[False, True, False, False, False],
        tenant_bucket=["active", "sales_owned", "active", "active", "active"],
        rejection_reason=[None, None, None, None, "invalid tenant id"],
    )
    log.tenants_completed(decisions, _context(), elapsed=0.5, offset=10)

    started, completed = _lines(log.path)[:5], _lines(log.path)[5:]
    assert len(completed) == 5
    assert [e["tenant_id"] for e in started[:4]] == AWKWARD_IDS[:4]
    assert started[4]["tenant_id"] == "holds ***"  # registered secrets never reach the file
    for index, event in enumerate(started):
        assert list(event)[:3] == ["ts", "level", "event"]
        assert event["event"] == "tenant_routing_started"
        assert event["run_id"] == "run-1" and event["sync_id"] == "20261129T000000Z-abc"
        assert event["snapshot_status"] == "stale" and event["snapshot_age_seconds"] == 90.5
        assert event["record_index"] == 10 + index
    assert started[1]["enrichment_status"] is None
    assert [e["match_result"] for e in completed] == [
        "portal_id",
        "none",
        "none",
        "email_domain",
        "none",
    ]
    assert [e["status"] for e in completed] == ["routed"] * 4 + ["rejected"]
    assert completed[1]["sales_owned_match"] is True
    for event in completed:
        assert event["event"] == "tenant_routing_completed"
        assert (event["run_id"], event["partition_key"]) == ("run-1", "2026-11-29")
        assert event["sync_id"] == "20261129T000000Z-abc"
        assert event["elapsed_seconds"] == 0.1


def test_scored_and_rejected_tenants_and_a_nan_shared_field(tmp_path) -> None:
    log = TenantEventLog(tmp_path / "events.jsonl")
    scores = pd.DataFrame(
        {
            "tenant_id": ["t1", "t2"],
            "tenant_bucket": ["active", "sales_owned"],
            "total_score": [71.5, float("nan")],
            "calculated_priority": ["P1", None],
            "priority": ["P0", None],
            "priority_reason": ["hubspot_target_account", None],
        }
    )
    rejected = pd.DataFrame(
        {"tenant_id": ["t3"], "tenant_bucket": ["archive"], "rejection_reason": ["bad bucket"]}
    )
    log.tenants_scored(scores, rejected, run_id="run-1", partition_key="2026-11-29")
    snapshot = SimpleNamespace(sync_id=None, status="unavailable", age_seconds=float("nan"))
    context = SimpleNamespace(run_id="run-2", partition_key="2026-11-29", snapshot=snapshot)
    log.tenants_started(scores[["tenant_id"]].assign(source_type="active"), context, offset=0)

    scored_1, scored_2, rejected_3, started_1, _ = _lines(log.path)
    assert scored_1["event"] == "tenant_scored" and scored_1["priority"] == "P0"
    assert scored_1["total_score"] == 71.5 and scored_2["total_score"] is None
    assert rejected_3["event"] == "tenant_scoring_rejected"
    assert rejected_3["level"] == "WARNING" and rejected_3["rejection_reason"] == "bad bucket"
    assert started_1["snapshot_age_seconds"] is None and started_1["sync_id"] is None


def test_an_empty_batch_writes_nothing(tmp_path) -> None:
    log = TenantEventLog(tmp_path / "events.jsonl")
    empty = pd.DataFrame(
        {
            "tenant_id": [],
            "tenant_bucket": [],
            "total_score": [],
            "calculated_priority": [],
            "priority": [],
            "priority_reason": [],
        }
    )
    log.tenants_scored(empty, empty.head(0), run_id="run-1", partition_key="2026-11-29")
    assert not log.path.exists() or log.path.read_text() == ""


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.text(alphabet=st.characters(exclude_categories=("Cs",)))),
            st.one_of(st.none(), st.integers(-(2**53), 2**53)),
            st.one_of(st.none(), st.booleans()),
            st.floats(allow_nan=True, allow_infinity=True),
        ),
        max_size=30,
    )
)
def test_json_lines_round_trip_any_values(rows: list[tuple]) -> None:
    texts = [r[0] for r in rows]
    numbers = [r[1] for r in rows]
    flags = [r[2] for r in rows]
    floats = [r[3] for r in rows]
    lines = json_lines(
        {"event": "e", "age": 1.5},
        {
            "text": pd.Series(texts, dtype=object),
            "number": pd.array(numbers, dtype="Int64"),
            "flag": pd.Series(flags, dtype=object),
            "float": np.array(floats, dtype=float),
        },
    )
    # split on "\n" only: str.splitlines would also split inside values at U+0085, U+2028, ...
    text = lines.decode("utf-8")
    parsed = [json.loads(line, parse_constant=_strict) for line in text.split("\n")[:-1]]
    assert text.count("\n") == len(rows)
    for event, (text, number, flag, value) in zip(parsed, rows, strict=True):
        assert list(event) == ["event", "age", "text", "number", "flag", "float"]
        assert (event["event"], event["age"]) == ("e", 1.5)
        assert (event["text"], event["number"], event["flag"]) == (text, number, flag)
        assert event["float"] == (value if math.isfinite(value) else None)


def test_json_lines_of_arrow_backed_columns_in_several_chunks() -> None:
    """Arrow-backed columns may come in several chunks (``read_frame`` combines its own, but
    a caller's frame need not)."""
    chunked = pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array([["a", None], ["b"]])))
    counts = pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array([[1], [None, 3]])))
    lines = json_lines({}, {"tenant_id": chunked, "count": counts}).decode()
    assert lines.split("\n")[:-1] == [
        '{"tenant_id":"a","count":1}',
        '{"tenant_id":null,"count":null}',
        '{"tenant_id":"b","count":3}',
    ]


@pytest.mark.parametrize("position", ["first", "last"])
def test_json_lines_escape_what_a_slice_of_a_column_holds(position: str) -> None:
    """A column without nulls is joined with its quotes in the separators, and is escaped only
    when its own bytes need it: here an Arrow-backed slice whose parent's other values are
    plain, so a scan of the wrong bytes would skip the escapes."""
    values = ["plain", 'a "quote"', "back\\slash", "tab\there", "naïve 中文", "plain"]
    parent = pa.array(["x"] * 50 + values + ["y"] * 50)
    column = pd.Series(pd.arrays.ArrowExtensionArray(parent.slice(50, len(values))))
    counts = list(range(len(values)))
    per_row = {"text": column, "n": counts}
    if position == "last":
        per_row = {"n": counts, "text": column}
    lines = json_lines({"event": "e"}, per_row).decode("utf-8").split("\n")[:-1]
    assert [json.loads(line) for line in lines] == [
        {"event": "e", **{name: row[name] for name in per_row}}
        for row in ({"text": text, "n": n} for n, text in enumerate(values))
    ]
