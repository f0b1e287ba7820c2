"""Rendering shared by both products' reports: escaping for Markdown, HTML and CSV, a page
and a table of HTML, PNG bytes of a matplotlib figure, and files written atomically so a
reader never sees half a report.

Untrusted text only ever lands inside table cells, where the characters escaped here are the
ones that act.
"""

from __future__ import annotations

import html
import io
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_CSV_FORMULA_START = ("=", "+", "-", "@")
# Characters a CSV reader may take for the end of a row, beside the other control
# characters: a cell keeps none of them, so no cell can start a row of its own.
_NOT_IN_A_CELL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def md_escape(value: object) -> str:
    """Text safe inside Markdown (tables included): HTML-escaped, specials backslashed."""
    text = html.escape(str(value), quote=False).replace("\n", " ").replace("\r", " ")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def csv_cell(value: object) -> object:
    """A CSV cell that a spreadsheet will not execute: control characters (line breaks among
    them, which would start a new row) become spaces, and text whose first visible character
    starts a formula is prefixed with ``'`` (``=cmd()`` becomes ``'=cmd()``)."""
    if not isinstance(value, str):
        return value
    text = _NOT_IN_A_CELL.sub(" ", value)
    if text.lstrip().startswith(_CSV_FORMULA_START):
        return "'" + text
    return text


_CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC",sans-serif;
margin:2rem auto;max-width:1100px;padding:0 1rem;color:#222;line-height:1.45}
h1{margin-bottom:.2rem}h2{margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.sub{color:#666;margin-top:0}.health{padding:.6rem .8rem;border-radius:4px}
.health-fresh{background:#e8f5e9}.health-stale{background:#fff8e1}
.health-unavailable{background:#ffebee}.warn{background:#fff8e1;padding:.6rem .8rem}
.note{padding:.1rem .8rem;border-radius:4px;margin:.5rem 0}.note-ok{background:#e8f5e9}
.note-warning{background:#fff8e1}.note-error{background:#ffebee}
table{border-collapse:collapse;margin:.5rem 0;font-size:.92rem}
th,td{border:1px solid #ddd;padding:.3rem .6rem;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
.p-P0{color:#b2182b;font-weight:600}.p-P1{color:#d6604d;font-weight:600}
.foot{color:#777;font-size:.85rem;margin-top:2rem}img{max-width:100%}
"""


def html_page(title: str, body: list[str]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
            *body,
            "</body></html>",
            "",
        ]
    )


def html_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()
) -> str:
    """A table of already-escaped cell HTML."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{cell}</td>' if i in numeric else f"<td>{cell}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def png_bytes(figure: Any) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    return buffer.getvalue()


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
