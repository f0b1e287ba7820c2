"""The benchmark's floor endpoint (crm/api/floor.py): absent unless asked for, and when asked
for one row written and committed per request, over real HTTP against ``morpheus serve``."""

from __future__ import annotations

import psycopg
import requests

from morpheus_pipelines.crm.api.floor import FLOOR_PATH, FLOOR_TABLE_DDL
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.devtools.serve_process import morpheus_serve


def test_the_floor_is_not_mounted_by_default_nor_in_the_document(database_url: str) -> None:
    with morpheus_serve(database_url) as (base, _):
        answer = requests.post(f"{base}{FLOOR_PATH}", data=b"{}", timeout=10)
        document = requests.get(f"{base}/openapi.json", timeout=10).json()
    assert answer.status_code == 404
    assert FLOOR_PATH not in document["paths"]


def test_the_floor_writes_and_commits_one_row_per_request(database_url: str) -> None:
    with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
        conn.execute(FLOOR_TABLE_DDL)
    environ = {"MORPHEUS_INTAKE_BENCHMARK_FLOOR": "1"}
    with morpheus_serve(database_url, environ=environ) as (base, _), requests.Session() as http:
        ids = [
            http.post(f"{base}{FLOOR_PATH}", data=b'{"n": %d}' % n, timeout=10).json()["id"]
            for n in range(3)
        ]
        document = http.get(f"{base}/openapi.json", timeout=10).json()
    assert FLOOR_PATH not in document["paths"]
    with psycopg.connect(libpq_url(database_url)) as conn:
        stored = conn.execute("SELECT id, body FROM benchmark_floor ORDER BY id").fetchall()
    assert stored == [(row_id, {"n": n}) for n, row_id in enumerate(ids)]


def test_the_floor_set_by_mistake_writes_nothing(database_url: str) -> None:
    """No migration makes its table: a server started with the variable answers 500."""
    environ = {"MORPHEUS_INTAKE_BENCHMARK_FLOOR": "1"}
    with morpheus_serve(database_url, environ=environ) as (base, _):
        answer = requests.post(f"{base}{FLOOR_PATH}", data=b"{}", timeout=10)
    assert answer.status_code == 500
    assert answer.json()["error"] == "internal_error"
