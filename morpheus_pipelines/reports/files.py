"""The report files under ``$MORPHEUS_HOME/reports/`` (docs/reports.md), each written
atomically so a reader never sees half a report."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from morpheus_pipelines.reports.charts import match_method_chart_png, priority_chart_png
from morpheus_pipelines.reports.csv import render_daily_metrics_csv, render_weekly_csv
from morpheus_pipelines.reports.figures import DailySummary, WeeklyMetrics, check_key
from morpheus_pipelines.reports.html import render_daily_html, render_weekly_html
from morpheus_pipelines.reports.markdown import render_daily_markdown, render_weekly_markdown


def _temporary(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def write_atomically(path: Path, content: str | bytes) -> Path:
    """Write atomically (temporary file + rename), so a reader never sees half a report."""
    temporary = _temporary(path)
    if isinstance(content, bytes):
        temporary.write_bytes(content)
    else:
        temporary.write_text(content, encoding="utf-8")
    temporary.replace(path)
    return path


@contextmanager
def atomic_text_file(path: Path) -> Iterator[TextIO]:
    """A text file written piece by piece that appears at ``path`` whole, when the block ends
    without an error; after an error the file at ``path`` (if any) is left as it was."""
    temporary = _temporary(path)
    try:
        with temporary.open("w", encoding="utf-8", newline="") as handle:
            yield handle
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)


def daily_report_dir(home: str | Path, partition_key: str) -> Path:
    return Path(home) / "reports" / "daily" / check_key(partition_key)


def weekly_report_dir(home: str | Path, week_key: str) -> Path:
    return Path(home) / "reports" / "weekly" / check_key(week_key)


def daily_tenants_csv_path(home: str | Path, partition_key: str) -> Path:
    """``summary.csv``: every listed tenant, written while they are read
    (``services.report_publishing``)."""
    return daily_report_dir(home, partition_key) / "summary.csv"


def write_daily_report(summary: DailySummary, home: str | Path) -> dict[str, Path]:
    """``summary.html``, ``metrics.csv`` and ``summary.md`` under
    ``{home}/reports/daily/{partition}/``, beside the ``summary.csv`` already written."""
    directory = daily_report_dir(home, summary.partition_key)
    files = {
        "html": write_atomically(directory / "summary.html", render_daily_html(summary)),
        "csv": daily_tenants_csv_path(home, summary.partition_key),
        "metrics_csv": write_atomically(
            directory / "metrics.csv", render_daily_metrics_csv(summary)
        ),
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
        files[f"{name}png_bytes"] = write_atomically(directory / f"{name}.png", png)
    return files
