"""Database plumbing: the embedded default server, URLs, engines and sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from morpheus_pipelines.db.session import dispose_engines, get_engine, get_session

__all__ = ["dispose_engines", "get_engine", "get_session"]


def __getattr__(name: str) -> Any:
    # Resolved on first use: the session module brings SQLAlchemy and psycopg, which a module
    # that only needs the embedded server or a URL (`morpheus --help`, say) does not.
    if name in __all__:
        from morpheus_pipelines.db import session

        return getattr(session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
