"""A rep deactivated while a lead is being assigned to them: the lead goes to someone
assignable, never to the rep (docs/ownership.md, "When a rep leaves"). The deactivation holds
the rep's row when the lead arrives; the claim waits on it, and once the deactivation commits
the claim re-reads the row, finds the rep inactive and the ladder gives the lead to the
pool's fallback rep. Real PostgreSQL, the intake API over real HTTP."""

from __future__ import annotations

import threading

import psycopg

from morpheus_pipelines.db.urls import libpq_url
from tests.support.intake import Tenant, client


def test_a_lead_racing_its_reps_deactivation_goes_to_someone_assignable(
    tenant: Tenant, service
) -> None:
    base, _ = service
    ana, fay = tenant.add_rep("ana@acme.test", "101"), tenant.add_rep("fay@acme.test", "106")
    tenant.add_pool("all", {ana: 1}, default=True, fallback=fay)
    http = client(tenant.key)
    assert http.post(f"{base}/v1/leads", json=tenant.lead_body("warm-up")).status_code == 201

    answers: list[dict] = []
    with psycopg.connect(libpq_url(tenant.url)) as deactivation:
        deactivation.execute('UPDATE sales_reps SET "isActive" = false WHERE id = %s', (ana,))
        posting = threading.Thread(
            target=lambda: answers.append(
                http.post(f"{base}/v1/leads", json=tenant.lead_body("racing")).json()
            )
        )
        posting.start()
        with psycopg.connect(libpq_url(tenant.url), autocommit=True) as watcher:
            waiting = None
            while waiting is None and posting.is_alive():
                waiting = watcher.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock' AND query ILIKE '%sales_reps%'"
                ).fetchone()
        assert waiting is not None, "the lead's claim never waited on the rep's row"
        deactivation.commit()
    posting.join()

    [answer] = answers
    assert answer["owner"]["sales_rep_id"] == fay and answer["owner_state"] == "fallback"
    assert tenant.open_leads()[ana] == 1  # only the warm-up lead was charged to Ana
