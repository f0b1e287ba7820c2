"""DataFrames written with COPY round-trip every value: NULL vs empty text, quotes, newlines,
tabs, backslashes, the text "\\N", JSON dicts, timestamps, nullable integers."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pandas as pd
from sqlalchemy import text

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.repositories.bulk import write_frame


def test_frame_round_trips_through_copy(database_url: str) -> None:
    awkward = ["plain", "", None, "\\N", 'q"uo,te\nnew\tline\\back', "例え.jp ünïcode", "=SUM(A1)"]
    frame = pd.DataFrame(
        {
            "t": awkward,
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
