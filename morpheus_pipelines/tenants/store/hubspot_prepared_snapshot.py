"""Repository of the snapshot as routing prepared it for matching
(``apac_hubspot_prepared_snapshots``, docs/pipeline.md, "The prepared snapshot")."""

from __future__ import annotations

from sqlalchemy import delete, func, select, tuple_
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from morpheus_pipelines.platform.store.base import BaseRepository
from morpheus_pipelines.tenants.store.models import HubSpotPreparedSnapshot


class HubSpotPreparedSnapshotRepository(BaseRepository[HubSpotPreparedSnapshot]):
    model_class = HubSpotPreparedSnapshot

    def document(self, session: Session, *, content_digest: str, preparation: str) -> str | None:
        """The document kept for this content and preparation, if one is."""
        return session.scalar(
            select(HubSpotPreparedSnapshot.document).where(
                HubSpotPreparedSnapshot.content_digest == content_digest,
                HubSpotPreparedSnapshot.preparation == preparation,
            )
        )

    def keep(
        self, session: Session, *, content_digest: str, preparation: str, document: str
    ) -> None:
        """Keep ``document`` for this content and preparation, in place of every other: only
        the snapshot in the table can be asked for. A document kept for the same key is
        replaced: a caller keeps one when none was kept or the kept one could not be read.
        Two runs keeping the same key at once write the same document twice; two keeping
        different keys at once (a sync between them) may leave both, and the next keep
        removes the older."""
        key = (content_digest, preparation)
        columns = (HubSpotPreparedSnapshot.content_digest, HubSpotPreparedSnapshot.preparation)
        session.execute(delete(HubSpotPreparedSnapshot).where(tuple_(*columns) != key))
        statement = insert(HubSpotPreparedSnapshot).values(
            content_digest=content_digest, preparation=preparation, document=document
        )
        session.execute(
            statement.on_conflict_do_update(
                index_elements=["content_digest", "preparation"],
                set_={"document": statement.excluded.document, "prepared_at": func.now()},
            )
        )
