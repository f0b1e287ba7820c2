"""What a routing run leaves for investigation (docs/observability.md): name hints in the
decision record and the event lines, snapshot evidence on every bucket row, record counts and
enrichment timings on the Worker lines, start and completion lines of Scoring with the sync
id, and the Dispatcher's selection and per-source totals as structured events."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

from morpheus_pipelines.assets.tenants.schedules import DAILY_ASSETS
from morpheus_pipelines.platform.observability.events import LOGGER_NAME
from tests.support.pipeline import Pipeline, load_source, tenant
from tests.support.tenants import PARTITION


def event_lines(home: str) -> list[dict]:
    path = Path(home) / "reports" / "tenant_events" / f"{PARTITION}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_routing_leaves_evidence_for_investigation(pipeline: Pipeline) -> None:
    load_source(
        pipeline.database_url,
        [
            # named like a target company, but nothing matches: a hint, never a match
            tenant("t-hint", name="Website Co", email="someone@gmail.com"),
            tenant("t-portal"),
            tenant("t-plain"),
        ],
    )
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger(LOGGER_NAME)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        result = pipeline.materialize(DAILY_ASSETS, PARTITION)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert result.success

    assert pipeline.query(
        "SELECT routing_rule, name_hint_company_id FROM apac_routing_decisions "
        "WHERE tenant_id = 't-hint'"
    ) == [("default_active", "504")]
    # snapshot evidence on every routed row, matched or not
    assert pipeline.query(
        "SELECT count(*), count(hubspot_sync_id), count(hubspot_snapshot_synced_at), "
        "count(hubspot_snapshot_status) FROM apac_active_tenants"
    ) == [(3, 3, 3, 3)]

    lines = event_lines(pipeline.home)
    by_event: dict[str, list[dict]] = {}
    for line in lines:
        by_event.setdefault(line["event"], []).append(line)
    started = {line["tenant_id"]: line for line in by_event["tenant_routing_started"]}
    assert {line["record_count"] for line in started.values()} == {3}
    assert sorted(line["record_index"] for line in started.values()) == [0, 1, 2]
    assert all(isinstance(line["enrichment_ms"], int) for line in started.values())
    completed = {line["tenant_id"]: line for line in by_event["tenant_routing_completed"]}
    assert completed["t-hint"]["name_hint_company_id"] == "504"
    assert completed["t-hint"]["match_result"] == "none"
    sync_id = pipeline.query("SELECT DISTINCT hubspot_sync_id FROM apac_routing_decisions")[0][0]
    scoring_started = by_event["tenant_scoring_started"]
    assert {line["tenant_id"] for line in scoring_started} == {"t-hint", "t-portal", "t-plain"}
    assert {line["sync_id"] for line in scoring_started} == {sync_id}
    assert {line["sync_id"] for line in by_event["tenant_scored"]} == {sync_id}

    events = [json.loads(line) for line in stream.getvalue().splitlines()]
    selection = next(e for e in events if e["event"] == "tenant_selection_completed")
    assert (selection["active"], selection["signup"], selection["total"]) == (3, 0, 3)
    routing = next(e for e in events if e["event"] == "routing_completed")
    assert routing["by_source_type"] == {"active": 3}
    assert routing["by_bucket"] == {"active": 3}
    assert routing["sync_id"] == sync_id and routing["snapshot_status"] == "fresh"
