"""DataFrames written with COPY, and read back with COPY, round-trip every value: NULL vs empty
text, quotes, newlines, tabs, backslashes, the text "\\N", JSON dicts, timestamps, nullable
integers and booleans."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pytest
from psycopg import sql
from sqlalchemy import text

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.store.copy_csv import frame_csv
from morpheus_pipelines.platform.store.copying import read_frame
from morpheus_pipelines.platform.store.planner import index_probes
from morpheus_pipelines.platform.store.set_based import merge_joins, write_frame

AWKWARD = ["plain", "", None, "\\N", 'q"uo,te\nnew\tline\\back', "例え.jp ünïcode", "=SUM(A1)"]


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "t": AWKWARD,
            "i": pd.array([1, None, 3, 4, 5, 6, 2**31 - 1], dtype="Int64"),
            "b": [True, False, None, True, False, True, False],
            "ts": pd.to_datetime(
                ["2026-01-01T00:00:00.123456Z", None, *["2026-11-29T16:00:00.000000Z"] * 5],
                utc=True,
            ),
            "f": [1.5, np.nan, 2.0, -0.25, 1e10, 0.0, 3.0],
            "j": [{"plan": 1.5}, None, {"a": [1, 2]}, {}, None, {"ü": "x"}, {"k": None}],
        }
    )


def test_frame_round_trips_through_copy(database_url: str) -> None:
    awkward = AWKWARD
    frame = _frame()
    with get_session(database_url) as session:
        session.execute(
            text(
                "CREATE TABLE roundtrip (t text, i int, b bool, ts timestamptz, f float8, j jsonb)"
            )
        )
        write_frame(session, "roundtrip", frame, list(frame.columns))
        rows = session.execute(text("SELECT t, i, b, ts, f, j FROM roundtrip")).all()
    assert [r[0] for r in rows] == awkward
    assert [r[1] for r in rows] == [1, None, 3, 4, 5, 6, 2**31 - 1]
    assert [r[2] for r in rows] == [True, False, None, True, False, True, False]
    assert rows[0][3] == datetime(2026, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)
    assert rows[1][3] is None and rows[1][4] is None
    assert [r[5] for r in rows] == list(frame["j"])


MOMENTS = ["2026-01-01T00:00:00.123456789Z", None, "1999-12-31T23:59:59Z", "2026-11-28T16:00:00Z"]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_utc_timestamps_are_written_as_arrows_own_csv_writer_writes_them(unit: str) -> None:
    """The fast text of a UTC column is byte for byte what Arrow's CSV writer gives it."""
    moments = pd.Series(pd.to_datetime(MOMENTS, utc=True, format="ISO8601")).astype(
        f"datetime64[{unit}, UTC]"
    )
    arrows = io.BytesIO()
    pa_csv.write_csv(
        pa.table({"ts": pa.array(moments, from_pandas=True)}),
        arrows,
        pa_csv.WriteOptions(include_header=False, quoting_style="all_valid"),
    )
    assert frame_csv(pd.DataFrame({"ts": moments}), ["ts"]) == arrows.getvalue()


def test_timestamps_of_any_zone_keep_their_instant_in_a_session_of_another_zone(
    database_url: str,
) -> None:
    """UTC columns go as text with ``Z``, others with their offset (a New York one across the
    start of summer time): a zone-less text would be read in the session's zone."""
    moments = pd.Series(pd.to_datetime(MOMENTS, utc=True, format="ISO8601"))
    zones = {"utc": "UTC", "cst": "Asia/Shanghai", "nyc": "America/New_York"}
    frame = pd.DataFrame({"n": range(len(MOMENTS))})
    for column, zone in zones.items():
        frame[column] = moments.dt.tz_convert(zone)
    with get_session(database_url) as session:
        session.execute(text("SET LOCAL TimeZone = 'Europe/Berlin'"))
        session.execute(
            text("CREATE TABLE moments (n int, utc timestamptz, cst timestamptz, nyc timestamptz)")
        )
        write_frame(session, "moments", frame, ["n", *zones])
        rows = session.execute(text("SELECT utc, cst, nyc FROM moments ORDER BY n")).all()
    expected = [None if pd.isna(m) else m.round("us").to_pydatetime() for m in moments]
    for position in range(len(zones)):
        assert [r[position] for r in rows] == expected


def test_integers_beyond_64_bits_and_json_after_a_null_are_written_as_text() -> None:
    """Arrow cannot hold them; the column goes as text instead of failing the batch."""
    frame = pd.DataFrame(
        {
            "big": pd.Series([1, 2**70], dtype=object),
            "j": pd.Series([pd.NaT, {"a": 2**70}], dtype=object),
        }
    )
    assert frame_csv(frame, ["big", "j"]) == (
        b'"1",\n"1180591620717411303424","{""a"": 1180591620717411303424}"\n'
    )


def test_read_frame_copies_out_exactly_what_fetchall_returns(database_url: str) -> None:
    frame = _frame()
    with get_session(database_url) as session:
        session.execute(
            text("CREATE TABLE roundtrip (t text, i int, b bool, ts timestamptz, f float8)")
        )
        write_frame(session, "roundtrip", frame, ["t", "i", "b", "ts", "f"])
        # A session in another time zone: timestamps come out with a +05:30 offset.
        session.execute(text("SET LOCAL TimeZone = 'Asia/Kolkata'"))
        query = sql.SQL("SELECT t, i, b, ts, f FROM roundtrip ORDER BY i NULLS FIRST")
        copied = read_frame(session, query)  # every type is one Arrow parses: COPY path
        fetched = session.execute(text(query.as_string())).all()
    assert list(copied.columns) == ["t", "i", "b", "ts", "f"]
    assert len(copied) == len(fetched) == 7
    for row, expected in zip(copied.astype(object).itertuples(index=False), fetched, strict=True):
        values = [None if pd.isna(v) else v for v in row]
        assert values[0] == expected[0]  # '' stays '', NULL stays None
        assert values[1] == expected[1] and values[2] == expected[2]
        assert values[3] == expected[3] and values[4] == expected[4]
    assert str(copied["ts"].dtype) == "datetime64[us, UTC]"


def test_read_frame_falls_back_for_types_arrow_does_not_parse(database_url: str) -> None:
    with get_session(database_url) as session:
        frame = read_frame(
            session, sql.SQL("SELECT 1.25::numeric(6, 2) AS score, '{\"a\": 1}'::jsonb AS j")
        )
    assert str(frame.loc[0, "score"]) == "1.25" and frame.loc[0, "j"] == {"a": 1}


def test_read_frame_of_no_rows_has_the_columns(database_url: str) -> None:
    with get_session(database_url) as session:
        frame = read_frame(session, sql.SQL("SELECT 'x'::text AS t, 1 AS i WHERE false"))
    assert list(frame.columns) == ["t", "i"] and frame.empty


def test_merge_joins_plans_the_block_with_merge_joins_and_restores_the_planner(
    database_url: str,
) -> None:
    join = "EXPLAIN SELECT * FROM left_side l JOIN right_side r ON r.k = l.k"
    with get_session(database_url) as session:
        session.execute(text("CREATE TABLE left_side (k int)"))
        session.execute(text("CREATE TABLE right_side (k int)"))
        session.execute(text("INSERT INTO left_side SELECT generate_series(1, 20000)"))
        session.execute(text("INSERT INTO right_side SELECT generate_series(1, 20000)"))
        session.execute(text("ANALYZE left_side; ANALYZE right_side"))
        # Workers as cheap as the planner can be told they are: it plans them for any size.
        session.execute(
            text(
                "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; "
                "SET min_parallel_table_scan_size = 0"
            )
        )

        def plan() -> str:
            return "\n".join(row[0] for row in session.execute(text(join)))

        before = plan()
        workers = session.scalar(text("SHOW max_parallel_workers_per_gather"))
        assert "Hash Join" in before  # the planner's own choice for two unindexed tables
        assert "Gather" in before
        with merge_joins(session):
            inside = plan()
            assert "Merge Join" in inside
            assert "Gather" not in inside  # one process: the writer has the other core
        assert plan() == before
        assert session.scalar(text("SHOW enable_hashjoin")) == "on"
        assert session.scalar(text("SHOW enable_nestloop")) == "on"
        assert session.scalar(text("SHOW max_parallel_workers_per_gather")) == workers


def test_index_probes_plans_the_block_with_index_probes_and_restores_the_planner(
    database_url: str,
) -> None:
    update = "EXPLAIN UPDATE probed_table t SET v = s.v FROM probing_rows s WHERE s.k = t.k"
    with get_session(database_url) as session:
        session.execute(text("CREATE TABLE probed_table (k int PRIMARY KEY, v int)"))
        session.execute(text("CREATE TABLE probing_rows (k int, v int)"))
        session.execute(
            text("INSERT INTO probed_table SELECT n, 0 FROM generate_series(1, 60000) n")
        )
        session.execute(
            text("INSERT INTO probing_rows SELECT n * 3, 1 FROM generate_series(1, 20000) n")
        )
        session.execute(text("ANALYZE probed_table; ANALYZE probing_rows"))

        def plan() -> str:
            return "\n".join(row[0] for row in session.execute(text(update)))

        before = plan()
        # The planner's own choice: every row of the table read into a hash join.
        assert "Hash Join" in before and "Seq Scan on probed_table" in before
        with index_probes(session):
            inside = plan()
            assert "Nested Loop" in inside
            assert "Index Scan using probed_table_pkey" in inside
        assert plan() == before
        assert session.scalar(text("SHOW enable_hashjoin")) == "on"
        assert session.scalar(text("SHOW enable_mergejoin")) == "on"


def test_read_frame_reads_values_with_newlines_across_arrow_blocks(database_url: str) -> None:
    """Arrow parses CSV in blocks of about 1 MB; a quoted value with a line break that
    straddles a block boundary must not desynchronise it (tenant names do contain them)."""
    names = [f'Acme {n}\nBranch office {n}, "HQ"\r\n' * (n % 3) for n in range(60_000)]
    with get_session(database_url) as session:
        session.execute(text("CREATE TABLE multiline (n int, name text)"))
        session.execute(
            text(
                "INSERT INTO multiline SELECT n, v "
                "FROM unnest(CAST(:v AS text[])) WITH ORDINALITY AS t(v, n)"
            ),
            {"v": names},
        )
        frame = read_frame(session, sql.SQL("SELECT name FROM multiline ORDER BY n"))
    assert frame["name"].tolist() == names
