"""Reports and per-tenant event files reach their readers: written under
``MORPHEUS_REPORTS_URL`` (a local folder or ``s3://``, here an S3-compatible server on
127.0.0.1) and linked from the UI with ``MetadataValue.url`` (docs/reports.md, "Where reports
go")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from morpheus_pipelines.assets.reports import daily_summary, weekly_metrics
from morpheus_pipelines.platform.outputs import ReportOutputs
from morpheus_pipelines.resources.hubspot import TargetListResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.tenants.steps.tenant_events import TenantEventLog
from tests.support.object_store import ObjectStore, s3_server
from tests.support.reports import DAY, LIST_ID, WEEK, bucket_row, insert_rows

PREFIX = "s3://morpheus-reports/acme/prod"


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[ObjectStore]:
    with s3_server(monkeypatch) as store:
        yield store


def summarise(database_url: str, home: Path, **warehouse: str) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [daily_summary],
        partition_key=DAY,
        resources={
            "warehouse": WarehouseResource(database_url=database_url, home=str(home), **warehouse),
            "target_list": TargetListResource(list_id=LIST_ID),
            "ownership": OwnershipResource(),
        },
    )


def metadata(result: dg.ExecuteInProcessResult, key: str) -> dict[str, dg.MetadataValue]:
    (event,) = result.asset_materializations_for_node(key)
    return dict(event.metadata)


def test_the_daily_summary_is_written_to_s3_and_linked(
    database_url: str, tmp_path: Path, s3: ObjectStore
) -> None:
    insert_rows(
        database_url,
        "apac_active_tenants",
        [bucket_row("t-up", priority="P1", priority_changed_partition=DAY)],
    )
    result = summarise(database_url, tmp_path / "home", reports_url=PREFIX)

    assert result.success
    keys = s3.keys("acme/prod/")
    for name in ("summary.html", "summary.csv", "metrics.csv", "notes.csv", "summary.md"):
        assert f"acme/prod/daily/{DAY}/{name}" in keys
    assert "t-up" in s3.read(f"acme/prod/daily/{DAY}/summary.html").decode()
    assert "t-up" in s3.read(f"acme/prod/daily/{DAY}/summary.csv").decode()
    meta = metadata(result, "daily_summary")
    assert isinstance(meta["file_html"], dg.UrlMetadataValue)
    assert meta["file_html"].value == f"{PREFIX}/daily/{DAY}/summary.html"
    assert meta["stored_at"].value == f"{PREFIX}/daily/{DAY}/"
    # nothing under the local reports folder: only the spool holds the working copies
    assert not (tmp_path / "home" / "reports").exists()


def test_a_public_base_url_makes_the_links_http(
    database_url: str, tmp_path: Path, s3: ObjectStore
) -> None:
    weekly = dg.materialize(
        [weekly_metrics],
        partition_key=WEEK,
        resources={
            "warehouse": WarehouseResource(
                database_url=database_url,
                home=str(tmp_path),
                reports_url=PREFIX,
                reports_public_url="https://reports.acme.example/prod/",
            )
        },
    )

    meta = metadata(weekly, "weekly_metrics")
    link = meta["file_priorities_png"].value
    assert link == f"https://reports.acme.example/prod/weekly/{WEEK}/priorities.png"
    png = s3.read(f"acme/prod/weekly/{WEEK}/priorities.png")
    assert png.startswith(b"\x89PNG")
    assert f"({link})" in meta["metrics"].value  # the Markdown links it too


def test_the_default_is_the_reports_folder_under_home_as_file_urls(
    database_url: str, tmp_path: Path
) -> None:
    result = summarise(database_url, tmp_path)

    page = tmp_path / "reports" / "daily" / DAY / "summary.html"
    assert page.is_file()
    assert metadata(result, "daily_summary")["file_html"].value == page.resolve().as_uri()
    assert not (tmp_path / "spool").exists()  # written in place, nothing copied


def test_another_local_folder_receives_a_copy(database_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "shared" / "reports"
    result = summarise(database_url, tmp_path / "home", reports_url=folder.as_uri())

    page = folder / "daily" / DAY / "summary.html"
    assert "APAC Daily Summary" in page.read_text(encoding="utf-8")
    assert metadata(result, "daily_summary")["file_html"].value == page.resolve().as_uri()


def test_an_event_file_written_by_two_hosts_keeps_both_steps_lines(
    tmp_path: Path, s3: ObjectStore
) -> None:
    """Routing on one host, scoring on another: each appends to the partition's file in S3."""
    import pandas as pd

    for host, run_id in (("routing-pod", "run-1"), ("scoring-pod", "run-2")):
        outputs = ReportOutputs(PREFIX, home=tmp_path / host)
        log = TenantEventLog.for_partition(outputs, DAY)
        chunk = pd.DataFrame(
            {"tenant_id": [f"t-{run_id}"], "tenant_bucket": ["active"], "hubspot_sync_id": [None]}
        )
        log.tenants_scoring_started(chunk, run_id=run_id, partition_key=DAY, offset=0)
        published = log.publish()
        assert published is not None
        assert published.stored == f"{PREFIX}/tenant_events/{DAY}.jsonl"

    lines = s3.read(f"acme/prod/tenant_events/{DAY}.jsonl").decode().splitlines()
    assert [('"t-run-1"' in line, '"t-run-2"' in line) for line in lines] == [
        (True, False),
        (False, True),
    ]
