"""``POST /benchmark/floor``: the least a durable write through this server costs, for
``benchmarks/lead_intake_wrk.py`` to measure the lead path against in the same run.

The body is read as a lead's is, then one ``INSERT … RETURNING`` and its commit go the way
the usual lead's statement goes: on the event loop, on the same durable autocommit
connections (docs/decisions/0063); no key, no budget, no validation, no routing. Mounted
only when ``MORPHEUS_INTAKE_BENCHMARK_FLOOR=1`` (never by default, and never in the OpenAPI
document), and it writes to
``benchmark_floor``, a scratch table that only the benchmark creates (:data:`FLOOR_TABLE_DDL`):
no migration has it, so a server where the variable was set by mistake answers a 500.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from morpheus_pipelines.crm.api.dependencies import intake_of

FLOOR_PATH = "/benchmark/floor"
FLOOR_TABLE_DDL = (
    "CREATE TABLE IF NOT EXISTS benchmark_floor "
    "(id bigserial PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())"
)
_INSERT = "INSERT INTO benchmark_floor (body) VALUES (CAST(%(body)s AS jsonb)) RETURNING id"


async def floor(request: Request) -> Response:
    intake = intake_of(request)
    body = (await intake.read_bytes(request)).decode()
    (row_id,) = await intake.on_loop(_INSERT, {"body": body})
    return JSONResponse({"id": row_id}, status_code=201)


ROUTES = [Route(FLOOR_PATH, floor, methods=["POST"])]
