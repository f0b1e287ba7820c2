"""Running the asset graph in tests: real database, real emulators, ``dg.materialize``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import dagster as dg
from sqlalchemy import text

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.definitions import defs
from morpheus_pipelines.devtools.source import SOURCE_COLUMNS, replace_source_tenants
from morpheus_pipelines.resources.domain_intelligence import DomainIntelligenceResource
from morpheus_pipelines.resources.hubspot import HubSpotResource, TargetListResource
from morpheus_pipelines.resources.notifier import NotifierResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.pipeline import PipelineSettingsResource
from morpheus_pipelines.resources.routing import TenantRoutingResource
from morpheus_pipelines.resources.scoring import ScoringModelResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

SCHEMA = "devops"


def load_source(database_url: str, rows: Iterable[dict[str, Any]]) -> None:
    """Create ``devops.tenants`` in the test database and load ``rows`` into it."""
    replace_source_tenants(
        database_url, SCHEMA, ([row.get(c) for c in SOURCE_COLUMNS] for row in rows)
    )


def tenant(tenant_id: str, **values: Any) -> dict[str, Any]:
    """A source tenant row: APAC, active, created long ago, unless overridden."""
    row: dict[str, Any] = {
        "id": tenant_id,
        "custom_id": None,
        "name": f"Tenant {tenant_id}",
        "email": f"owner@{tenant_id}.example.com",
        "sales_owner_email": None,
        "status": "active",
        "region": "APAC",
        "plan": "team",
        "seats": 10,
        "active_users_30d": 5,
        "created_at": datetime.fromisoformat("2025-01-01T00:00:00+00:00"),
        "last_active_at": datetime.fromisoformat("2026-11-28T00:00:00+00:00"),
    }
    row.update(values)
    return row


@dataclass
class Pipeline:
    database_url: str
    hubspot_url: str
    hubspot_token: str
    domain_intel_url: str = ""
    sales_emails: str = ""
    forced_ids: str = ""
    home: str = "."
    batch_size: int = 100_000
    webhook_url: str = ""
    # Client settings that override the fast-failing test defaults below.
    hubspot_options: dict[str, Any] = field(default_factory=dict)
    domain_intel_options: dict[str, Any] = field(default_factory=dict)

    def resources(self) -> dict[str, Any]:
        return {
            "warehouse": WarehouseResource(database_url=self.database_url, home=self.home),
            "hubspot": HubSpotResource(
                base_url=self.hubspot_url,
                private_app_token=self.hubspot_token,
                **{
                    "request_timeout": 2.0,
                    "connect_timeout": 2.0,
                    "retry_count": 1,
                    "max_backoff_seconds": 0.05,
                    "requests_per_10s": 1000,
                    **self.hubspot_options,
                },
            ),
            "target_list": TargetListResource(),
            "domain_intelligence": DomainIntelligenceResource(
                base_url=self.domain_intel_url,
                **{"max_backoff_seconds": 0.05, "read_timeout": 2.0, **self.domain_intel_options},
            ),
            "scoring": ScoringModelResource(),
            "notifier": NotifierResource(webhook_url=self.webhook_url),
            "routing": TenantRoutingResource(
                apac_sales_emails=self.sales_emails,
                forced_sales_owned_tenant_ids=self.forced_ids,
            ),
            "pipeline": PipelineSettingsResource(chunk_size=self.batch_size),
            "ownership": OwnershipResource(),
        }

    def materialize(
        self,
        keys: Sequence[str],
        partition_key: str | None = None,
        *,
        raise_on_error=True,
        partition_range: tuple[str, str] | None = None,
        run_config: dict[str, Any] | None = None,
    ) -> dg.ExecuteInProcessResult:
        """Materialise ``keys`` (with their checks) for one partition, or for
        ``partition_range`` in a single run (what a single-run backfill launches)."""
        assets = [defs.get_assets_def(key) for key in keys]
        checks = [
            c
            for c in defs.asset_checks or []
            if any(k.asset_key.to_user_string() in keys for k in c.check_keys)
        ]
        tags = None
        if partition_range is not None:
            tags = {
                "dagster/asset_partition_range_start": partition_range[0],
                "dagster/asset_partition_range_end": partition_range[1],
            }
        return dg.materialize(
            [*assets, *checks],
            partition_key=partition_key,
            resources=self.resources(),
            raise_on_error=raise_on_error,
            tags=tags,
            run_config=run_config,
        )

    def snapshot(self) -> dg.ExecuteInProcessResult:
        return self.materialize(["hubspot_target_accounts"])

    def route(self, partition_key: str) -> dg.ExecuteInProcessResult:
        return self.materialize(
            ["tenant_candidates", "enriched_tenants", "routed_tenants"], partition_key
        )

    def score(self, partition_key: str) -> dg.ExecuteInProcessResult:
        return self.materialize(["tenant_scores"], partition_key)

    def spawn(self, keys: Sequence[str], partition_key: str | None = None) -> subprocess.Popen:
        """Run ``keys`` in a child process (so a test can kill it)."""
        fields = {k: v for k, v in asdict(self).items()}
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.run_pipeline",
                json.dumps(fields),
                ",".join(keys),
                *([partition_key] if partition_key else []),
            ],
            cwd=Path(__file__).resolve().parents[2],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def execute(self, statement: str) -> None:
        """Run statements that return no rows (DDL, several statements at once)."""
        with get_session(self.database_url) as session:
            session.connection().exec_driver_sql(statement)

    def query(self, statement: str, **params: Any) -> list[tuple]:
        with get_session(self.database_url) as session:
            return [tuple(r) for r in session.execute(text(statement), params).all()]

    def columns(self, table: str) -> list[str]:
        return [
            r[0]
            for r in self.query(
                "SELECT column_name FROM information_schema.columns WHERE table_name = :t "
                "ORDER BY ordinal_position",
                t=table,
            )
        ]

    def table_hash(self, table: str, *, exclude: Sequence[str] = ()) -> str:
        columns = [c for c in self.columns(table) if c not in exclude]
        # Ordered by the whole row: a key such as tenant_id repeats across partitions.
        row = f"row({', '.join(columns)})::text"
        return self.query(
            f"SELECT md5(coalesce(string_agg({row}, '|' ORDER BY {row}), '')) FROM {table}"
        )[0][0]

    def bucket_of(self, tenant_id: str) -> str | None:
        rows = self.query(
            "SELECT 'active' FROM apac_active_tenants WHERE tenant_id = :t UNION ALL "
            "SELECT 'sales_owned' FROM apac_sales_owned_tenants WHERE tenant_id = :t",
            t=tenant_id,
        )
        assert len(rows) <= 1, f"{tenant_id} is in both buckets"
        return rows[0][0] if rows else None
