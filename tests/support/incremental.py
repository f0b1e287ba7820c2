"""Two warehouses living through the same days, one routing and scoring incrementally and
one recomputing everything (tests/tenants/test_incremental_*.py)."""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pandas as pd
from psycopg import sql
from sqlalchemy import text

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.store.day_versions import write_day
from morpheus_pipelines.tenants.rules.matching import SNAPSHOT_COLUMNS, prepare_snapshot
from morpheus_pipelines.tenants.rules.scoring_model import ScoringModel
from morpheus_pipelines.tenants.steps.hubspot_snapshot import SnapshotState
from morpheus_pipelines.tenants.steps.scoring import ScoringTotals, score_partition
from morpheus_pipelines.tenants.steps.scoring_model import load_model
from morpheus_pipelines.tenants.steps.tenant_routing import (
    PartitionRouting,
    SnapshotView,
    route_partition,
    start_routing,
)
from morpheus_pipelines.tenants.steps.tenant_selection import select_partition
from morpheus_pipelines.tenants.store.day_tables import ANSWER_VERSIONS
from tests.support.pipeline import SCHEMA, load_source

FIRST_DAY = date(2026, 11, 20)
TENANT_IDS = [f"t{n}" for n in range(9)]
EMAILS = ["ops@alpha.com.sg", "it@beta.co.jp", "me@gmail.com", "x@shared.com.au", None]
NAMES = ["Alpha Pte Ltd", "Beta KK", "Gamma", None]
SALES = ["rep1@corp.example", "rep2@corp.example"]
FORCEABLE = ["t1", "t2", "t-missing"]
# Company id -> the values it may take (index 0 = absent from the list that day).
COMPANY_DOMAINS = ["alpha.com.sg", "beta.co.jp", "shared.com.au", "gamma.io"]
MODEL = load_model()
# The same model with a different recency slope: a model change re-scores everyone once.
OTHER_MODEL = dataclasses.replace(MODEL, version="test-other", recency_zero_credit_days=30.0)


_runs = itertools.count()


class Warehouse:
    """One warehouse living through the days, routing and scoring one way."""

    def __init__(self, url: str, *, incremental: bool) -> None:
        self.url = url
        self.incremental = incremental
        # Stored scores move their recency on read (docs/scoring.md); off: every tenant is
        # scored in Python every day.
        self.shift_recency = True
        # The model of every day when set; else the day's ``other_model`` picks one.
        self.model: ScoringModel | None = None
        # The run that routed each day, which scores it.
        self._run_ids: dict[str, str] = {}

    def session(self):
        return get_session(self.url)

    def reset(self) -> None:
        with self.session() as session:
            session.execute(
                text(
                    "TRUNCATE apac_tenant_candidate_versions, apac_tenant_candidate_days, "
                    "apac_candidate_selections, "
                    "apac_enriched_tenant_versions, apac_enriched_tenant_days, "
                    "apac_routing_decision_versions, apac_routing_decision_days, "
                    "apac_routing_states, apac_routing_inputs, "
                    "apac_active_tenants, apac_sales_owned_tenants, "
                    "apac_tenant_score_versions, apac_tenant_score_days, "
                    "apac_scoring_models"
                )
            )

    def _select_and_enrich(self, partition_key: str, day: dict[str, Any]) -> str:
        """The day's candidates and answers, written by a new run; its id."""
        load_source(self.url, source_rows(partition_key, day))
        # Every run has its own id, as in Dagster (a re-run too).
        run_id = f"run-{partition_key}-{next(_runs)}"
        select_partition(
            self.session,
            self.session,
            schema=SCHEMA,
            partition_key=partition_key,
            run_id=run_id,
            forced_ids=frozenset(day["forced"]),
            # The default deployment: the source table in the warehouse, read in place.
            source_in_warehouse=True,
        )
        self.enrich(partition_key, day)
        return run_id

    def routing_stops_after_its_plan(self, partition_key: str, day: dict[str, Any]) -> None:
        """A run of ``partition_key`` whose routing stops once its plan phase has begun the
        day (the process killed, the database gone), before it carries or decides anyone."""
        run_id = self._select_and_enrich(partition_key, day)
        start_routing(
            self.session,
            snapshot=snapshot_view(partition_key, day),
            partition_key=partition_key,
            run_id=run_id,
            sales_emails=frozenset(day["sales"]),
            forced_ids=frozenset(day["forced"]),
            incremental=self.incremental,
            events=None,
            log=None,
        )

    def live_through(
        self, partition_key: str, day: dict[str, Any]
    ) -> tuple[PartitionRouting, ScoringTotals]:
        return self.route(partition_key, day), self.score(partition_key, day)

    def route(self, partition_key: str, day: dict[str, Any]) -> PartitionRouting:
        """Select, enrich and route the day, by a new run."""
        run_id = self._select_and_enrich(partition_key, day)
        self._run_ids[partition_key] = run_id
        return route_partition(
            self.session,
            snapshot=snapshot_view(partition_key, day),
            partition_key=partition_key,
            run_id=run_id,
            sales_emails=frozenset(day["sales"]),
            forced_ids=frozenset(day["forced"]),
            # Small batches: the changed tenants span several pages.
            batch_size=3,
            incremental=self.incremental,
        )

    def score(
        self, partition_key: str, day: dict[str, Any], *, run_id: str | None = None
    ) -> ScoringTotals:
        """Score the day, by the run that routed it (or ``run_id``: one run scoring several
        days, as a backfill of a range does)."""
        return score_partition(
            self.session,
            partition_key=partition_key,
            run_id=run_id or self._run_ids[partition_key],
            model=self.model or (OTHER_MODEL if day["other_model"] else MODEL),
            batch_size=3,
            incremental=self.incremental,
            shift_recency=self.shift_recency,
        )

    def enrich(self, partition_key: str, day: dict[str, Any]) -> None:
        """The day's answers for every candidate not forced Sales-owned, written as the
        enrichment asset writes them (only what changed)."""
        answers = {t: d for t, d in zip(TENANT_IDS, day["tenants"], strict=True)}
        with self.session() as session:
            rows = [
                (
                    tenant_id,
                    answer and answer["website"],
                    answer and answer["country"],
                    answer and answer["employees"],
                )
                for tenant_id, answer in (
                    (t, answers.get(t))
                    for t in session.execute(
                        text(
                            "SELECT tenant_id FROM apac_tenant_candidates "
                            "WHERE partition_key = :p AND NOT forced_sales_owned"
                        ),
                        {"p": partition_key},
                    ).scalars()
                )
            ]
            day_rows = sql.SQL(
                "SELECT t, NULL, NULL, w, NULL, 'software', e, c, 'enriched', 0, "
                "{answered_at}::timestamptz, NULL, NULL::integer, 'enrich' "
                "FROM unnest({t}::text[], {w}::text[], {c}::text[], {e}::integer[]) "
                "AS a(t, w, c, e)"
            ).format(
                # When the service answered: asked again, the same answer is a new version.
                answered_at=sql.Literal(day.get("answered_at")),
                t=sql.Literal([r[0] for r in rows]),
                w=sql.Literal([r[1] for r in rows]),
                c=sql.Literal([r[2] for r in rows]),
                e=sql.Literal([r[3] for r in rows]),
            )
            write_day(session, ANSWER_VERSIONS, day=partition_key, rows=day_rows, complete=True)

    def state(self, partition_key: str) -> dict[str, list[tuple]]:
        """Everything a user reads, without the times each run stamps."""
        queries = {
            "decisions": (
                "SELECT * FROM apac_routing_decisions WHERE partition_key = :p",
                ("decided_at", "run_id"),
            ),
            "active": ("SELECT * FROM apac_active_tenants", ("updated_at", "scored_at", "run_id")),
            "sales_owned": (
                "SELECT * FROM apac_sales_owned_tenants",
                ("updated_at", "scored_at", "run_id"),
            ),
            # What each live bucket row was routed from (not which day last wrote it, nor
            # the numbers its versions drew: the two warehouses draw them apart).
            "routing_inputs": (
                "SELECT * FROM apac_routing_inputs",
                ("partition_key", "run_id", "candidate_version", "answer_version"),
            ),
            "scores": (
                "SELECT * FROM apac_tenant_score_snapshots WHERE partition_key = :p",
                ("scored_at", "run_id"),
            ),
        }
        state = {}
        with self.session() as session:
            for name, (query, stamped) in queries.items():
                frame = pd.read_sql(text(query), session.connection(), params={"p": partition_key})
                frame = frame.drop(columns=list(stamped)).astype(object)
                frame = frame.where(frame.notna(), None)
                if "retired_at" in frame:
                    frame["retired_at"] = frame["retired_at"].notna()
                state[name] = sorted(
                    tuple(str(v) for v in row) for row in frame.itertuples(index=False)
                )
        return state


def source_rows(partition_key: str, day: dict[str, Any]) -> list[dict[str, Any]]:
    """The source on ``partition_key``; ``inactive_days`` count back from the end of the first
    day, so a value kept from one day to the next is the same timestamp."""
    end = datetime.fromisoformat(partition_key).replace(tzinfo=UTC) + timedelta(hours=16)
    first_end = datetime.combine(FIRST_DAY, datetime.min.time(), UTC) + timedelta(hours=16)
    rows = []
    for tenant_id, values in zip(TENANT_IDS, day["tenants"], strict=True):
        inactive = values["inactive_days"]
        rows.append(
            {
                "id": tenant_id,
                "custom_id": values["custom_id"],
                "name": values["name"],
                "email": values["email"],
                "sales_owner_email": values["sales_owner_email"],
                "status": "active" if values["selected"] else "closing",
                "region": "APAC",
                "plan": values["plan"],
                "seats": 10,
                "active_users_30d": 4,
                "created_at": end - timedelta(hours=3)
                if values["signed_up_today"]
                else datetime(2025, 1, 1, tzinfo=UTC),
                "last_active_at": (
                    None if inactive is None else first_end - timedelta(days=inactive)
                ),
            }
        )
    return rows


def snapshot_view(partition_key: str, day: dict[str, Any]) -> SnapshotView:
    status = day["snapshot_status"]
    synced = datetime.fromisoformat(partition_key).replace(tzinfo=UTC)
    state = SnapshotState(
        status=status,
        sync_id=None if status == "unavailable" else f"sync-{partition_key}",
        synced_at=None if status == "unavailable" else synced,
        age_seconds=None if status == "unavailable" else 60.0,
    )
    if status == "unavailable":
        return SnapshotView(state, None)
    companies = [
        {
            "hubspot_company_id": str(900 + n),
            "portal_id": c["portal_id"],
            "account_id": c["account_id"],
            "domain_root": c["domain"],
            "website_domain_root": None,
            "additional_domain_roots": None,
            "name": c["name"],
            "account_alias": None,
        }
        for n, c in enumerate(day["companies"])
        if c["listed"]
    ]
    frame = snapshot_frame(companies)
    return SnapshotView(state, prepare_snapshot(frame))


SNAPSHOT_FRAME_COLUMNS = (*SNAPSHOT_COLUMNS, "name", "account_alias")
# A company listing beta.co.jp: a tenant with that email domain becomes a target account.
BETA_LISTED = {
    "listed": True,
    "portal_id": None,
    "account_id": None,
    "domain": "beta.co.jp",
    "name": "Other",
}


def snapshot_frame(companies: list[dict[str, Any]]) -> pd.DataFrame:
    """The snapshot rows ``prepare_snapshot`` reads; a column a company lacks is None."""
    return pd.DataFrame(
        [{c: company.get(c) for c in SNAPSHOT_FRAME_COLUMNS} for company in companies],
        columns=list(SNAPSHOT_FRAME_COLUMNS),
    )


def quiet_tenant(**values: Any) -> dict[str, Any]:
    """A day's values of a selected tenant that changes nothing its score depends on."""
    return {
        "selected": True,
        "custom_id": None,
        "name": None,
        "email": "ops@alpha.com.sg",
        "sales_owner_email": None,
        "plan": "team",
        "inactive_days": 3,
        "signed_up_today": False,
        "website": None,
        "country": "SG",
        "employees": 5,
        **values,
    }


def quiet_day(**values: Any) -> dict[str, Any]:
    """Every tenant quiet, a fresh snapshot with one listed company, nothing else."""
    company = {"listed": False, "portal_id": None, "account_id": None, "domain": None, "name": "X"}
    return {
        "tenants": [quiet_tenant(email=f"ops@t{n}.example.com") for n in range(len(TENANT_IDS))],
        "companies": [dict(company, listed=True, domain="alpha.com.sg"), *[company] * 3],
        "snapshot_status": "fresh",
        "sales": set(),
        "forced": set(),
        "other_model": False,
        **values,
    }
