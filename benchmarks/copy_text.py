"""The `COPY` text of a day's bucket rows: `frame_csv` against Arrow's own CSV writer.

    uv run python benchmarks/copy_text.py [--rows 632683]

Routing, scoring and enrichment hand every batch to PostgreSQL as `COPY` text built by
`morpheus_pipelines.platform.store.copy_csv.frame_csv`. The rows here are the demo data set's
tenants shaped like a bucket row: text columns, counts, and three UTC timestamps (sign-up,
last activity, the snapshot's sync time). Prints the best of three for each way of writing
the text, per column kind and for the whole frame, the ratio, and whether the bytes are equal.
No database: this is the Python side of a write only.
"""

from __future__ import annotations

import argparse
import io
from datetime import UTC, date, datetime

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
from _common import best_of_three

from morpheus_pipelines.devtools.demo.dataset import generate_dataset
from morpheus_pipelines.platform.store.copy_csv import frame_csv

OPTIONS = pa_csv.WriteOptions(include_header=False, quoting_style="all_valid")


def arrows_own(frame: pd.DataFrame) -> bytes:
    """The text as Arrow's CSV writer gives it, every column as Arrow converts it."""
    table = pa.table({name: pa.array(frame[name], from_pandas=True) for name in frame.columns})
    sink = io.BytesIO()
    pa_csv.write_csv(table, sink, OPTIONS)
    return sink.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=632_683)
    args = parser.parse_args()
    tenants = generate_dataset(
        tenants=args.rows, companies=1_000, partition_day=date(2026, 11, 28), seed=7
    ).tenants
    frame = pd.DataFrame(
        {
            "tenant_id": tenants["id"].astype(str),
            "name": tenants["name"].astype(str),
            "email": tenants["email"].astype(str),
            "plan": tenants["plan"].astype(str),
            "seats": tenants["seats"].astype("Int64"),
            "signup_at": tenants["created_at"],
            "last_active_at": tenants["last_active_at"],
            "hubspot_snapshot_synced_at": pd.Series(
                datetime(2026, 11, 28, 2, 0, tzinfo=UTC), index=tenants.index
            ),
        }
    )
    timestamps = [c for c in frame.columns if isinstance(frame[c].dtype, pd.DatetimeTZDtype)]
    parts = {
        "the three timestamp columns": frame[timestamps],
        "the other columns": frame.drop(columns=timestamps),
        "the whole frame": frame,
    }
    print(f"{len(frame):,} rows; best of three, seconds")
    print(f"{'':<30}{'Arrow':>9}{'frame_csv':>11}{'ratio':>8}  same bytes")
    for label, part in parts.items():
        before = best_of_three(lambda p=part: arrows_own(p))
        after = best_of_three(lambda p=part: frame_csv(p, list(p.columns)))
        same = arrows_own(part) == frame_csv(part, list(part.columns))
        print(f"{label:<30}{before:>9.3f}{after:>11.3f}{before / after:>7.1f}×  {same}")


if __name__ == "__main__":
    main()
