"""One evaluation of the automation rules at scale: 1,000,000 open leads and 20,000,000
activities on the embedded Postgres, two rules (an email rule and a WhatsApp rule timed
against the window). Prints the seconds of the first evaluation (which fires for every lead
already quiet long enough), of a steady-state evaluation (nothing new is due), and the plan's
index use.

    uv run python benchmarks/lead_automations.py [--leads 1000000] [--activities-per-lead 20]

Rows are generated inside Postgres (``generate_series``), with the activity indexes dropped
during the load and rebuilt after it, then ``VACUUM ANALYZE``: the figures are the
evaluation's, not the load's.
"""

from __future__ import annotations

import argparse
import re
import time
import uuid
from datetime import UTC, datetime, timedelta

import psycopg
from _common import scratch_database

from morpheus_pipelines.crm.repositories.timeline import EVALUATION_STATEMENT, MAX_FIRINGS
from morpheus_pipelines.crm.rules.timeline import NudgeRule
from morpheus_pipelines.crm.steps.lead_automations import add_rule, fire_due_nudges
from morpheus_pipelines.db.session import get_session

CHUNK = 2_000_000
SPREAD_SECONDS = 30 * 24 * 3600  # leads created over the last 30 days

_LEADS = """
INSERT INTO leads (id, "subscriptionId", "idempotencyKey", "requestFingerprint", source,
                   "sourceSubmissionId", "ownerHubspotOwnerId", response, "createdAt")
SELECT md5('lead' || i)::uuid, %(sub)s, 'bench:' || i, '-', 'bench', i::text, '5001',
       '{}'::jsonb, %(now)s - make_interval(secs => i::bigint * %(spread)s / %(n)s)
FROM generate_series(0, %(n)s - 1) AS i
"""

# Activity k of lead i: k = 0 is the form; the rest a mix of WhatsApp, calls and emails, 40 %
# inbound, an outbound call by the AI dialer half the time, spaced up to 3 hours apart.
_ACTIVITIES = """
INSERT INTO activities ("subscriptionId", "externalId", type, direction, "leadId",
                        "occurredAt", metadata)
SELECT %(sub)s, 'b' || g,
       CAST(CASE WHEN k = 0 THEN 'FORM'
                 ELSE (ARRAY['WHATSAPP', 'CALL', 'EMAIL'])[1 + h %% 3] END AS activity_type),
       CASE WHEN k = 0 OR (h / 3) %% 5 < 2 THEN 'inbound' ELSE 'outbound' END,
       md5('lead' || i)::uuid,
       least(%(now)s - interval '1 minute',
             %(now)s - make_interval(secs => i::bigint * %(spread)s / %(n)s)
                     + make_interval(secs => k * (h %% 10800))),
       CASE WHEN k > 0 AND h %% 3 = 1 AND (h / 3) %% 5 >= 2
            THEN jsonb_build_object('hubspot_owner_id',
                                    CASE WHEN h %% 2 = 0 THEN '86817215' ELSE '5001' END)
       END
FROM (SELECT g, g / %(per)s AS i, g %% %(per)s AS k, abs(hashint4(g)) AS h
      FROM generate_series(%(start)s, %(stop)s - 1) AS g) AS s
"""


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg", "postgresql")


def seed(url: str, leads: int, per_lead: int, now: datetime) -> uuid.UUID:
    subscription_id = uuid.uuid4()
    started = time.perf_counter()
    with psycopg.connect(_libpq(url), autocommit=True) as conn:
        conn.execute(
            "INSERT INTO subscriptions (id, name) VALUES (%s, 'Benchmark')", (subscription_id,)
        )
        conn.execute(
            _LEADS, {"sub": subscription_id, "now": now, "spread": SPREAD_SECONDS, "n": leads}
        )
        # Secondary indexes and constraints off during the load, rebuilt after it.
        definitions = conn.execute(
            """
            SELECT c.conname, pg_get_constraintdef(c.oid) FROM pg_constraint c
            WHERE c.conrelid = 'activities'::regclass AND c.contype IN ('u', 'f')
            """
        ).fetchall()
        indexes = conn.execute(
            """
            SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'activities'
              AND indexname NOT IN (SELECT conname FROM pg_constraint
                                    WHERE conrelid = 'activities'::regclass)
            """
        ).fetchall()
        for name, _ in definitions:
            conn.execute(f'ALTER TABLE activities DROP CONSTRAINT "{name}"')
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')
        total = leads * per_lead
        for start in range(0, total, CHUNK):
            conn.execute(
                _ACTIVITIES,
                {
                    "sub": subscription_id,
                    "now": now,
                    "spread": SPREAD_SECONDS,
                    "per": per_lead,
                    "n": leads,
                    "start": start,
                    "stop": min(start + CHUNK, total),
                },
            )
            print(f"  activities {min(start + CHUNK, total):,} / {total:,}", flush=True)
        for name, definition in definitions:
            conn.execute(f'ALTER TABLE activities ADD CONSTRAINT "{name}" {definition}')
        for _, definition in indexes:
            conn.execute(definition)
        conn.execute("VACUUM ANALYZE activities")
        conn.execute("VACUUM ANALYZE leads")
    print(
        f"seeded {leads:,} leads and {total:,} activities in {time.perf_counter() - started:.0f} s"
    )
    with get_session(url) as session:
        add_rule(
            session,
            subscription_id,
            name="quiet_day_email",
            rule=NudgeRule("email", timedelta(hours=24)),
            template_name="still_interested",
        )
        add_rule(
            session,
            subscription_id,
            name="window_closing_whatsapp",
            rule=NudgeRule("whatsapp", timedelta(hours=12), timedelta(hours=2)),
            body="Anything else we can help with?",
        )
    return subscription_id


def plan_indexes(url: str, now: datetime) -> list[str]:
    """The indexes the evaluation's plan reads (EXPLAIN without running it)."""
    with psycopg.connect(_libpq(url)) as conn:
        statement = EVALUATION_STATEMENT.replace(":now", "%(now)s").replace(
            ":max_firings", "%(max_firings)s"
        )
        rows = conn.execute(
            f"EXPLAIN {statement}", {"now": now, "max_firings": MAX_FIRINGS}
        ).fetchall()
        conn.rollback()
    plan = "\n".join(row[0] for row in rows)
    return sorted(set(re.findall(r"using (\w+)", plan, flags=re.IGNORECASE)))


def evaluate(url: str, now: datetime, max_firings: int = MAX_FIRINGS) -> tuple[float, int]:
    started = time.perf_counter()
    evaluation = fire_due_nudges(lambda: get_session(url), now, max_firings=max_firings)
    return time.perf_counter() - started, len(evaluation.firings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leads", type=int, default=1_000_000)
    parser.add_argument("--activities-per-lead", type=int, default=20)
    args = parser.parse_args()
    now = datetime.now(UTC).replace(microsecond=0)
    with scratch_database() as url:
        seed(url, args.leads, args.activities_per_lead, now)
        print(f"plan reads indexes: {', '.join(plan_indexes(url, now))}")
        first_seconds, first_fired = evaluate(url, now)
        drain_seconds, drained = evaluate(url, now, max_firings=10 * args.leads)
        steady_seconds, steady_fired = evaluate(url, now)
        later_seconds, later_fired = evaluate(url, now + timedelta(minutes=1))
    print(
        f"first evaluation (rules just switched on): {first_seconds:.2f} s, "
        f"{first_fired:,} nudges recorded and queued (the burst limit)\n"
        f"the whole backlog in one evaluation, no limit: {drain_seconds:.2f} s, "
        f"{drained:,} nudges\n"
        f"steady state, backlog drained, same minute: {steady_seconds:.2f} s, "
        f"{steady_fired:,} nudges\n"
        f"steady state, the next minute: {later_seconds:.2f} s, {later_fired:,} nudges\n"
        f"goal: one evaluation under 10 s -> "
        f"{'met' if max(first_seconds, steady_seconds, later_seconds) < 10 else 'missed'}"
    )


if __name__ == "__main__":
    main()
