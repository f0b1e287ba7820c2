"""A few autocommit connections for one-statement work done on the event loop itself.

The intake takes each request's budget with one statement before it reads the request
(docs/leads.md, "Request budgets"). Run on a worker thread, that statement cost a hop to the
thread and back besides the request's own; run here, on the event loop with psycopg's
asynchronous connection, it costs neither (docs/decisions/0055).

Written by hand rather than with ``psycopg_pool`` for what an outage must look like to a
sender. That pool connects in background tasks with a growing back-off: a request that
finds the database gone waits its whole timeout before it can be told 503, and once the
database is back requests keep waiting out the back-off. Here a connection is opened by the
request that needs one, so a refused connection is an answer at once and the first request
after the outage connects again; and a connection found broken makes every idle one be
dropped, as a server restart closes them all (the SQLAlchemy pool of the transactions does
the same on an invalidated connection).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg

Params = Mapping[str, Any] | Sequence[Any]


class _Lost(Exception):
    """The connection broke under the statement (``error`` is psycopg's)."""

    def __init__(self, error: psycopg.Error) -> None:
        super().__init__(str(error))
        self.error = error


class AutocommitConnections:
    """At most ``size`` connections in autocommit, each opened when a statement first needs
    it and kept for the next. Statements past ``size`` at once wait for a connection, at
    most ``wait_timeout`` seconds; a statement runs at most ``statement_timeout`` seconds
    (either: :class:`TimeoutError`). Bound to the event loop that first has to wait on it:
    one object per event loop."""

    def __init__(
        self,
        conninfo: str,
        *,
        size: int,
        options: str = "",
        application_name: str = "morpheus",
        connect_timeout: int = 3,
        wait_timeout: float = 5.0,
        statement_timeout: float = 5.0,
    ) -> None:
        if size < 1:
            raise ValueError(f"at least one connection is needed, got {size}")
        self._conninfo = conninfo
        self._connect_options = {
            "connect_timeout": connect_timeout,
            "options": options,
            "application_name": application_name,
        }
        self._wait_timeout = wait_timeout
        self._statement_timeout = statement_timeout
        self._slots = asyncio.Semaphore(size)
        self._idle: list[psycopg.AsyncConnection[Any]] = []
        self._closed = False
        self.opened = 0  # connections opened over this object's life

    async def fetch_one(self, query: str, params: Params) -> Any:
        """The first row of ``query``, run as its own transaction. When a kept connection
        turns out broken (the server restarted, or ended the session), every idle one is
        dropped and the statement is tried once more on a new connection; any other
        failure is raised as psycopg raised it. A statement whose connection broke after
        the server committed it is therefore run twice: a budget counts one request twice."""
        if self._closed:
            raise RuntimeError("these connections are closed")
        async with asyncio.timeout(self._wait_timeout):
            await self._slots.acquire()
        try:
            reused = bool(self._idle)
            try:
                return await self._run(query, params)
            except _Lost as lost:
                if not reused:
                    raise lost.error from None
            await self._drop_idle()
            try:
                return await self._run(query, params)
            except _Lost as lost:
                raise lost.error from None
        finally:
            self._slots.release()

    async def close(self) -> None:
        """Close every idle connection now, and each one in use when its statement ends;
        no statement is taken afterwards."""
        self._closed = True
        await self._drop_idle()

    async def _run(self, query: str, params: Params) -> Any:
        connection = self._idle.pop() if self._idle else await self._connect()
        try:
            async with asyncio.timeout(self._statement_timeout):
                cursor = await connection.execute(query, params)
                row = await cursor.fetchone()
        except psycopg.Error as exc:
            if connection.broken or connection.closed:
                await connection.close()
                raise _Lost(exc) from exc
            # The server refused the statement; in autocommit the connection is as good
            # as before.
            await self._give_back(connection)
            raise
        except BaseException:
            # Cancelled (a timeout, the client gone): its state is not known, so not kept.
            await connection.close()
            raise
        await self._give_back(connection)
        return row

    async def _give_back(self, connection: psycopg.AsyncConnection[Any]) -> None:
        if self._closed:
            await connection.close()
        else:
            self._idle.append(connection)

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        connection = await psycopg.AsyncConnection.connect(
            self._conninfo, autocommit=True, **self._connect_options
        )
        self.opened += 1
        return connection

    async def _drop_idle(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            await connection.close()
