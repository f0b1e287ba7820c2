"""The snapshot's materialisation metadata is typed: a count is an integer or absent (never
the text ``"n/a"``, which Dagster's ``TableMetadataSet`` refuses), an age a number, and a
figure the run does not know is left out. Run against the HubSpot emulator, on Postgres."""

from __future__ import annotations

import dagster as dg
from dagster._core.definitions.metadata.metadata_set import TableMetadataSet

from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from tests.support.pipeline import Pipeline
from tests.support.tenants import COMPANIES


def _metadata(result: dg.ExecuteInProcessResult) -> dict[str, dg.MetadataValue]:
    assert result.success  # a failed sync is recorded, the run goes on
    [event] = result.get_asset_materialization_events()
    return dict(event.materialization.metadata)


def _no_placeholders(metadata: dict[str, dg.MetadataValue]) -> None:
    texts = {k: v.value for k, v in metadata.items() if isinstance(v, dg.TextMetadataValue)}
    assert "n/a" not in texts.values(), texts
    TableMetadataSet.extract(metadata)  # raises on a row count that is not an int


def test_an_unavailable_snapshot_has_no_row_count_and_no_placeholder(
    pipeline: Pipeline, hubspot_emulator: HubSpotEmulator
) -> None:
    hubspot_emulator.fail("500", endpoint="list", times=None)  # HubSpot down, nothing before
    metadata = _metadata(pipeline.snapshot())

    _no_placeholders(metadata)
    assert metadata["snapshot_status"] == dg.MetadataValue.text("unavailable")
    assert "dagster/row_count" not in metadata
    assert TableMetadataSet.extract(metadata).row_count is None
    assert "snapshot_age_hours" not in metadata and "snapshot_sync_id" not in metadata
    assert "domain_roots_computed" not in metadata and "domain_roots_reused" not in metadata
    assert isinstance(metadata["error"], dg.TextMetadataValue)
    assert isinstance(metadata["requests"], dg.IntMetadataValue)
    assert isinstance(metadata["duration_seconds"], dg.FloatMetadataValue)


def test_a_refreshed_snapshot_counts_its_rows_and_a_stale_one_gives_its_age(
    pipeline: Pipeline, hubspot_emulator: HubSpotEmulator
) -> None:
    fresh = _metadata(pipeline.snapshot())
    _no_placeholders(fresh)
    assert fresh["dagster/row_count"] == dg.MetadataValue.int(len(COMPANIES))
    assert TableMetadataSet.extract(fresh).row_count == len(COMPANIES)
    assert isinstance(fresh["snapshot_age_hours"], dg.FloatMetadataValue)
    assert "error" not in fresh
    # The first sync computes every root; the next takes them from the snapshot it left.
    assert fresh["domain_roots_reused"] == dg.MetadataValue.int(0)
    computed = fresh["domain_roots_computed"].value
    assert computed > 0
    again = _metadata(pipeline.snapshot())
    assert again["domain_roots_computed"] == dg.MetadataValue.int(0)
    assert again["domain_roots_reused"] == dg.MetadataValue.int(computed)

    hubspot_emulator.fail("500", endpoint="list", times=None)
    stale = _metadata(pipeline.snapshot())
    _no_placeholders(stale)
    assert stale["snapshot_status"] == dg.MetadataValue.text("stale")
    # The table is the previous snapshot: its own materialisation has the count.
    assert "dagster/row_count" not in stale
    assert isinstance(stale["snapshot_age_hours"], dg.FloatMetadataValue)
    assert stale["snapshot_sync_id"] == again["snapshot_sync_id"]
