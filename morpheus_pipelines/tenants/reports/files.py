"""The report files under ``$MORPHEUS_HOME/reports/`` (docs/reports.md), each written
atomically so a reader never sees half a report."""

from __future__ import annotations

from pathlib import Path

from morpheus_pipelines.platform.rendering import write_atomically
from morpheus_pipelines.tenants.reports.charts import match_method_chart_png, priority_chart_png
from morpheus_pipelines.tenants.reports.csv import (
    render_daily_metrics_csv,
    render_daily_notes_csv,
    render_weekly_csv,
)
from morpheus_pipelines.tenants.reports.figures import DailySummary, WeeklyMetrics, check_key
from morpheus_pipelines.tenants.reports.html import render_daily_html, render_weekly_html
from morpheus_pipelines.tenants.reports.markdown import (
    render_daily_markdown,
    render_weekly_markdown,
)


def daily_report_dir(home: str | Path, partition_key: str) -> Path:
    return Path(home) / "reports" / "daily" / check_key(partition_key)


def weekly_report_dir(home: str | Path, week_key: str) -> Path:
    return Path(home) / "reports" / "weekly" / check_key(week_key)


def daily_tenants_csv_path(home: str | Path, partition_key: str) -> Path:
    """``summary.csv``: every listed tenant, written while they are read
    (``services.report_publishing``)."""
    return daily_report_dir(home, partition_key) / "summary.csv"


def write_daily_report(summary: DailySummary, home: str | Path) -> dict[str, Path]:
    """``summary.html``, ``metrics.csv``, ``notes.csv`` and ``summary.md`` under
    ``{home}/reports/daily/{partition}/``, beside the ``summary.csv`` already written."""
    directory = daily_report_dir(home, summary.partition_key)
    files = {
        "html": write_atomically(directory / "summary.html", render_daily_html(summary)),
        "csv": daily_tenants_csv_path(home, summary.partition_key),
        "metrics_csv": write_atomically(
            directory / "metrics.csv", render_daily_metrics_csv(summary)
        ),
        "notes_csv": write_atomically(directory / "notes.csv", render_daily_notes_csv(summary)),
    }
    files["markdown"] = write_atomically(directory / "summary.md", render_daily_markdown(summary))
    return files


def write_weekly_report(weekly: WeeklyMetrics, home: str | Path) -> dict[str, Path]:
    """``metrics.html``, ``metrics.csv``, ``metrics.md``, ``priorities.png`` and
    ``match_methods.png`` under ``{home}/reports/weekly/{week}/``."""
    directory = weekly_report_dir(home, weekly.week_key)
    charts = {
        "priorities": priority_chart_png(weekly),
        "match_methods": match_method_chart_png(weekly),
    }
    files = {
        "html": write_atomically(directory / "metrics.html", render_weekly_html(weekly, charts)),
        "csv": write_atomically(directory / "metrics.csv", render_weekly_csv(weekly)),
        "markdown": write_atomically(directory / "metrics.md", render_weekly_markdown(weekly)),
    }
    for name, png in charts.items():
        files[f"{name}_png"] = write_atomically(directory / f"{name}.png", png)
    return files
