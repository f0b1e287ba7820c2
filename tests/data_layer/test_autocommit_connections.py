"""The event loop's autocommit connections (``morpheus_pipelines.db.autocommit``), against the
real server: at most their number open, a broken connection replaced within the statement that
found it, a statement's own error no reason to reconnect, a cancelled statement's connection
not kept, a refused connection an error at once, the wait for a busy one and a statement
bounded, nothing left open once closed."""

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


LOCK = 4_242_001


async def _held_lock_statement(connections: AutocommitConnections) -> asyncio.Task:
    """A statement waiting for :data:`LOCK` (held by the caller), once it has its connection."""
    blocked = asyncio.create_task(connections.fetch_one("SELECT pg_advisory_lock(%s)", (LOCK,)))
    opened = connections.opened
    while connections.opened == opened and not blocked.done():  # it has its connection
        await asyncio.sleep(0)
    return blocked


def test_a_wait_for_a_busy_connection_is_bounded(database_url: str) -> None:
    """One connection, held by a statement waiting on a lock: the next statement gives up
    after the wait timeout rather than queueing behind it for ever."""
    connections = _connections(database_url, size=1, wait_timeout=0.2)

    async def run() -> None:
        with psycopg.connect(libpq_url(database_url), autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s)", (LOCK,))
            blocked = await _held_lock_statement(connections)
            with pytest.raises(TimeoutError):
                await connections.fetch_one("SELECT 1", ())
            holder.execute("SELECT pg_advisory_unlock(%s)", (LOCK,))
            await blocked
        await connections.close()

    asyncio.run(asyncio.wait_for(run(), 30))  # a failure, not a hang, without the bound


def test_a_statement_is_bounded_and_its_connection_not_kept(database_url: str) -> None:
    connections = _connections(database_url, size=1, statement_timeout=0.2)

    async def run() -> int:
        with psycopg.connect(libpq_url(database_url), autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s)", (LOCK,))
            with pytest.raises(TimeoutError):
                await connections.fetch_one("SELECT pg_advisory_lock(%s)", (LOCK,))
        (answer,) = await connections.fetch_one("SELECT 1", ())
        await connections.close()
        return answer

    assert asyncio.run(asyncio.wait_for(run(), 30)) == 1
    assert connections.opened == 2  # the timed-out statement's connection was closed


def test_a_cancelled_statement_s_connection_is_not_kept(database_url: str) -> None:
    """A statement cancelled half-way (its client gone) leaves its connection in a state
    nobody knows: closed, and the next statement opens another."""
    connections = _connections(database_url, size=1)

    async def run() -> int:
        with psycopg.connect(libpq_url(database_url), autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s)", (LOCK,))
            blocked = await _held_lock_statement(connections)
            blocked.cancel()
            with pytest.raises(asyncio.CancelledError):
                await blocked
        (answer,) = await connections.fetch_one("SELECT 1", ())
        await connections.close()
        return answer

    assert asyncio.run(asyncio.wait_for(run(), 30)) == 1
    assert connections.opened == 2


def test_a_statement_the_server_refuses_keeps_its_connection(database_url: str) -> None:
    """An error of the statement is not a broken connection: raised as it is, nothing
    retried, the connection kept."""
    connections = _connections(database_url, size=1)

    async def run() -> tuple[int, int]:
        (before,) = await connections.fetch_one("SELECT pg_backend_pid()", ())
        with pytest.raises(psycopg.errors.DivisionByZero):
            await connections.fetch_one("SELECT 1 / 0", ())
        # The server's own statement timeout: an OperationalError, on a sound connection.
        await connections.fetch_one("SELECT set_config('statement_timeout', '1', false)", ())
        with pytest.raises(psycopg.errors.QueryCanceled):
            await connections.fetch_one("SELECT pg_sleep(1)", ())
        await connections.fetch_one("SELECT set_config('statement_timeout', '0', false)", ())
        (after,) = await connections.fetch_one("SELECT pg_backend_pid()", ())
        await connections.close()
        return before, after

    before, after = asyncio.run(run())
    assert before == after and connections.opened == 1


def test_closed_connections_leave_no_session_behind(database_url: str) -> None:
    """Closed while a statement is running (the service shutting down): the idle ones close
    at once, the busy one when its statement ends, and no statement is taken after."""
    connections = _connections(database_url, size=2)
    name = connections._connect_options["application_name"]

    async def run() -> None:
        await _open_both(connections)
        with psycopg.connect(libpq_url(database_url), autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s)", (LOCK,))
            blocked = asyncio.create_task(
                connections.fetch_one("SELECT pg_advisory_lock(%s)", (LOCK,))
            )
            while len(connections._idle) == 2:  # it has taken a kept connection
                await asyncio.sleep(0)
            await connections.close()
            holder.execute("SELECT pg_advisory_unlock(%s)", (LOCK,))
            await blocked
        with pytest.raises(RuntimeError):
            await connections.fetch_one("SELECT 1", ())

    asyncio.run(asyncio.wait_for(run(), 30))
    # A backend leaves the activity view once it has read its client's goodbye: asked again
    # until it has, a bounded number of times.
    left = _backends(database_url, name)
    for _ in range(200):
        if not left:
            break
        left = _backends(database_url, name)
    assert left == []
