"""Database plumbing: the embedded default server, URLs, engines and sessions."""

from morpheus_pipelines.db.session import dispose_engines, get_engine, get_session

__all__ = ["dispose_engines", "get_engine", "get_session"]
