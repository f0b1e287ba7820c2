"""Engines and the caller-owned session of docs/data-layer.md.

``get_session()`` commits on a clean exit and rolls back on an exception; repositories never
commit. ``expire_on_commit=False`` keeps scalar attributes readable after the block ends.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session, sessionmaker

if TYPE_CHECKING:
    import psycopg  # the engine's dialect imports it when it first connects

_engines: dict[str, tuple[Engine, sessionmaker[Session]]] = {}
_default_urls: dict[tuple[str, str], str] = {}
_lock = threading.Lock()


# What services take to open their own short transactions: ``get_session`` bound to a URL,
# ``WarehouseResource.session``, ...
SessionFactory = Callable[[], AbstractContextManager[Session]]


def default_url() -> str:
    """The warehouse URL for the current environment, resolved once per environment."""
    key = (os.environ.get("MORPHEUS_DATABASE_URL", ""), os.environ.get("MORPHEUS_HOME", ""))
    if key not in _default_urls:
        from morpheus_pipelines.db.urls import warehouse_url

        _default_urls[key] = warehouse_url()
    return _default_urls[key]


def _engine_and_factory(url: str | None) -> tuple[Engine, sessionmaker[Session]]:
    url = url or default_url()
    with _lock:
        if url not in _engines:
            engine = create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)
            _engines[url] = (engine, sessionmaker(engine, expire_on_commit=False))
        return _engines[url]


def get_engine(url: str | None = None) -> Engine:
    """One pooled engine per URL and process; the default URL is the warehouse."""
    return _engine_and_factory(url)[0]


@contextmanager
def get_session(url: str | None = None) -> Iterator[Session]:
    """A session whose transaction commits on clean exit and rolls back on any exception."""
    session = _engine_and_factory(url)[1]()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def dispose_engines() -> None:
    """Close every pooled connection (after a fork, or when a test database is dropped)."""
    with _lock:
        for engine, _ in _engines.values():
            engine.dispose()
        _engines.clear()
        _default_urls.clear()


def driver_cursor(session: Session) -> psycopg.Cursor[Any]:
    """A psycopg cursor on the session's own connection and transaction."""
    return session.connection().connection.driver_connection.cursor()
