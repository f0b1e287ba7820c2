"""Repository of the per-partition tenant candidates."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd
from psycopg import sql
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.base import BaseRepository
from morpheus_pipelines.platform.store.copying import copy_out, read_frame
from morpheus_pipelines.platform.store.day_versions import copy_day_if_empty, start_day, write_day
from morpheus_pipelines.platform.store.keyset import keyset_after
from morpheus_pipelines.platform.store.planner import analyze, worth_analyzing
from morpheus_pipelines.platform.store.set_based import SetBasedRepository
from morpheus_pipelines.tenants.store.day_tables import (
    ANSWER_VERSIONS,
    CANDIDATE_SOURCE_COLUMNS,
    CANDIDATE_VERSIONS,
    candidates_on,
    candidates_with_answers,
)
from morpheus_pipelines.tenants.store.models import CandidateSelection, TenantCandidate

INTEGER_COLUMNS = (
    "seats",
    "active_users_30d",
    "employee_count",
    "enrichment_error_count",
    "enrichment_ms",
    "candidate_version",
    "answer_version",
)


def candidate_rows(
    query: sql.Composable, *, run_id: str, forced_ids: Iterable[str]
) -> sql.Composable:
    """The day's candidate rows, in ``CANDIDATE_VERSIONS.columns`` order, from the source rows
    of ``query`` (``CANDIDATE_SOURCE_COLUMNS``): with whether each is forced Sales-owned, why
    it is rejected, and the run."""
    forced = sql.Literal(sorted(forced_ids))
    return sql.SQL(
        "SELECT {columns}, s.tenant_id = ANY({forced}::text[]), "
        # A blank id cannot be routed or joined on; it is kept with its reason.
        "CASE WHEN btrim(s.tenant_id) = '' THEN 'blank tenant id' END, {run} "
        "FROM ({query}) AS s ({names})"
    ).format(
        columns=sql.SQL(", ").join(
            sql.SQL("s.{}").format(sql.Identifier(c)) for c in CANDIDATE_SOURCE_COLUMNS
        ),
        forced=forced,
        run=sql.Literal(run_id),
        query=query,
        names=sql.SQL(", ").join(map(sql.Identifier, CANDIDATE_SOURCE_COLUMNS)),
    )


class CandidateSelectionRepository(BaseRepository[CandidateSelection]):
    model_class = CandidateSelection


class TenantCandidateRepository(SetBasedRepository[TenantCandidate]):
    """``apac_tenant_candidates`` (read through its view; written as versions), and
    ``apac_candidate_selections`` (one row per partition)."""

    model_class = TenantCandidate
    selections = CandidateSelectionRepository()

    def write_partition(
        self,
        session: Session,
        *,
        source: Session | None,
        query: sql.Composable,
        partition_key: str,
        run_id: str,
        forced_ids: Iterable[str],
    ) -> int:
        """Make the partition's candidates exactly the rows of ``query`` (columns in
        ``CANDIDATE_SOURCE_COLUMNS`` order); returns the tenants whose row of the day changed.
        Only those are written: an unchanged candidate keeps the version it has, its
        ``run_id`` included, so a quiet day or a re-run over unchanged source data writes
        nothing. With no version valid on the day yet (the first day) the rows go straight
        in; otherwise they are compared with the day's versions. When any changed, the day's
        enrichment answers are hidden until enrichment runs for the day again.

        ``query`` runs on ``source`` (another database, or another connection), whose rows
        are streamed into a staging table; with ``source`` None it runs on ``session`` (the
        source table is in the warehouse database, with the candidates' column types: see
        :meth:`reads_in_place`) and its rows are read in place, without passing through this
        process."""
        written = copy_day_if_empty(
            session,
            CANDIDATE_VERSIONS,
            day=partition_key,
            rows=candidate_rows(query, run_id=run_id, forced_ids=forced_ids),
            source=source,
        )
        if written is None:
            selected = query if source is None else self._staged(session, source, query)
            written = write_day(
                session,
                CANDIDATE_VERSIONS,
                day=partition_key,
                rows=candidate_rows(selected, run_id=run_id, forced_ids=forced_ids),
                complete=True,
            )
        if written:
            # The day's answers were given for the candidates it had: until enrichment runs
            # again for it, the day answers none, and the next day does not carry them.
            start_day(session, ANSWER_VERSIONS, day=partition_key)
        return written

    def _staged(self, session: Session, source: Session, query: sql.Composable) -> sql.Composed:
        """The rows of ``query`` on ``source``, streamed into a staging table of ``session``."""
        staging = self.stream_into_staging(
            session, copy_out(source, query), columns=CANDIDATE_SOURCE_COLUMNS
        )
        return sql.SQL("SELECT * FROM {}").format(sql.Identifier(staging))

    def reads_in_place(self, session: Session, query: sql.Composable) -> bool:
        """Whether ``query``, run on ``session``, gives the candidates' column types, so
        :meth:`write_partition` may read its rows in place (``source`` None) and compare
        exactly what a staging table would have held."""
        return self.has_column_types(session, query, columns=CANDIDATE_SOURCE_COLUMNS)

    def record_selection(
        self,
        session: Session,
        *,
        partition_key: str,
        run_id: str,
        tenant_limit: int | None,
        candidates: int,
    ) -> None:
        """Record when (and with which ``limit``) the partition's candidates were read."""
        self.selections.upsert(
            session,
            {
                "partition_key": partition_key,
                "run_id": run_id,
                "selected_at": func.now(),
                "tenant_limit": tenant_limit,
                "candidates": candidates,
            },
            conflict_columns=["partition_key"],
        )

    def refresh_statistics(self, session: Session, *, changed: int, candidates: int) -> None:
        """Analyse the versions for the next assets' plans when ``changed`` (the tenants whose
        row of the day :meth:`write_partition` changed: new, changed and removed) is more
        than ``planner.ANALYZE_SHARE`` of the day's ``candidates`` (a first day); otherwise
        the statistics of the last bulk write stay."""
        if worth_analyzing(changed, candidates):
            analyze(session, CANDIDATE_VERSIONS.versions)

    def selection(self, session: Session, *, partition_key: str) -> CandidateSelection | None:
        """The partition's last candidate selection (None before the first)."""
        return self.selections.get_by_id(session, partition_key)

    def missing_ids(
        self, session: Session, *, partition_key: str, tenant_ids: Iterable[str]
    ) -> list[str]:
        """Those of ``tenant_ids`` that are not candidates of the partition, sorted."""
        wanted = sorted(set(tenant_ids))
        if not wanted:
            return []
        found = set(
            session.scalars(
                select(TenantCandidate.tenant_id).where(
                    TenantCandidate.partition_key == partition_key,
                    TenantCandidate.tenant_id.in_(wanted),
                )
            )
        )
        return [tenant_id for tenant_id in wanted if tenant_id not in found]

    def partition_counts(self, session: Session, *, partition_key: str) -> dict[str, int]:
        """Counts per source type, forced and rejected, for metadata."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "SELECT c.source_type, c.forced_sales_owned, c.rejection_reason IS NOT NULL, "
                    "count(*) FROM {candidates} c GROUP BY 1, 2, 3"
                ).format(candidates=candidates_on(partition_key))
            )
            rows = cursor.fetchall()
        counts = {"total": 0, "active": 0, "signup": 0, "forced_sales_owned": 0, "rejected": 0}
        for source_type, forced, rejected, n in rows:
            counts["total"] += n
            counts[source_type] += n
            counts["forced_sales_owned"] += n if forced else 0
            counts["rejected"] += n if rejected else 0
        return counts

    def read_with_enrichment(
        self,
        session: Session,
        *,
        partition_key: str,
        forced: bool,
        after: str | None,
        limit: int,
        tenant_ids: Sequence[str] | None = None,
    ) -> pd.DataFrame:
        """Up to ``limit`` candidates after tenant id ``after`` (keyset pagination), joined to
        their enrichment, in tenant-id order, with the numbers of the two versions
        (``candidate_version``, ``answer_version``: what the routing inputs record of them);
        only ``tenant_ids`` when given."""
        only = sql.SQL("")
        if tenant_ids is not None:
            only = sql.SQL(" AND c.tenant_id = ANY({}::text[])").format(
                sql.Literal(list(tenant_ids))
            )
        query = sql.SQL(
            "SELECT c.tenant_id, c.source_type, c.custom_id, c.name, c.email, "
            "c.sales_owner_email, c.status, c.plan, c.seats, c.active_users_30d, "
            "c.signup_at, c.last_active_at, c.rejection_reason, "
            "e.email_domain, e.email_domain_class, e.official_website, e.company_name, "
            "e.industry, e.employee_count, e.country, e.enrichment_status, "
            "e.enrichment_error_count, e.enrichment_ms, c.version_number AS candidate_version, "
            "e.version_number AS answer_version "
            "FROM {candidates} "
            "WHERE c.forced_sales_owned = {forced}{only} {after} "
            "ORDER BY c.tenant_id LIMIT {n}"
        ).format(
            candidates=candidates_with_answers(partition_key),
            forced=sql.Literal(forced),
            only=only,
            after=keyset_after("c.tenant_id", after),
            n=sql.Literal(limit),
        )
        frame = read_frame(session, query)
        for name in INTEGER_COLUMNS:
            # NULLs would otherwise turn the column into floats that COPY rejects.
            frame[name] = frame[name].astype("Int64")
        return frame
