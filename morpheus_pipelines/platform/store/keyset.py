"""Keyset-paginated reading: one short transaction per chunk, so memory stays bounded by the
chunk size, not by the partition size, and no transaction stays open while a chunk is
processed."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pandas as pd
from psycopg import sql
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import SessionFactory

PageReader = Callable[[Session, str | None, int], pd.DataFrame]


def iter_keyset_pages(
    session_factory: SessionFactory, read: PageReader, *, size: int, key: str = "tenant_id"
) -> Iterator[pd.DataFrame]:
    """Call ``read(session, after, size)`` until it returns fewer than ``size`` rows."""
    after: str | None = None
    while True:
        with session_factory() as session:
            frame = read(session, after, size)
        if len(frame):
            yield frame
        if len(frame) < size:
            return
        after = frame[key].iloc[-1]


IdPageReader = Callable[[Session, Sequence[str]], pd.DataFrame]


def iter_id_pages(
    session_factory: SessionFactory, read: IdPageReader, ids: Sequence[str], *, size: int
) -> Iterator[pd.DataFrame]:
    """Call ``read(session, page)`` for ``ids`` (already in order), ``size`` ids at a time:
    the paging of a known, usually small, set of rows (the changed tenants of a day)."""
    for start in range(0, len(ids), size):
        with session_factory() as session:
            yield read(session, ids[start : start + size])


PageOrIdsReader = Callable[[Session, str | None, int, Sequence[str] | None], pd.DataFrame]


def iter_pages(
    session_factory: SessionFactory,
    read: PageOrIdsReader,
    *,
    size: int,
    ids: Sequence[str] | None = None,
) -> Iterator[pd.DataFrame]:
    """Every row by keyset when ``ids`` is ``None``, else only the rows of ``ids``:
    ``read(session, after, limit, page)`` serves both (``page`` ``None`` for the keyset)."""
    if ids is None:
        return iter_keyset_pages(
            session_factory,
            lambda session, after, limit: read(session, after, limit, None),
            size=size,
        )
    return iter_id_pages(
        session_factory,
        lambda session, page: read(session, None, len(page), page),
        ids,
        size=size,
    )


def keyset_after(column: str, after: str | None) -> sql.Composable:
    """``AND <column> > after`` for keyset pagination, or nothing on the first page."""
    if after is None:
        return sql.SQL("")
    return sql.SQL("AND {} > {}").format(sql.SQL(column), sql.Literal(after))
