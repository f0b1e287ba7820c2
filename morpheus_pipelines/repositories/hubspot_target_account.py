"""Repository of the HubSpot target-account snapshot (docs/pipeline.md)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from morpheus_pipelines.models import HubSpotTargetAccount
from morpheus_pipelines.repositories.set_based import SetBasedRepository


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

    def load_frame(self, session: Session) -> pd.DataFrame:
        """The whole (small) snapshot as a DataFrame, for matching."""
        result = session.execute(select(*HubSpotTargetAccount.__table__.columns))
        return pd.DataFrame(result.fetchall(), columns=list(result.keys()))


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
