"""DataFrames to and from ``COPY … (FORMAT csv)``, converted by Arrow in C.

``psycopg``'s ``write_row`` converts every value of every row in Python, which made it the
largest cost of routing a million tenants (docs/decisions/0005). Arrow converts each column at
once and writes CSV in C. Every non-null value is quoted and a NULL is an empty unquoted
field, so PostgreSQL tells NULL from the empty string, and any text — commas, quotes,
newlines, tabs, backslashes, ``\\N`` — round-trips unchanged.

Reading is the mirror image: ``COPY (query) TO STDOUT (FORMAT csv)`` parsed by Arrow's CSV
reader with the column types the query declares, instead of one Python object per value from
``fetchall`` (which, with pandas inferring each column's type again, was a third of the time
of enrichment, routing and scoring at scale).
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

COPY_OPTIONS = "(FORMAT csv)"
_WRITE_OPTIONS = pa_csv.WriteOptions(include_header=False, quoting_style="all_valid")

# Arrow types for the PostgreSQL types (by OID) a COPY read can parse exactly. Others (numeric,
# json, dates, ...) are read the slow way, so nothing is ever approximated.
ARROW_TYPES = {
    16: pa.bool_(),  # boolean: t / f
    20: pa.int64(),  # bigint
    21: pa.int64(),  # smallint
    23: pa.int64(),  # integer
    25: pa.string(),  # text
    1043: pa.string(),  # varchar
    700: pa.float64(),  # real
    701: pa.float64(),  # double precision
    1184: pa.timestamp("us", tz="UTC"),  # timestamptz, written with its offset
}


# One encoder for every value: json.dumps with a non-default option builds a new one per call.
_JSON = json.JSONEncoder(ensure_ascii=False)


def _text(value: object) -> object:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, dict | list):
        return _JSON.encode(value)
    if isinstance(value, float) and value != value:  # NaN
        return None
    return value if isinstance(value, str) else str(value)


def _holds_json(series: pd.Series) -> bool:
    """Whether the column's first non-null value is a dict or a list (a JSON column)."""
    if series.dtype != object or series.empty:
        return False
    first = series.iat[0]
    if isinstance(first, str | dict | list):  # not null: the first non-null value itself
        return not isinstance(first, str)
    # Otherwise scan for it (a text column, the usual case, never does).
    present = series.notna().to_numpy()
    return bool(present.any()) and isinstance(series.iat[int(present.argmax())], dict | list)


def _utc_text(array: pa.Array) -> pa.Array:
    """A UTC timestamp column as text, ``2026-11-28 16:01:41.000000Z``: byte for byte what
    Arrow's CSV writer gives it, several times faster (docs/decisions/0046).
    The writer converts each value through the time-zone database; the values are UTC
    already, so the zone is dropped and ``Z`` appended."""
    naive = array.cast(pa.timestamp(array.type.unit)).cast(pa.large_string())
    text = pa.large_string()
    return pc.binary_join_element_wise(naive, pa.scalar("Z", text), pa.scalar("", text))


def _arrow_column(series: pd.Series) -> pa.Array:
    array = None
    if not _holds_json(series):  # Arrow would infer a nested type from every dict first
        try:
            array = pa.array(series, from_pandas=True)
            if isinstance(array, pa.ChunkedArray):  # an Arrow-backed column, e.g. after concat
                array = array.combine_chunks()
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            array = None
    if array is None or pa.types.is_nested(array.type):
        # Mixed or nested Python objects (a JSON dict, a str among numbers): as text.
        # A list, not Series.map: pandas would infer its string dtype and turn None into NaN.
        values = [_text(value) for value in series.to_numpy(dtype=object)]
        return pa.array(values, type=pa.large_string())
    if pa.types.is_timestamp(array.type) and array.type.tz == "UTC":
        # Other zones keep Arrow's own text (wall-clock time and offset): the same instant
        # for a timestamptz column, and the same value as before for a date or text one.
        return _utc_text(array)
    return array


def frame_csv(frame: pd.DataFrame, columns: Sequence[str]) -> bytes:
    """The rows of ``frame[columns]`` as CSV for ``COPY … (FORMAT csv)``."""
    table = pa.table({name: _arrow_column(frame[name]) for name in columns})
    sink = io.BytesIO()
    pa_csv.write_csv(table, sink, _WRITE_OPTIONS)
    return sink.getvalue()


def csv_frame(data: bytes, columns: Sequence[tuple[str, int]]) -> pd.DataFrame:
    """Rows COPYed out as CSV, as a DataFrame with ``columns`` (name, type OID) in order.

    An unquoted empty field is NULL, a quoted one the empty string, as PostgreSQL writes them.
    """
    schema = pa.schema([(name, ARROW_TYPES[oid]) for name, oid in columns])
    if not data:
        return schema.empty_table().to_pandas()
    table = pa_csv.read_csv(
        io.BytesIO(data),
        read_options=pa_csv.ReadOptions(column_names=schema.names),
        # Quoted values may hold line breaks (tenant and company names do): without this,
        # Arrow splits the text into blocks at a line break inside a value and fails.
        parse_options=pa_csv.ParseOptions(newlines_in_values=True),
        convert_options=pa_csv.ConvertOptions(
            column_types=schema,
            null_values=[""],
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
            true_values=["t"],
            false_values=["f"],
        ),
    )
    # One chunk per column, whatever the size: the same shape small test reads have.
    return table.combine_chunks().to_pandas()
