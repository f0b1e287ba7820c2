"""``as_metadata``: typed values, absent values left out, ``dagster/row_count`` an integer."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from enum import StrEnum

import dagster as dg
import pytest
from dagster._core.definitions.metadata.metadata_set import TableMetadataSet

from morpheus_pipelines.assets.metadata import as_metadata


class Status(StrEnum):
    DONE = "done"


def test_numbers_stay_numbers_and_times_become_timestamps() -> None:
    at = datetime(2026, 11, 30, 0, 30, tzinfo=UTC)
    metadata = as_metadata(
        {
            "rows": 3,
            "ratio": 0.25,
            "score": Decimal("78.50"),
            "configured": True,
            "synced_at": at,
            "day": date(2026, 11, 29),
            "status": Status.DONE,
            "name": "list 19544",
            "by_status": {Status.DONE: 2, "failed": None},
            "ids": ["a", "b"],
        }
    )
    assert metadata["rows"] == dg.MetadataValue.int(3)
    assert metadata["ratio"] == dg.MetadataValue.float(0.25)
    assert metadata["score"] == dg.MetadataValue.float(78.5)
    assert metadata["configured"] == dg.MetadataValue.bool(True)
    assert metadata["synced_at"] == dg.MetadataValue.timestamp(at.timestamp())
    assert metadata["day"] == dg.MetadataValue.text("2026-11-29")
    assert metadata["status"] == dg.MetadataValue.text("done")
    assert metadata["name"] == dg.MetadataValue.text("list 19544")
    # Inside JSON a null is a value like any other.
    assert metadata["by_status"] == dg.MetadataValue.json({"done": 2, "failed": None})
    assert metadata["ids"] == dg.MetadataValue.json(["a", "b"])


def test_absent_values_are_left_out_not_written_as_text() -> None:
    metadata = as_metadata(
        {"dagster/row_count": None, "error": None, "snapshot_age_hours": None, "requests": 0}
    )
    assert metadata == {"requests": dg.MetadataValue.int(0)}


def test_the_row_count_is_an_int_that_dagster_s_table_metadata_accepts() -> None:
    metadata = as_metadata({"dagster/row_count": 12})
    assert TableMetadataSet.extract(metadata).row_count == 12
    for bad in ("n/a", 1.5, True):
        with pytest.raises(TypeError, match="dagster/row_count"):
            as_metadata({"dagster/row_count": bad})


def test_a_naive_datetime_is_refused_rather_than_guessed() -> None:
    with pytest.raises(ValueError, match="naive datetime"):
        as_metadata({"at": datetime(2026, 11, 30, 8, 30)})
