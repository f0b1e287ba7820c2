"""Repository of the HubSpot target-account snapshot (docs/pipeline.md)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class KnownRoots:
    """The registrable roots a snapshot holds, by the raw value they were computed from: a
    ``domain`` or ``website`` (``domains_and_websites``), or an ``hs_additional_domains``
    text (``additional``)."""

    domains_and_websites: dict[str, str | None]
    additional: dict[str, list[str]]


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

    def content_hash(self, session: Session, *, normalisation: str) -> str:
        """The SHA-256 of the snapshot's content (every column but the sync's) and of
        ``normalisation``: the same content normalised otherwise hashes otherwise. It does
        not depend on the sync, the order of the rows, the session's time zone or the
        database's collation."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL("SELECT {} FROM apac_hubspot_target_accounts").format(
                    _content_hash(normalisation)
                )
            )
            (digest,) = cursor.fetchone()
        return digest

    def known_roots(
        self, session: Session, *, list_id: str, normalisation: str
    ) -> KnownRoots | None:
        """The roots the snapshot holds, by raw value, when it is as the list's last successful
        sync left it and that sync normalised as ``normalisation`` does now (its
        :meth:`content_hash` is the one recorded): then each root is what normalising its
        value gives. None otherwise: no sync yet, a row edited since, or another
        normalisation. Read by one statement, so the rows are the ones the hash is of."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "WITH s AS MATERIALIZED (SELECT * FROM apac_hubspot_target_accounts) "
                    "SELECT domain, domain_root, website, website_domain_root, "
                    "additional_domains, additional_domain_roots::text FROM s "
                    "WHERE (SELECT {hash} FROM s) = (SELECT last_successful_snapshot_hash "
                    "FROM apac_hubspot_target_sync_state WHERE list_id = %s)"
                ).format(hash=_content_hash(normalisation)),
                (list_id,),
            )
            rows = cursor.fetchall()
        if not rows:
            return None
        sites: dict[str, str | None] = {}
        additional: dict[str, list[str]] = {}
        for domain, domain_root, website, website_root, more, more_roots in rows:
            if domain is not None:
                sites[domain] = domain_root
            if website is not None:
                sites[website] = website_root
            if more is not None and more_roots is not None:
                additional[more] = json.loads(more_roots)
        return KnownRoots(sites, additional)

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
    columns = sql.SQL(", ").join(map(sql.Identifier, MATCHING_COLUMNS))
    return sql.SQL("md5({})").format(_rows_as_text(columns, sql.SQL("hubspot_company_id")))


def _content_hash(normalisation: str) -> sql.Composed:
    """The SHA-256 of ``normalisation`` and a relation's rows of :data:`CONTENT_COLUMNS` (one
    text line each, in company order), in hex. Times are hashed as epoch seconds, whose text
    does not depend on the session's time zone or date style (epoch seconds are ``numeric``
    since PostgreSQL 14, so ``extra_float_digits`` does not either); the rows are ordered
    byte-wise, whatever the database's collation."""
    columns = sql.SQL(", ").join(
        sql.SQL("extract(epoch FROM {})").format(sql.Identifier(c))
        if c in _TIME_COLUMNS
        else sql.Identifier(c)
        for c in CONTENT_COLUMNS
    )
    rows = _rows_as_text(columns, sql.SQL('hubspot_company_id COLLATE "C"'))
    return sql.SQL(
        "encode(sha256(convert_to({normalisation} || E'\\n' || {rows}, 'UTF8')), 'hex')"
    ).format(normalisation=sql.Literal(normalisation), rows=rows)


def _rows_as_text(columns: sql.Composable, order: sql.Composable) -> sql.Composed:
    """A relation's rows of ``columns`` as one text, a line each in ``order`` ('' for none)."""
    return sql.SQL(
        "coalesce(string_agg(ROW({columns})::text, E'\\n' ORDER BY {order}), '')"
    ).format(columns=columns, order=order)


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
# What a sync writes of each company besides the sync itself: what its content hash covers.
CONTENT_COLUMNS = tuple(c for c in SNAPSHOT_COLUMNS if c not in ("sync_id", "synced_at"))
_TIME_COLUMNS = ("membership_timestamp", "hubspot_modified_at")
