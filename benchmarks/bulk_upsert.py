"""Set-based bulk upsert (COPY → temp table → INSERT … ON CONFLICT) versus row-by-row upserts.

    uv run python benchmarks/bulk_upsert.py [--rows 1000000] [--row-by-row 10000]

Prints rows/s for: the row-by-row ``BaseRepository.upsert`` (one statement per row, one
transaction), ``bulk_upsert`` of new rows, ``bulk_upsert`` of the same rows unchanged (the
daily steady state), ``bulk_upsert`` with 5% changed, and a bare ``COPY`` into an unindexed
table as the floor.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

from _common import peak_rss_mib, scratch_database, timed

from morpheus_pipelines.db.session import driver_cursor, get_session
from morpheus_pipelines.tenants.store import ActiveTenantRepository

COLUMNS = [
    "tenant_id",
    "custom_id",
    "name",
    "email",
    "status",
    "source_type",
    "signup_at",
    "plan",
    "seats",
    "active_users_30d",
    "official_website",
    "enrichment_status",
    "hubspot_target",
    "run_id",
    "partition_key",
]
NOW = datetime(2026, 11, 29, tzinfo=UTC)
repo = ActiveTenantRepository()


def tenant_rows(count: int, *, run: str = "r1", changed_every: int = 0) -> list[tuple]:
    rows = []
    for i in range(count):
        plan = "pro" if changed_every and i % changed_every == 0 else "team"
        rows.append(
            (
                f"t{i:07d}",
                f"c{i}",
                f"Tenant {i}",
                f"user{i}@acme{i % 5000}.com.au",
                "active",
                "active",
                NOW - timedelta(days=i % 900),
                plan,
                5 + i % 50,
                i % 40,
                f"https://acme{i % 5000}.com.au",
                "enriched",
                False,
                run,
                "2026-11-29",
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--row-by-row", type=int, default=10_000)
    args = parser.parse_args()
    t: dict[str, float] = {}
    with scratch_database() as url:
        rows = tenant_rows(args.row_by_row)
        with timed("row_by_row", t), get_session(url) as session:
            for row in rows:
                repo.upsert(
                    session, dict(zip(COLUMNS, row, strict=True)), conflict_columns=["tenant_id"]
                )
        with get_session(url) as session:
            session.execute(repo.table.delete())

        rows = tenant_rows(args.rows)
        with timed("bulk_new", t), get_session(url) as session:
            repo.bulk_upsert(session, rows, columns=COLUMNS, conflict_columns=["tenant_id"])
        with timed("bulk_unchanged", t), get_session(url) as session:
            unchanged = repo.bulk_upsert(
                session,
                rows,
                columns=COLUMNS,
                conflict_columns=["tenant_id"],
                touch_columns=["run_id"],
            )
        rows = tenant_rows(args.rows, changed_every=20)
        with timed("bulk_5pct_changed", t), get_session(url) as session:
            changed = repo.bulk_upsert(
                session,
                rows,
                columns=COLUMNS,
                conflict_columns=["tenant_id"],
                touch_columns=["run_id"],
            )
        with timed("bare_copy", t), get_session(url) as session, driver_cursor(session) as cur:
            cur.execute(
                "CREATE UNLOGGED TABLE copy_floor AS SELECT "
                + ", ".join(COLUMNS)
                + " FROM apac_active_tenants WITH NO DATA"
            )
            with cur.copy("COPY copy_floor (" + ", ".join(COLUMNS) + ") FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)

    per_row = t["row_by_row"] / args.row_by_row
    print(f"rows (bulk): {args.rows:,}   rows (row-by-row): {args.row_by_row:,}")
    print(f"row-by-row upsert      {args.row_by_row / t['row_by_row']:>12,.0f} rows/s")
    for label in ("bulk_new", "bulk_unchanged", "bulk_5pct_changed", "bare_copy"):
        rate = args.rows / t[label]
        print(
            f"{label:<22} {rate:>12,.0f} rows/s  {t[label]:7.2f} s  "
            f"speed-up vs row-by-row {per_row * args.rows / t[label]:7.0f}x  "
            f"vs bare COPY {t[label] / t['bare_copy']:5.2f}x"
        )
    print(f"rows written when unchanged: {unchanged:,}; with 5% changed: {changed:,}")
    print(f"peak RSS: {peak_rss_mib():,.0f} MiB")


if __name__ == "__main__":
    main()
