"""Repository of the shared intake request budgets (docs/leads.md, "Request budgets"): one
statement per request, ``INSERT … ON CONFLICT DO UPDATE`` of the key's theoretical arrival
time (:mod:`~morpheus_pipelines.crm.rules.request_budget`). Not among the exports of
``morpheus_pipelines.crm.repositories``; import it from this module.

The row is locked only for the statement itself: it runs on its own, in autocommit, on the
event loop's connections (:class:`~morpheus_pipelines.db.autocommit.AutocommitConnections`),
never inside a request's transaction, so one key's requests queue on the row for
the few microseconds of one update, not for the length of each other's work. The database's
clock decides, so hosts whose clocks disagree still share one budget.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg

from morpheus_pipelines.crm.rules.request_budget import BudgetPolicy
from morpheus_pipelines.db.autocommit import AutocommitConnections

# A refused request leaves the arrival time where it was; ``admitted`` says which it was
# (the old value is not visible to RETURNING before PostgreSQL 18).
_TAKE = """
INSERT INTO intake_request_budgets AS b (bucket, "theoreticalArrival", admitted)
VALUES (:bucket, now() + make_interval(secs => :interval), true)
ON CONFLICT (bucket) DO UPDATE SET
    admitted = greatest(b."theoreticalArrival", now()) + make_interval(secs => :interval)
        <= now() + make_interval(secs => :window),
    "theoreticalArrival" = CASE
        WHEN greatest(b."theoreticalArrival", now()) + make_interval(secs => :interval)
            <= now() + make_interval(secs => :window)
        THEN greatest(b."theoreticalArrival", now()) + make_interval(secs => :interval)
        ELSE b."theoreticalArrival"
    END
RETURNING admitted, extract(epoch FROM b."theoreticalArrival" - now())::float8
"""
# Compiled once and run as the driver's own text (docs/decisions/0022).
_TAKE_SQL = str(text(_TAKE).compile(dialect=PGDialect_psycopg()))


async def take_budget(
    connections: AutocommitConnections, bucket: str, policy: BudgetPolicy
) -> tuple[bool, float]:
    """Count one request against ``bucket``: ``(admitted, seconds the arrival time is ahead
    of now afterwards)``. Neither a session nor a worker thread: the statement is the whole
    unit of work, and each of those cost as much again as the statement (docs/decisions/0049,
    0055)."""
    admitted, ahead = await connections.fetch_one(
        _TAKE_SQL,
        {"bucket": bucket, "interval": policy.interval, "window": float(policy.window)},
    )
    return bool(admitted), float(ahead)
