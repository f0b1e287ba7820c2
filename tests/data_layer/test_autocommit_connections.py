"""The event loop's autocommit connections (``morpheus_pipelines.db.autocommit``), against the
real server: at most their number open, a dead connection replaced within the statement that
found it, a refused connection an error at once, a wait for a busy one bounded."""

from __future__ import annotations

import asyncio
import socket
import time
import uuid

import psycopg
import pytest

from morpheus_pipelines.db.autocommit import AutocommitConnections
from morpheus_pipelines.db.urls import libpq_url


def _connections(url: str, **options) -> AutocommitConnections:
    name = f"test-{uuid.uuid4().hex[:12]}"
    return AutocommitConnections(libpq_url(url), application_name=name, **options)


def _backends(url: str, name: str) -> list[int]:
    with psycopg.connect(libpq_url(url), autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (name,)
        ).fetchall()
    return [pid for (pid,) in rows]


def _terminate(url: str, pids: list[int]) -> None:
    with psycopg.connect(libpq_url(url), autocommit=True) as admin:
        for pid in pids:
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))


async def _open_both(connections: AutocommitConnections) -> None:
    """Two statements at once, so both connections are open and then kept idle."""
    both = asyncio.Barrier(2)

    async def one() -> None:
        await both.wait()
        await connections.fetch_one("SELECT pg_backend_pid()", ())

    await asyncio.gather(one(), one())


def test_statements_share_at_most_size_connections_and_keep_them(database_url: str) -> None:
    connections = _connections(database_url, size=2)

    async def run() -> list[int]:
        rows = await asyncio.gather(
            *(connections.fetch_one("SELECT pg_backend_pid()", ()) for _ in range(20))
        )
        again = await connections.fetch_one("SELECT pg_backend_pid()", ())
        await connections.close()
        return [pid for (pid,) in [*rows, again]]

    pids = asyncio.run(run())
    assert 1 <= len(set(pids)) <= 2 and connections.opened == len(set(pids))


def test_a_server_restart_costs_no_statement(database_url: str) -> None:
    """Both kept connections killed by the server (what a restart does): the next statement
    finds one dead, drops every idle one and runs on a new connection. Trying the second dead
    one instead would have failed the statement."""
    connections = _connections(database_url, size=2)
    name = connections._connect_options["application_name"]

    async def run() -> tuple[int, list[int]]:
        await _open_both(connections)
        dead = _backends(database_url, name)
        _terminate(database_url, dead)
        (pid,) = await connections.fetch_one("SELECT pg_backend_pid()", ())
        await connections.close()
        return pid, dead

    pid, dead = asyncio.run(run())
    assert len(dead) == 2 and pid not in dead
    assert connections.opened == 3


def test_a_refused_connection_is_an_error_at_once() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once it is closed
    connections = AutocommitConnections(
        f"postgresql://postgres:x@127.0.0.1:{port}/none", size=1, wait_timeout=30
    )
    started = time.monotonic()
    with pytest.raises(psycopg.OperationalError):
        asyncio.run(connections.fetch_one("SELECT 1", ()))
    # Not the wait for a connection (30 s): nothing was waited for.
    assert time.monotonic() - started < 10
    assert connections.opened == 0


def test_a_wait_for_a_busy_connection_is_bounded(database_url: str) -> None:
    """One connection, held by a statement waiting on a lock: the next statement gives up
    after the wait timeout rather than queueing behind it for ever."""
    connections = _connections(database_url, size=1, wait_timeout=0.2)
    lock = 4_242_001

    async def run() -> None:
        with psycopg.connect(libpq_url(database_url), autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s)", (lock,))
            blocked = asyncio.create_task(
                connections.fetch_one("SELECT pg_advisory_lock(%s)", (lock,))
            )
            while connections.opened == 0:  # the first statement has its connection
                await asyncio.sleep(0)
            with pytest.raises(TimeoutError):
                await connections.fetch_one("SELECT 1", ())
            holder.execute("SELECT pg_advisory_unlock(%s)", (lock,))
            await blocked
        await connections.close()

    asyncio.run(run())
