"""Selecting the APAC tenants of one daily partition from the DevOps source (docs/pipeline.md).

A partition key is a CST (Asia/Shanghai) natural day D. Its candidates are:

* the **active candidates** — current state at run time: region APAC and status not
  ``free_trial``, ``new_user`` or ``closing`` (the unchanged active-candidate SQL; a NULL
  status is excluded by ``NOT IN`` exactly as before);
* the **signups** of day D — region APAC, ``created_at`` in ``[D 00:00, D+1 00:00)`` CST,
  whatever their status.

A tenant in both sets is selected once, with ``source_type = 'signup'``: on its signup day the
fact that it is new is what matters to Sales. The ``FORCED_SALES_OWNED_TENANT_IDS`` are
selected whatever their status or region (they are written to Sales-owned directly), as
``active`` unless they signed up that day. A ``limit`` keeps the first tenants by id (the
rollout's small first invocation, docs/partitions.md).

On the table's first day the rows go straight into the candidate versions; on every other
day and re-run they are compared with the versions valid on the day, and only the changed
tenants written (docs/data-layer.md, "Day-versioned tables"). A source table in the warehouse
database (``MORPHEUS_SOURCE_DATABASE_URL`` unset, or spelled as the warehouse's URL) whose
columns have the candidates' types is read in place by those statements; any other is
streamed with ``COPY … TO STDOUT`` into a warehouse staging table, without being parsed in
Python, the text conversion giving the candidates' types.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import nullcontext
from datetime import datetime

import pandas as pd
from psycopg import sql
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.partitions import day_bounds
from morpheus_pipelines.platform.store.keyset import iter_pages
from morpheus_pipelines.tenants.store.store import TenantStore

EXCLUDED_ACTIVE_STATUSES = ("free_trial", "new_user", "closing")
APAC = "APAC"


def active_candidate_predicate() -> sql.Composed:
    return sql.SQL("region = {apac} AND status NOT IN ({excluded})").format(
        apac=sql.Literal(APAC),
        excluded=sql.SQL(", ").join(map(sql.Literal, EXCLUDED_ACTIVE_STATUSES)),
    )


def signup_predicate(start: datetime, end: datetime) -> sql.Composed:
    return sql.SQL("region = {apac} AND created_at >= {start} AND created_at < {end}").format(
        apac=sql.Literal(APAC), start=sql.Literal(start), end=sql.Literal(end)
    )


def candidate_query(
    schema: str,
    partition_key: str,
    *,
    forced_ids: Iterable[str] = (),
    limit: int | None = None,
) -> sql.Composed:
    """One query, one row per selected tenant, columns in ``CANDIDATE_SOURCE_COLUMNS`` order."""
    start, end = day_bounds(partition_key)
    signup = signup_predicate(start, end)
    forced = sql.SQL("id = ANY({}::text[])").format(sql.Literal(sorted(forced_ids)))
    return sql.SQL(
        "SELECT id, CASE WHEN {signup} THEN 'signup' ELSE 'active' END, custom_id, name, email, "
        "sales_owner_email, status, plan, seats, active_users_30d, created_at, last_active_at "
        "FROM {schema}.tenants WHERE ({active}) OR ({signup}) OR ({forced}) ORDER BY id{limit}"
    ).format(
        signup=signup,
        active=active_candidate_predicate(),
        forced=forced,
        schema=sql.Identifier(schema),
        limit=sql.SQL("") if limit is None else sql.SQL(" LIMIT {}").format(sql.Literal(limit)),
    )


def source_read(in_place: bool | int) -> str:
    """How a selection read its source, as its metadata and event name it."""
    return "in place" if in_place else "streamed"


def select_partition(
    source_factory: SessionFactory,
    session_factory: SessionFactory,
    *,
    schema: str,
    partition_key: str,
    run_id: str,
    forced_ids: frozenset[str],
    limit: int | None = None,
    source_in_warehouse: bool = False,
) -> dict[str, int]:
    """Make the partition's candidates exactly what the source selects now, record the
    selection (when, with which ``limit``), and return the counts for metadata, with
    ``source_read_in_place`` 1 when the source's rows were read in place.

    ``source_in_warehouse``: the source table is in the warehouse database; when its
    columns also have the candidates' types, it is read in the writing transaction and
    ``source_factory`` is not used."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive number of tenants, got {limit}")
    query = candidate_query(schema, partition_key, forced_ids=forced_ids, limit=limit)
    with session_factory() as session:
        candidates = TenantStore(session).candidates
        in_place = source_in_warehouse and candidates.reads_in_place(session, query)
        with nullcontext() if in_place else source_factory() as source:
            # The table's first day writes the rows straight in; every other day compares
            # them with the day's versions and writes only the changed tenants.
            written = candidates.write_partition(
                session,
                source=source,
                query=query,
                partition_key=partition_key,
                run_id=run_id,
                forced_ids=forced_ids,
            )
        counts = candidates.partition_counts(session, partition_key=partition_key)
        candidates.record_selection(
            session,
            partition_key=partition_key,
            run_id=run_id,
            tenant_limit=limit,
            candidates=counts["total"],
        )
        candidates.refresh_statistics(session, changed=written, candidates=counts["total"])
    log_event(
        "tenant_selection_completed",
        run_id=run_id,
        partition_key=partition_key,
        active=counts["active"],
        signup=counts["signup"],
        forced_sales_owned=counts["forced_sales_owned"],
        rejected=counts["rejected"],
        total=counts["total"],
        limit=limit,
        source_read=source_read(in_place),
    )
    return {**counts, "rows_written": written, "source_read_in_place": int(in_place)}


def candidate_chunks(
    session_factory: SessionFactory,
    partition_key: str,
    *,
    forced: bool,
    size: int,
    tenant_ids: Sequence[str] | None = None,
) -> Iterator[pd.DataFrame]:
    """The partition's candidates joined to their enrichment, ``size`` tenants at a time;
    only ``tenant_ids`` (sorted) when given."""

    def read(
        session: Session, after: str | None, limit: int, page: Sequence[str] | None = None
    ) -> pd.DataFrame:
        return TenantStore(session).candidates.read_with_enrichment(
            session,
            partition_key=partition_key,
            forced=forced,
            after=after,
            limit=limit,
            tenant_ids=page,
        )

    return iter_pages(session_factory, read, size=size, ids=tenant_ids)
