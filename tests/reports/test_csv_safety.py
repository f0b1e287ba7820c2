"""No tenant text written to a report's CSV can start a row or a formula when read back
(docs/reports.md, "Safety of what is shown")."""

from __future__ import annotations

import csv
import io

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from morpheus_pipelines.tenants.reports.csv import (
    DAILY_CSV_HEADER,
    daily_csv_header,
    daily_csv_rows,
)

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
COLUMNS = [c for c in DAILY_CSV_HEADER if c != "partition"]

# Text a tenant can name itself: anything, with the characters that act in a CSV or a
# spreadsheet drawn often.
hostile_text = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("=+-@\t\r\n\"',;| \x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")),
        st.characters(codec="utf-8"),
    ),
    max_size=40,
)


def _frame(names: list[str], whys: list[str]) -> pd.DataFrame:
    rows = [
        {
            "priority": "P1",
            "change": "new",
            "previous_priority": None,
            "tenant_id": f"t{i}",
            "name": name,
            "why": why,
            "reason": "score",
            "hubspot_match_method": None,
            "hubspot_company_id": None,
            "total_score": 50,
        }
        for i, (name, why) in enumerate(zip(names, whys, strict=True))
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def _read_back(text: str) -> tuple[list[list[str]], pd.DataFrame]:
    rows = list(csv.reader(io.StringIO(text, newline="")))
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    return rows, frame


def _assert_safe(names: list[str], whys: list[str]) -> None:
    text = daily_csv_header() + daily_csv_rows("2026-11-18", _frame(names, whys))
    rows, frame = _read_back(text)
    assert len(rows) == len(names) + 1 and {len(r) for r in rows} == {len(DAILY_CSV_HEADER)}
    assert len(frame) == len(names) and list(frame.columns) == list(DAILY_CSV_HEADER)
    cells = [c for row in rows[1:] for c in row] + [
        c for column in frame.columns for c in frame[column]
    ]
    assert not [c for c in cells if c.startswith(FORMULA_START)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(hostile_text, hostile_text), min_size=1, max_size=8))
def test_no_written_cell_reads_back_as_a_row_or_a_formula(pairs: list[tuple[str, str]]) -> None:
    _assert_safe([n for n, _ in pairs], [w for _, w in pairs])


def test_a_carriage_return_cannot_smuggle_a_formula_row() -> None:
    name = "Acme\r=cmd|' /C calc'!A0"
    _assert_safe([name, "Beta"], ["score 50", "score 50"])
    text = daily_csv_rows("2026-11-18", _frame([name], ["x"]))
    assert "\r" not in text and text.count("\n") == 1
