"""The Lead Attribution report (docs/leads.md, "Attribution"): five models side by side, per
channel and per owner, with a sentence each and where they disagree most. Markdown, a
self-contained HTML page with its chart, and the chart as PNG."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from morpheus_pipelines.crm.rules.attribution import MODELS, Attribution
from morpheus_pipelines.platform.rendering import (
    html_page,
    html_table,
    md_escape,
    png_bytes,
    write_atomically,
)

MODEL_COLOURS = {
    "first_touch": "#1b9e77",
    "last_touch": "#d95f02",
    "linear": "#7570b3",
    "position_based": "#e7298a",
    "time_decay": "#66a61e",
}
_NAMES = [model.name for model in MODELS]


def _headline(attribution: Attribution) -> str:
    touched = attribution.won_leads - attribution.leads_without_touches
    return (
        f"{attribution.won_leads} won leads; {touched} with touches before the win share "
        "1.0 credit each among those touches"
        + (
            f" ({attribution.leads_without_touches} without any touch are not credited)."
            if attribution.leads_without_touches
            else "."
        )
    )


def _rows(table: Mapping[str, Mapping[str, float]]) -> list[list[str]]:
    rows = []
    for value, per_model in table.items():
        spread = max(per_model.values()) - min(per_model.values())
        rows.append([value, *(f"{per_model[name]:.2f}" for name in _NAMES), f"{spread:.2f}"])
    return rows


def _disagreement_lines(attribution: Attribution) -> list[str]:
    lines = []
    for dimension in ("channel", "owner"):
        for value, spread, most, least in attribution.disagreements(dimension, top=3):
            if spread <= 0:
                continue
            table = attribution.by_channel if dimension == "channel" else attribution.by_owner
            lines.append(
                f"{dimension} {value}: {table[value][most]:.2f} won leads under {most}, "
                f"{table[value][least]:.2f} under {least} (spread {spread:.2f})"
            )
    return lines


def render_attribution_markdown(attribution: Attribution, generated_at: datetime) -> str:
    header = ["", *_NAMES, "spread"]
    out = [
        f"# Lead attribution, {generated_at:%Y-%m-%d %H:%M} UTC",
        "",
        _headline(attribution),
        "",
        "## The models",
        "",
        "| model | how it splits one win's credit |",
        "|---|---|",
        *(f"| {model.name} | {model.explanation} |" for model in MODELS),
    ]
    for title, table, label in (
        ("Credit by channel (won leads)", attribution.by_channel, "channel"),
        ("Credit by owner (won leads)", attribution.by_owner, "owner"),
    ):
        out += ["", f"## {title}", ""]
        out.append("| " + " | ".join([label, *header[1:]]) + " |")
        out.append("|---" * len(header) + "|")
        out += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in _rows(table)]
    out += ["", "## Where the models disagree most", ""]
    lines = _disagreement_lines(attribution)
    out += [f"- {md_escape(line)}" for line in lines] or ["- nowhere: every model agrees"]
    return "\n".join(out) + "\n"


def attribution_chart_png(attribution: Attribution) -> bytes:
    """Grouped bars: credit per channel under each model."""
    from matplotlib.figure import Figure  # imported when drawn (see reports.charts)

    figure = Figure(figsize=(9, 4.2), layout="constrained")
    axes = figure.add_subplot()
    channels = list(attribution.by_channel)
    width = 0.8 / len(_NAMES)
    for i, name in enumerate(_NAMES):
        axes.bar(
            [c + (i - (len(_NAMES) - 1) / 2) * width for c in range(len(channels))],
            [attribution.by_channel[channel][name] for channel in channels],
            width=width,
            label=name,
            color=MODEL_COLOURS[name],
        )
    axes.set_xticks(list(range(len(channels))), channels)
    axes.set_title("Credit per channel under each attribution model")
    axes.set_ylabel("won leads")
    axes.spines[["top", "right"]].set_visible(False)
    if channels:
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    else:
        axes.text(0.5, 0.5, "no won lead yet", ha="center", va="center", transform=axes.transAxes)
    return png_bytes(figure)


def render_attribution_html(
    attribution: Attribution, generated_at: datetime, chart_png: bytes
) -> str:
    title = f"Lead attribution, {generated_at:%Y-%m-%d %H:%M} UTC"
    chart = base64.b64encode(chart_png).decode()
    body = [
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="sub">{html.escape(_headline(attribution))}</p>',
        "<h2>The models</h2>",
        html_table(
            ["model", "how it splits one win's credit"],
            [[html.escape(m.name), html.escape(m.explanation)] for m in MODELS],
        ),
        f'<img alt="credit per channel under each model" src="data:image/png;base64,{chart}">',
    ]
    numeric = list(range(1, len(_NAMES) + 2))
    for heading, table, label in (
        ("Credit by channel (won leads)", attribution.by_channel, "channel"),
        ("Credit by owner (won leads)", attribution.by_owner, "owner"),
    ):
        rows = [[html.escape(cell) for cell in row] for row in _rows(table)]
        body += [
            f"<h2>{heading}</h2>",
            html_table([label, *_NAMES, "spread"], rows, numeric),
        ]
    lines = _disagreement_lines(attribution) or ["nowhere: every model agrees"]
    body += [
        "<h2>Where the models disagree most</h2>",
        "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>",
    ]
    return html_page(title, body)


def write_attribution_report(
    attribution: Attribution, generated_at: datetime, home: str | Path
) -> dict[str, Path]:
    """``attribution.md``, ``attribution.html`` and ``credit_by_channel.png`` under
    ``{home}/reports/attribution/{date}/``, each written atomically."""
    directory = Path(home) / "reports" / "attribution" / f"{generated_at:%Y-%m-%d}"
    chart = attribution_chart_png(attribution)
    return {
        "markdown": write_atomically(
            directory / "attribution.md", render_attribution_markdown(attribution, generated_at)
        ),
        "html": write_atomically(
            directory / "attribution.html",
            render_attribution_html(attribution, generated_at, chart),
        ),
        "chart": write_atomically(directory / "credit_by_channel.png", chart),
    }
