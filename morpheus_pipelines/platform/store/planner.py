"""What the planner is told around a bulk statement: server settings for one block of a
transaction, merge joins for the selects that join partitions on their keys, index probes for
an update of a minority of a table's rows, and ``ANALYZE`` after a bulk write."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager

from psycopg import sql
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor

# The sample a staging table is analysed with: 3,000 rows instead of PostgreSQL's 30,000.
# A staging table lives for one transaction and is joined on its key: the row count, null
# fractions and the key's distinctness are what its plans need, and the default sample is ten
# times the work for no better plan (docs/performance.md).
STAGING_STATISTICS_TARGET = 10

# The share of a table's rows a write must change before the writer analyses the table
# itself: autovacuum's default ``autovacuum_analyze_scale_factor``, which analyses it later
# past that share; below it, the statistics of the last bulk write still describe the table.
ANALYZE_SHARE = 0.1


def worth_analyzing(changed: int, rows: int) -> bool:
    """Whether a write that changed ``changed`` of a table's ``rows`` rows (a first write: all
    of them) should be followed by ``ANALYZE``."""
    return changed > ANALYZE_SHARE * rows


def analyze(session: Session, table: str, *, statistics_target: int | None = None) -> None:
    """Refresh the planner's statistics after a bulk write: autovacuum runs later, and a
    plan made on "empty table" estimates turns an anti-join over 100,000 rows into
    minutes of nested loops. ``statistics_target``: the sample size for this ``ANALYZE``
    only (PostgreSQL's ``default_statistics_target``; None keeps the server's)."""
    settings = (
        {} if statistics_target is None else {"default_statistics_target": str(statistics_target)}
    )
    with local_settings(session, settings), driver_cursor(session) as cursor:
        cursor.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))


def analyze_transient(session: Session, table: str) -> None:
    """:func:`analyze` a table that lives for one transaction and is joined on its key (a
    staging table, a temporary list of tenants) from the ``STAGING_STATISTICS_TARGET``
    sample: its row count, null fractions and the key's distinctness are what its plans
    need."""
    analyze(session, table, statistics_target=STAGING_STATISTICS_TARGET)


@contextmanager
def local_settings(session: Session, settings: Mapping[str, str]) -> Iterator[None]:
    """Run the block with the server ``settings`` set for the session's transaction, then put
    back the values they had. Read and set in one statement each. Transaction-local: on an
    error the rollback undoes them (and the aborted transaction would refuse the restore)."""
    names = list(settings)
    if not names:
        yield
        return

    def set_all(values: Sequence[str]) -> None:
        with driver_cursor(session) as cursor:
            cursor.execute(
                "SELECT " + ", ".join("set_config(%s, %s, true)" for _ in names),
                [item for pair in zip(names, values, strict=True) for item in pair],
            )

    with driver_cursor(session) as cursor:
        cursor.execute("SELECT " + ", ".join("current_setting(%s)" for _ in names), names)
        previous = cursor.fetchone()
    set_all([settings[name] for name in names])
    yield
    set_all(previous)


def merge_joins(session: Session) -> AbstractContextManager[None]:
    """Plan the session's statements inside the block with merge joins only, in one process,
    then restore the planner's settings. For a select that joins one partition of each
    partition-keyed table on their primary keys: every input is read once, in key order, where
    the planner's own choice (index lookups per row, parallel hash joins) was slower. No
    parallel workers: while the select streams into a ``COPY`` on another connection the cores
    are already busy, and each worker of a parallel merge join reads every inner input again
    (docs/performance.md, "A quiet day")."""
    return local_settings(
        session,
        {
            "enable_hashjoin": "off",
            "enable_nestloop": "off",
            "max_parallel_workers_per_gather": "0",
        },
    )


def no_nested_loops(session: Session) -> AbstractContextManager[None]:
    """Plan the session's statements inside the block without nested loops, then restore the
    planner's settings. For a select that joins whole days of several tables on the tenant and
    a second column that agrees with it (a version number): the planner multiplies the two
    equalities' selectivities, expects one row from a join that yields every tenant, and then
    probes an index once per tenant above the parallel workers, where hash joins read each
    input once (docs/performance.md, "A quiet day")."""
    return local_settings(session, {"enable_nestloop": "off"})


def index_probes(session: Session) -> AbstractContextManager[None]:
    """Plan the session's statements inside the block with nested loops (an index probe per
    outer row) instead of hash or merge joins, then restore the planner's settings. For an
    update of a table's rows from a staged set of a minority of its keys: the planner hashes
    every row of the table to probe it with the staged ones; probing the table's primary key
    once per staged row builds no hash and reads no row that is not staged
    (docs/decisions/0069)."""
    return local_settings(session, {"enable_hashjoin": "off", "enable_mergejoin": "off"})
