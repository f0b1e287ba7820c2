"""Repository of the HubSpot target-account snapshot (docs/pipeline.md)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
from psycopg import sql
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.copying import read_frame
from morpheus_pipelines.platform.store.set_based import SetBasedRepository
from morpheus_pipelines.tenants.rules.matching import SNAPSHOT_COLUMNS as MATCHED_COLUMNS
from morpheus_pipelines.tenants.store.models import HubSpotTargetAccount

# What matching reads of each company: the keys, and the names it logs as hints.
MATCHING_COLUMNS = (*MATCHED_COLUMNS, "name", "account_alias")


class HubSpotTargetAccountRepository(SetBasedRepository[HubSpotTargetAccount]):
    model_class = HubSpotTargetAccount

    def replace_snapshot(
        self, session: Session, rows: Iterable[Sequence[Any]], *, sync_id: str
    ) -> tuple[int, int]:
        """The atomic refresh (docs/pipeline.md) inside the caller's transaction: upsert every
        HubSpot-controlled column of
        every row (NULLs included), then delete the companies of older syncs.

        ``rows`` are tuples in ``SNAPSHOT_COLUMNS`` order, all carrying ``sync_id``.
        Returns (rows upserted, rows deleted).
        """
        upserted = self.bulk_upsert(
            session, rows, columns=SNAPSHOT_COLUMNS, conflict_columns=["hubspot_company_id"]
        )
        deleted = session.execute(
            delete(HubSpotTargetAccount).where(HubSpotTargetAccount.sync_id != sync_id)
        ).rowcount
        return upserted, deleted or 0

    def count_rows(self, session: Session) -> int:
        return session.scalar(select(func.count()).select_from(HubSpotTargetAccount)) or 0

    def matching_digest(self, session: Session) -> str:
        """An md5 of every company's matching columns (what :meth:`load_frame_with_digest`
        reads), in company order: equal digests, equal snapshots as matching prepares them,
        however the rows were written (a sync or a hand edit)."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL("SELECT {} FROM apac_hubspot_target_accounts").format(_digest_of_rows())
            )
            (digest,) = cursor.fetchone()
        return digest

    def load_frame_with_digest(self, session: Session) -> tuple[pd.DataFrame, str]:
        """The snapshot's matching columns (``rules.matching.SNAPSHOT_COLUMNS`` and the names)
        as a DataFrame, and their :meth:`matching_digest`, read by one statement so that both
        are of the same rows whatever commits meanwhile. The JSON array of additional roots
        comes as its text, which matching decodes, so every column is read with ``COPY`` and
        parsed by Arrow, several times faster than fetching Python objects
        (docs/decisions/0028)."""
        columns = sql.SQL(", ").join(
            sql.SQL("s.{}::text AS {}").format(sql.Identifier(c), sql.Identifier(c))
            if c == "additional_domain_roots"
            else sql.SQL("s.{}").format(sql.Identifier(c))
            for c in MATCHING_COLUMNS
        )
        frame = read_frame(
            session,
            sql.SQL(
                "WITH s AS MATERIALIZED (SELECT {} FROM apac_hubspot_target_accounts) "
                "SELECT {}, d.matching_digest FROM s, (SELECT {} AS matching_digest FROM s) d "
                "ORDER BY s.hubspot_company_id"
            ).format(
                sql.SQL(", ").join(map(sql.Identifier, MATCHING_COLUMNS)),
                columns,
                _digest_of_rows(),
            ),
        )
        digests = frame.pop("matching_digest")
        # No rows, no digest column to read it from: the md5 of no text, as the database gives.
        return frame, str(digests.iloc[0]) if len(digests) else hashlib.md5(b"").hexdigest()


def _digest_of_rows() -> sql.Composed:
    """The md5 of a relation's rows of :data:`MATCHING_COLUMNS` (one text line each, in
    company order); a row's text tells a NULL from an empty text and quotes any separator."""
    return sql.SQL(
        "md5(coalesce(string_agg(ROW({})::text, E'\\n' ORDER BY hubspot_company_id), ''))"
    ).format(sql.SQL(", ").join(map(sql.Identifier, MATCHING_COLUMNS)))


SNAPSHOT_COLUMNS = (
    "hubspot_company_id",
    "membership_timestamp",
    "portal_id",
    "account_id",
    "name",
    "account_alias",
    "domain",
    "website",
    "additional_domains",
    "domain_root",
    "website_domain_root",
    "additional_domain_roots",
    "hubspot_modified_at",
    "sync_id",
    "synced_at",
)
