"""The Weekly Metrics charts as PNG: stacked bars per day of the week (matplotlib, imported
only when a chart is drawn)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

import pandas as pd

from morpheus_pipelines.platform.rendering import png_bytes
from morpheus_pipelines.tenants.reports.figures import (
    BY_MATCH_METHOD,
    BY_PRIORITY,
    MATCH_DIMENSIONS,
    PRIORITY_DIMENSIONS,
    WeeklyMetrics,
)

PRIORITY_COLOURS = {
    "P0": "#b2182b",
    "P1": "#ef8a62",
    "P2": "#67a9cf",
    "P3": "#2166ac",
    "unscored": "#bdbdbd",
}
MATCH_COLOURS = {
    "portal_id": "#1b9e77",
    "account_id": "#d95f02",
    "email_domain": "#7570b3",
    "official_website": "#e7298a",
}


def _day_label(day: date, has_data: bool) -> str:
    return f"{day:%a %m-%d}" + ("" if has_data else "\n(no data)")


def _stacked_bar_chart(
    weekly: WeeklyMetrics,
    table: pd.DataFrame,
    colours: Mapping[str, str],
    *,
    title: str,
    ylabel: str,
    empty_text: str,
) -> bytes:
    # Imported here: matplotlib costs seconds to import, and every Dagster step process
    # imports the code location, while only the weekly report draws charts.
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 4.2), layout="constrained")
    axes = figure.add_subplot()
    present = set(weekly.daily["day"])
    positions = list(range(len(weekly.days)))
    bottom = [0.0] * len(weekly.days)
    plotted = False
    for dimension in table.columns:
        values = [0.0 if pd.isna(v) else float(v) for v in table[dimension]]
        if not any(values):
            continue
        axes.bar(
            positions,
            values,
            bottom=bottom,
            label=str(dimension),
            color=colours.get(str(dimension), "#999999"),
            width=0.7,
        )
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        plotted = True
    axes.set_xticks(positions, [_day_label(d, d in present) for d in weekly.days])
    axes.set_title(title)
    axes.set_ylabel(ylabel)
    axes.spines[["top", "right"]].set_visible(False)
    if plotted:
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    else:
        axes.text(0.5, 0.5, empty_text, ha="center", va="center", transform=axes.transAxes)
        axes.set_yticks([])
    return png_bytes(figure)


def priority_chart_png(weekly: WeeklyMetrics) -> bytes:
    """Stacked bars: Active tenants per priority on each day of the week."""
    return _stacked_bar_chart(
        weekly,
        weekly.day_metric(BY_PRIORITY, PRIORITY_DIMENSIONS),
        PRIORITY_COLOURS,
        title=f"Active tenants by priority, week of {weekly.week_key}",
        ylabel="tenants",
        empty_text="no Daily Summary this week",
    )


def match_method_chart_png(weekly: WeeklyMetrics) -> bytes:
    """Stacked bars: Active HubSpot target accounts per match method on each day."""
    table = weekly.day_metric(BY_MATCH_METHOD, MATCH_DIMENSIONS).drop(columns=["none"])
    return _stacked_bar_chart(
        weekly,
        table,
        MATCH_COLOURS,
        title=f"HubSpot target accounts by match method, week of {weekly.week_key}",
        ylabel="tenants",
        empty_text="no HubSpot target account this week",
    )
