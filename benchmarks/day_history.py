"""What a day-versioned table costs as its history grows (docs/data-layer.md, "Day-versioned
tables").

    uv run python benchmarks/day_history.py [--tenants 100000] [--days 365] [--changed 0.01]

On a scratch database, a table shaped like the tenant tables' versions (a key, a value and the
run) lives through ``--days`` days of ``--tenants`` keys, a different ``--changed`` fraction of
them changing each day, each day written with the pipeline's own ``write_day``. At a few
checkpoints it prints the seconds to write that day, to read the newest day and the first day
back as the repositories read them (``rows_on``: the mean of three), the versions stored and
the table's size. Then the same reads with an index on ``valid_to``, and the newest day read
as the versions still open (``valid_to IS NULL``), the shape a read of the newest day can take.
"""

from __future__ import annotations

import argparse
import time
from datetime import date, timedelta

from _common import scratch_database
from end_to_end import python_yardstick
from psycopg import sql
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor, get_session
from morpheus_pipelines.platform.store.day_versions import DayVersions, rows_on, write_day

TABLE = DayVersions(
    versions="history_versions",
    days="history_days",
    key="tenant_id",
    compared=("value",),
    carried=("run_id",),
)
SCHEMA = (
    "CREATE TABLE history_versions (tenant_id text, valid_from text, valid_to text, "
    "value integer NOT NULL, run_id text NOT NULL, PRIMARY KEY (tenant_id, valid_from)) "
    "WITH (fillfactor = 90)",
    "CREATE TABLE history_days (partition_key text PRIMARY KEY, complete boolean NOT NULL)",
    # The source: one row per key, a fraction of it changed before each day is written.
    "CREATE TABLE history_source (n integer PRIMARY KEY, tenant_id text NOT NULL, "
    "value integer NOT NULL)",
)


def mean_seconds(
    session: Session, statement: sql.Composable, repeat: int = 3
) -> tuple[float, tuple]:
    with driver_cursor(session) as cursor:
        started = time.perf_counter()
        for _ in range(repeat):
            cursor.execute(statement)
            answer = cursor.fetchone()
        return (time.perf_counter() - started) / repeat, answer


def reads(session: Session, newest: str, first: str) -> dict[str, tuple[float, tuple]]:
    def day(key: str) -> sql.Composable:
        return sql.SQL("SELECT count(*), sum(value) FROM {} d").format(
            rows_on(TABLE, sql.Literal(key))
        )

    return {
        "newest": mean_seconds(session, day(newest)),
        "first": mean_seconds(session, day(first)),
        "open": mean_seconds(
            session,
            sql.SQL("SELECT count(*), sum(value) FROM history_versions WHERE valid_to IS NULL"),
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tenants", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--changed", type=float, default=0.01)
    args = parser.parse_args()
    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    every = max(1, round(1 / args.changed))
    keys = [(date(2026, 1, 1) + timedelta(days=d)).isoformat() for d in range(args.days)]
    checkpoints = {1, 30, 90, 180, 365, args.days}
    print(
        f"{args.tenants:,} keys, {args.days} days, 1 in {every} changing a day\n"
        f"{'day':>5} {'write s':>8} {'read newest s':>14} {'read first s':>13} "
        f"{'open only s':>12} {'versions':>10} {'MiB':>6}"
    )
    with scratch_database() as url:
        with get_session(url) as session, driver_cursor(session) as cursor:
            for statement in SCHEMA:
                cursor.execute(statement)
            cursor.execute(
                "INSERT INTO history_source SELECT n, 't' || lpad(n::text, 8, '0'), 0 "
                "FROM generate_series(0, %s) n",
                (args.tenants - 1,),
            )
        rows = sql.SQL("SELECT tenant_id, value, 'run' FROM history_source")
        for d, key in enumerate(keys, start=1):
            with get_session(url) as session:
                if d > 1:
                    with driver_cursor(session) as cursor:
                        cursor.execute(
                            "UPDATE history_source SET value = value + 1 WHERE n %% %s = %s",
                            (every, d % every),
                        )
                started = time.perf_counter()
                write_day(session, TABLE, day=key, rows=rows, complete=True)
                session.commit()
                written = time.perf_counter() - started
            if d not in checkpoints:
                continue
            with get_session(url) as session:
                session.connection().exec_driver_sql("ANALYZE history_versions")
                measured = reads(session, key, keys[0])
                versions, size = (
                    session.connection()
                    .exec_driver_sql(
                        "SELECT count(*), pg_total_relation_size('history_versions') / 1048576.0 "
                        "FROM history_versions"
                    )
                    .one()
                )
            print(
                f"{d:>5} {written:>8.3f} {measured['newest'][0]:>14.3f} "
                f"{measured['first'][0]:>13.3f} {measured['open'][0]:>12.3f} "
                f"{versions:>10,} {size:>6.0f}   answers {measured['newest'][1]} "
                f"{measured['first'][1]}"
            )
        with get_session(url) as session:
            session.connection().exec_driver_sql("CREATE INDEX ON history_versions (valid_to)")
            session.connection().exec_driver_sql("ANALYZE history_versions")
            measured = reads(session, keys[-1], keys[0])
        print(
            f"with an index on valid_to: read newest {measured['newest'][0]:.3f} s, "
            f"first {measured['first'][0]:.3f} s, open only {measured['open'][0]:.3f} s"
        )
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")


if __name__ == "__main__":
    main()
