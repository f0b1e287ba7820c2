"""Three ways to store a day's scores, statement by statement (docs/decisions/0050).

    uv run python benchmarks/score_storage.py [--tenants 100000] [--days 20] [--changed 0.35]

On a scratch database, ``--days`` days of scores of ``--tenants`` tenants, of which a
fraction ``--changed`` scores differently each day (the recency movers), stored three ways:

* ``rows``: one row per tenant per day, keyed ``(partition_key, tenant_id)`` — a day writes
  every tenant (the daily copy);
* ``ranges``: one row per tenant and range of days ``[valid_from, valid_to)`` — a day ends
  the changed tenants' rows and opens new ones;
* ``changes``: one row per tenant and day it changed — a day inserts the changed tenants'
  rows, and a day is read back as each tenant's latest change up to it.

Prints, for each, the seconds to write the last day and to read the last and the first day
back (the mean of three reads), and the table's size.
"""

from __future__ import annotations

import argparse
import time
from datetime import date, timedelta

import psycopg
from _common import scratch_database

from morpheus_pipelines.db.urls import libpq_url

CONTENT = "score numeric(6,2) NOT NULL, priority text NOT NULL, contributions jsonb NOT NULL"
# A day's score of tenant ``n`` on day ``d``: the first (1 - changed) of the tenants keep
# theirs, the others move every day.
SCORE = (
    "CASE WHEN n < {keep} THEN (n % 100)::numeric ELSE ((n + {d}) % 100)::numeric END AS score, "
    "CASE WHEN n % 4 = 0 THEN 'P1' ELSE 'P3' END AS priority, "
    "jsonb_build_object('seats', n % 7, 'recency', CASE WHEN n < {keep} THEN 0 ELSE {d} END) "
    "AS contributions"
)

SCHEMAS = {
    "rows": [
        f"CREATE TABLE rows_s (partition_key text, tenant_id text, {CONTENT}, "
        "PRIMARY KEY (partition_key, tenant_id))",
        "CREATE INDEX ON rows_s (tenant_id)",
    ],
    "ranges": [
        f"CREATE TABLE ranges_s (tenant_id text, valid_from text, valid_to text, {CONTENT}, "
        "PRIMARY KEY (tenant_id, valid_from))",
        "CREATE INDEX ON ranges_s (valid_to)",
    ],
    "changes": [
        f"CREATE TABLE changes_s (tenant_id text, partition_key text, {CONTENT}, "
        "PRIMARY KEY (tenant_id, partition_key))",
    ],
}


def day_rows(tenants: int, keep: int, d: int, only_changed: bool) -> str:
    first = keep if only_changed and d > 0 else 0
    return (
        f"SELECT 't' || lpad(n::text, 7, '0') AS tenant_id, {SCORE.format(keep=keep, d=d)} "
        f"FROM generate_series({first}, {tenants - 1}) n"
    )


def write_day(conn: psycopg.Connection, kind: str, key: str, rows: str) -> None:
    if kind == "rows":
        conn.execute(f"INSERT INTO rows_s SELECT '{key}', r.* FROM ({rows}) r")
    elif kind == "ranges":
        conn.execute(f"CREATE TEMP TABLE day ON COMMIT DROP AS {rows}")
        conn.execute(
            f"UPDATE ranges_s v SET valid_to = '{key}' FROM day r WHERE r.tenant_id = v.tenant_id "
            "AND v.valid_to IS NULL"
        )
        conn.execute(
            f"INSERT INTO ranges_s SELECT r.tenant_id, '{key}', NULL, r.score, "
            "r.priority, r.contributions FROM day r"
        )
    else:
        conn.execute(
            f"INSERT INTO changes_s SELECT r.tenant_id, '{key}', r.score, r.priority, "
            f"r.contributions FROM ({rows}) r"
        )
    conn.commit()


def read_day(kind: str, key: str) -> str:
    if kind == "rows":
        return f"SELECT count(*), sum(score) FROM rows_s WHERE partition_key = '{key}'"
    if kind == "ranges":
        return (
            "SELECT count(*), sum(score) FROM ranges_s WHERE valid_from <= "
            f"'{key}' AND (valid_to IS NULL OR valid_to > '{key}')"
        )
    return (
        "SELECT count(*), sum(score) FROM (SELECT DISTINCT ON (tenant_id) score FROM changes_s "
        f"WHERE partition_key <= '{key}' ORDER BY tenant_id, partition_key DESC) latest"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tenants", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=20)
    parser.add_argument("--changed", type=float, default=0.35)
    args = parser.parse_args()
    started = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    print(
        f"machine: a Python loop of 10 million additions took {time.perf_counter() - started:.2f} s"
    )
    keep = int(args.tenants * (1 - args.changed))
    keys = [(date(2026, 11, 1) + timedelta(days=d)).isoformat() for d in range(args.days)]
    print(f"{args.tenants:,} tenants, {args.days} days, {args.tenants - keep:,} change a day")
    print(
        f"{'storage':<9} {'write last day s':>17} {'read last day s':>16} "
        f"{'read first day s':>17} {'rows':>11} {'MiB':>7}"
    )
    with scratch_database() as url, psycopg.connect(libpq_url(url)) as conn:
        for kind, statements in SCHEMAS.items():
            for statement in statements:
                conn.execute(statement)
            conn.commit()
            for d, key in enumerate(keys[:-1]):
                write_day(conn, kind, key, day_rows(args.tenants, keep, d, kind != "rows"))
            conn.execute(f"ANALYZE {kind}_s")
            conn.commit()
            last = len(keys) - 1
            started = time.perf_counter()
            write_day(conn, kind, keys[-1], day_rows(args.tenants, keep, last, kind != "rows"))
            written = time.perf_counter() - started
            conn.execute(f"ANALYZE {kind}_s")
            reads = {}
            answers = {}
            for key in (keys[-1], keys[0]):
                started = time.perf_counter()
                for _ in range(3):
                    answers[key] = conn.execute(read_day(kind, key)).fetchone()
                reads[key] = (time.perf_counter() - started) / 3
            rows, size = conn.execute(
                f"SELECT count(*), pg_total_relation_size('{kind}_s') / 1048576.0 FROM {kind}_s"
            ).fetchone()
            conn.commit()
            print(
                f"{kind:<9} {written:>17.3f} {reads[keys[-1]]:>16.3f} {reads[keys[0]]:>17.3f} "
                f"{rows:>11,} {size:>7.0f}   answers {answers[keys[-1]]} {answers[keys[0]]}"
            )
    started = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    print(f"machine: the same loop at the end took {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
