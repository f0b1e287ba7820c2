"""Repository of per-partition enrichment results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pandas as pd
from psycopg import sql
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.day_versions import (
    finish_day,
    remove_from_day,
    rows_on,
    start_day,
    valid_on,
    write_day,
)
from morpheus_pipelines.platform.store.planner import analyze, worth_analyzing
from morpheus_pipelines.platform.store.set_based import SetBasedRepository
from morpheus_pipelines.tenants.rules.enrichment import REUSABLE_STATUSES
from morpheus_pipelines.tenants.store.day_tables import (
    ANSWER_VERSIONS,
    CANDIDATE_VERSIONS,
    STORED_COLUMNS,
    answers_on,
    candidates_on,
)
from morpheus_pipelines.tenants.store.models import EnrichedTenant

# The answers a run copied from the day before, for the rest of its transaction.
CARRIED = "enrichment_carried"
# The tenants whose answer of the day may change, for the rest of a run's transaction.
SUSPECTS = "enrichment_suspects"
# A candidate enrichment asks about: neither forced Sales-owned nor rejected.
ENRICHABLE = "NOT c.forced_sales_owned AND c.rejection_reason IS NULL"


class EnrichedTenantRepository(SetBasedRepository[EnrichedTenant]):
    """``apac_enriched_tenants``: read through its view, written as versions."""

    model_class = EnrichedTenant

    def write_chunk(
        self, session: Session, frame: pd.DataFrame, *, partition_key: str, run_id: str
    ) -> int:
        """Write one chunk of answers to the partition; returns the tenants whose answer of
        the day changed. An unchanged answer is not rewritten (its timing and run id stay
        those of the run that produced the values)."""
        staging = self.copy_frame_into_staging(session, frame, columns=STORED_COLUMNS)
        return _write_answers(session, staging, partition_key=partition_key, run_id=run_id)

    def reusable_answers(
        self,
        session: Session,
        wanted: Sequence[tuple[str, str]],
        *,
        answered_after: datetime,
    ) -> dict[str, dict[str, Any]]:
        """For each ``(tenant id, input fingerprint)``, the newest ``enriched`` or
        ``not_found`` answer given for exactly those inputs after ``answered_after``, on any
        day: one probe per tenant into the partial index
        ``ix_apac_enriched_tenant_versions_reuse``."""
        if not wanted:
            return {}
        tenants, fingerprints = zip(*wanted, strict=True)
        columns = sql.SQL(", ").join(sql.SQL("e.") + sql.Identifier(c) for c in STORED_COLUMNS)
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "SELECT {columns} FROM unnest(%s::text[], %s::text[]) AS w(tenant_id, fp) "
                    "CROSS JOIN LATERAL (SELECT * FROM apac_enriched_tenant_versions e "
                    "  WHERE e.tenant_id = w.tenant_id AND e.enrichment_status = ANY(%s) "
                    "    AND e.enriched_at > %s AND e.input_fingerprint = w.fp "
                    "  ORDER BY e.enriched_at DESC LIMIT 1) AS e"
                ).format(columns=columns),
                (list(tenants), list(fingerprints), list(REUSABLE_STATUSES), answered_after),
            )
            return {row[0]: dict(zip(STORED_COLUMNS, row, strict=True)) for row in cursor}

    def base_day(self, session: Session, *, partition_key: str) -> str | None:
        """The newest finished day before ``partition_key`` with answers: what it carries
        forward."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "SELECT max(d.partition_key) FROM {days} d WHERE d.partition_key < {p} "
                    "AND d.complete AND EXISTS (SELECT FROM {versions} v WHERE {valid})"
                ).format(
                    days=sql.Identifier(ANSWER_VERSIONS.days),
                    p=sql.Literal(partition_key),
                    versions=sql.Identifier(ANSWER_VERSIONS.versions),
                    valid=valid_on("v", sql.SQL("d.partition_key")),
                )
            )
            return cursor.fetchone()[0]

    def _list_suspects(
        self,
        session: Session,
        *,
        partition_key: str,
        base_partition: str,
        reusable: sql.Composable,
        every_tenant: bool,
    ) -> dict[str, int]:
        """List, for the rest of the transaction, the tenants whose answer of
        ``partition_key`` may differ from what a carry from ``base_partition`` would give: a
        candidate or answer version that starts after ``base_partition`` (a change since), an
        enrichable candidate without an answer or an answer without one, an answer not
        ``reusable`` as it stands or with errors. Every other enrichable candidate has,
        valid on the day, the answer the base day had, unchanged and reusable: what a carry
        would write, so nothing is read or written for it. Returns those unchanged answers
        per status. ``every_tenant``: list every tenant with a candidate or an answer that
        day."""
        clean = sql.SQL("{reusable} AND e.enrichment_error_count = 0").format(reusable=reusable)
        day = sql.Literal(partition_key)
        base = sql.Literal(base_partition)
        # Skipped only when provably unchanged: whatever the test cannot tell (a candidate
        # without an answer or an answer without one leaves its side NULL) is a suspect.
        suspect = sql.SQL(
            "coalesce({every} OR c.valid_from > {base} OR e.valid_from > {base} "
            "OR NOT ({clean}), true)"
        ).format(every=sql.Literal(every_tenant), base=base, clean=clean)
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "CREATE TEMP TABLE {suspects} (tenant_id text, enrichable boolean) "
                    "ON COMMIT DROP"
                ).format(suspects=sql.Identifier(SUSPECTS))
            )
            # One pass over the day's candidates and answers lists the suspects and counts
            # the others' answers by status.
            cursor.execute(
                sql.SQL(
                    "WITH day AS MATERIALIZED (SELECT coalesce(c.tenant_id, e.tenant_id) "
                    "AS tenant_id, c.tenant_id IS NOT NULL AS enrichable, {suspect} AS suspect, "
                    "e.enrichment_status FROM "
                    "(SELECT c.tenant_id, c.valid_from FROM {candidates} c "
                    " WHERE {valid_c} AND {enrichable} "
                    " AND EXISTS (SELECT FROM {candidate_days} WHERE partition_key = {day})) c "
                    "FULL JOIN (SELECT * FROM {answers} e WHERE {valid_e}) e "
                    "ON e.tenant_id = c.tenant_id), "
                    "listed AS (INSERT INTO {suspects} SELECT tenant_id, enrichable FROM day "
                    "WHERE suspect) "
                    "SELECT enrichment_status, count(*) FROM day WHERE NOT suspect GROUP BY 1"
                ).format(
                    suspect=suspect,
                    candidates=sql.Identifier(CANDIDATE_VERSIONS.versions),
                    candidate_days=sql.Identifier(CANDIDATE_VERSIONS.days),
                    day=day,
                    valid_c=valid_on("c", day),
                    enrichable=sql.SQL(ENRICHABLE),
                    answers=sql.Identifier(ANSWER_VERSIONS.versions),
                    valid_e=valid_on("e", day),
                    suspects=sql.Identifier(SUSPECTS),
                )
            )
            unchanged = {status: n for status, n in cursor}
            cursor.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(SUSPECTS)))
        return unchanged

    def carry_forward(
        self,
        session: Session,
        *,
        partition_key: str,
        run_id: str,
        base_partition: str,
        answered_after: datetime,
        fingerprint_prefix: str,
        every_tenant: bool = False,
    ) -> CarriedAnswers:
        """Give ``partition_key`` the answer ``base_partition`` had for every enrichable
        candidate asked about with the same name and email that day, when the answer is
        reusable (``enriched``/``not_found``, given after ``answered_after``, its
        fingerprint made with today's domain lists: ``fingerprint_prefix``). A carried
        answer is a reused one (no errors, its original time and duration).

        Only the suspects are looked at (``_list_suspects``; all with ``every_tenant``):
        every other tenant already has that answer on the day. Of the suspects' carried
        answers only those that differ from the day's are written. The suspects and the
        carried tenants stay listed for :meth:`unanswered_candidates` and
        :meth:`remove_orphans` in this transaction."""
        reusable = {
            alias: sql.SQL(
                "{a}.enrichment_status = ANY({statuses}::text[]) AND {a}.enriched_at > {after} "
                "AND starts_with({a}.input_fingerprint, {prefix})"
            ).format(
                a=sql.Identifier(alias),
                statuses=sql.Literal(list(REUSABLE_STATUSES)),
                after=sql.Literal(answered_after),
                prefix=sql.Literal(fingerprint_prefix),
            )
            for alias in ("e", "eb")
        }
        unchanged = self._list_suspects(
            session,
            partition_key=partition_key,
            base_partition=base_partition,
            reusable=reusable["e"],
            every_tenant=every_tenant,
        )
        copied = [c for c in STORED_COLUMNS if c not in ("tenant_id", "enrichment_error_count")]
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "CREATE TEMP TABLE {carried} ON COMMIT DROP AS "
                    "SELECT c.tenant_id, 0 AS enrichment_error_count, {values} "
                    "FROM {suspects} s JOIN {candidates} c ON c.tenant_id = s.tenant_id "
                    "JOIN {base_candidates} cb ON cb.tenant_id = s.tenant_id "
                    "JOIN {base_answers} eb ON eb.tenant_id = s.tenant_id "
                    "WHERE s.enrichable AND {enrichable} "
                    "AND (c.name, c.email) IS NOT DISTINCT FROM (cb.name, cb.email) "
                    "AND {reusable}"
                ).format(
                    carried=sql.Identifier(CARRIED),
                    suspects=sql.Identifier(SUSPECTS),
                    values=sql.SQL(", ").join(
                        sql.SQL("eb.{}").format(sql.Identifier(c)) for c in copied
                    ),
                    candidates=candidates_on(partition_key),
                    base_candidates=candidates_on(base_partition),
                    base_answers=answers_on(base_partition),
                    enrichable=sql.SQL(ENRICHABLE),
                    reusable=reusable["eb"],
                )
            )
            # Sized for the planner: compared below by probes into the versions, not a hash
            # of all of them, when few tenants are carried.
            cursor.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(CARRIED)))
            cursor.execute(
                sql.SQL(
                    "SELECT enrichment_status, count(*) FROM {} GROUP BY enrichment_status"
                ).format(sql.Identifier(CARRIED))
            )
            statuses = {status: n for status, n in cursor}
        written = _write_answers(session, CARRIED, partition_key=partition_key, run_id=run_id)
        return CarriedAnswers(unchanged=unchanged, statuses=statuses, written=written)

    def unanswered_candidates(self, session: Session) -> list[str]:
        """The partition's enrichable suspects whose answer :meth:`carry_forward` did not
        carry in this transaction, in tenant-id order."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "SELECT s.tenant_id FROM {suspects} s WHERE s.enrichable "
                    "AND NOT EXISTS (SELECT FROM {carried} k WHERE k.tenant_id = s.tenant_id) "
                    "ORDER BY s.tenant_id"
                ).format(suspects=sql.Identifier(SUSPECTS), carried=sql.Identifier(CARRIED))
            )
            return [tenant_id for (tenant_id,) in cursor]

    def remove_orphans(self, session: Session, *, partition_key: str, among_suspects: bool) -> int:
        """Remove from the partition the answers of tenants that are not its enrichable
        candidates: tenants that left since the day its answers carry forward from, or a
        re-run's after the source changed. ``among_suspects``: only :meth:`carry_forward`'s
        suspects can be any (in this transaction); otherwise every answer of the day is
        looked at. Counted in the run's changes, which :meth:`finish_day` analyses after.
        Returns the answers removed."""
        if among_suspects:
            keys = sql.SQL("SELECT tenant_id FROM {} WHERE NOT enrichable").format(
                sql.Identifier(SUSPECTS)
            )
        else:
            keys = sql.SQL(
                "SELECT e.tenant_id FROM {answers} e WHERE NOT EXISTS (SELECT FROM {candidates} c "
                "WHERE c.tenant_id = e.tenant_id AND {enrichable})"
            ).format(
                answers=rows_on(ANSWER_VERSIONS, sql.Literal(partition_key), unfinished=True),
                candidates=candidates_on(partition_key),
                enrichable=sql.SQL(ENRICHABLE),
            )
        return remove_from_day(
            session, ANSWER_VERSIONS, day=partition_key, keys=keys, finishes_day=False
        )

    def start_day(self, session: Session, *, partition_key: str) -> None:
        """Begin the partition's answers: until :meth:`finish_day` the day answers nothing
        (a re-run's earlier answers included), so a run that stops half-way never leaves a
        day whose unwritten tenants show an answer given for inputs that have changed since
        (the next day would take it for the day's and not ask)."""
        start_day(session, ANSWER_VERSIONS, day=partition_key)

    def finish_day(
        self, session: Session, *, partition_key: str, changed: int | None = None, answers: int = 0
    ) -> None:
        """Make the answers written since :meth:`start_day` the partition's. ``changed``: the
        answers the run wrote or removed of the day's ``answers`` (None: unknown); the
        statistics are refreshed when that is more than ``planner.ANALYZE_SHARE`` of them."""
        finish_day(session, ANSWER_VERSIONS, day=partition_key)
        if changed is None or worth_analyzing(changed, answers):
            analyze(session, ANSWER_VERSIONS.versions)


@dataclass(frozen=True)
class CarriedAnswers:
    """What :meth:`EnrichedTenantRepository.carry_forward` found and carried."""

    # The day's answers left as they were (not suspects), by status.
    unchanged: dict[str, int]
    # The answers carried from the day before, by status.
    statuses: dict[str, int]
    # Of them, those whose answer of the day changed (written): normally none.
    written: int

    @property
    def carried(self) -> int:
        """Tenants whose answer was carried from the day before."""
        return sum(self.statuses.values())


def _write_answers(session: Session, table: str, *, partition_key: str, run_id: str) -> int:
    """Write the answers in ``table`` (``STORED_COLUMNS``) to the partition being enriched,
    as ``run_id``'s; returns the tenants whose answer of the day changed."""
    rows = sql.SQL("SELECT {columns}, {run} FROM {table}").format(
        columns=sql.SQL(", ").join(
            sql.Identifier(c) for c in ANSWER_VERSIONS.columns if c != "run_id"
        ),
        run=sql.Literal(run_id),
        table=sql.Identifier(table),
    )
    return write_day(
        session, ANSWER_VERSIONS, day=partition_key, rows=rows, complete=False, finishes_day=False
    )
