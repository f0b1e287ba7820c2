"""Per-tenant routing and scoring events (docs/observability.md): a JSON line per tenant,
appended a batch at a time to a file per partition, published under ``MORPHEUS_REPORTS_URL``
(``tenant_events/<partition>.jsonl``) when the step ends."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from morpheus_pipelines.platform.observability.events import is_nan, json_lines
from morpheus_pipelines.platform.observability.redaction import redact_bytes
from morpheus_pipelines.platform.outputs import Published, ReportOutputs

if TYPE_CHECKING:  # the routing service writes these events: no import at run time
    from morpheus_pipelines.tenants.steps.tenant_routing import RoutingContext


class TenantEventLog:
    """Per-tenant start and completion events of routing (docs/observability.md), one JSON line
    each, appended to ``path`` (a file per partition, see :meth:`for_partition`).

    Written a batch at a time: a million tenants produce two million lines, which would swamp
    Dagster's event log and cost minutes one ``json.dumps`` at a time. The fields that are the
    same for the whole batch (run, partition, snapshot, ...) are encoded once; the per-tenant
    columns are encoded and joined into lines column by column with Arrow (:func:`json_lines`).
    No email is written: the Sales-owned result is a boolean.
    """

    def __init__(self, path: Path, outputs: ReportOutputs | None = None) -> None:
        self.path = path
        self.outputs = outputs
        path.parent.mkdir(parents=True, exist_ok=True)

    @classmethod
    def for_partition(cls, outputs: ReportOutputs, partition_key: str) -> TenantEventLog:
        """The partition's file, ``tenant_events/<partition>.jsonl`` under
        ``MORPHEUS_REPORTS_URL``: routing and scoring append to it, every run of the
        partition. A remote file is fetched first (another host may have written it) and
        put back whole by :meth:`publish`."""
        return cls(outputs.fetch(f"tenant_events/{partition_key}.jsonl"), outputs)

    def publish(self) -> Published | None:
        """Put the file under ``MORPHEUS_REPORTS_URL``; ``None`` when nothing was written."""
        if self.outputs is None or not self.path.exists():
            return None
        return self.outputs.publish(self.path)

    def _append(self, event: str, level: str, shared: dict[str, Any], per_tenant: dict) -> None:
        if shared.keys() & per_tenant.keys():
            raise ValueError(f"fields both shared and per tenant: {shared.keys() & per_tenant}")
        head = {
            "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "level": level,
            "event": event,
            **{k: None if is_nan(v) else v for k, v in shared.items()},
        }
        lines = json_lines(head, per_tenant)
        if lines:
            with self.path.open("ab") as handle:
                handle.write(redact_bytes(lines))

    def tenants_started(
        self,
        frame: pd.DataFrame,
        routing_context: RoutingContext,
        *,
        offset: int,
        record_count: int | None = None,
    ) -> None:
        self._append(
            "tenant_routing_started",
            "INFO",
            {
                "run_id": routing_context.run_id,
                "partition_key": routing_context.partition_key,
                "sync_id": routing_context.snapshot.sync_id,
                "snapshot_status": routing_context.snapshot.status,
                "snapshot_age_seconds": routing_context.snapshot.age_seconds,
                "record_count": record_count,
            },
            {
                "tenant_id": frame["tenant_id"].to_numpy(),
                "source_type": frame["source_type"].to_numpy(),
                "record_index": range(offset, offset + len(frame)),
                "enrichment_status": frame.get("enrichment_status"),
                "enrichment_error_count": frame.get("enrichment_error_count"),
                # the Domain Intelligence stage of this tenant (its batch's round trip)
                "enrichment_ms": frame.get("enrichment_ms"),
            },
        )

    def tenants_completed(
        self,
        decisions: pd.DataFrame,
        routing_context: RoutingContext,
        *,
        elapsed: float,
        offset: int,
    ) -> None:

        count = len(decisions)
        rejected = decisions["rejection_reason"].notna().to_numpy()
        self._append(
            "tenant_routing_completed",
            "INFO",
            {
                "run_id": routing_context.run_id,
                "partition_key": routing_context.partition_key,
                "sync_id": routing_context.snapshot.sync_id,
                "elapsed_seconds": round(elapsed / max(count, 1), 6),
            },
            {
                "tenant_id": decisions["tenant_id"].to_numpy(),
                "source_type": decisions["source_type"].to_numpy(),
                "record_index": range(offset, offset + count),
                "match_result": decisions["hubspot_match_method"]
                .where(decisions["hubspot_match_method"].notna(), "none")
                .to_numpy(),
                "hubspot_company_id": decisions["hubspot_company_id"].to_numpy(),
                "ambiguous_match": decisions["ambiguous_match"].to_numpy(),
                # a company whose name or alias equals the tenant's: for investigation only
                "name_hint_company_id": decisions.get("name_hint_company_id"),
                "sales_owned_match": decisions["sales_owned_match"].to_numpy(),
                "tenant_bucket": decisions["tenant_bucket"].to_numpy(),
                "status": np.where(rejected, "rejected", "routed"),
                "rejection_reason": decisions["rejection_reason"].to_numpy(),
            },
        )

    def tenants_scoring_started(
        self, chunk: pd.DataFrame, *, run_id: str, partition_key: str, offset: int
    ) -> None:
        """One ``tenant_scoring_started`` line per tenant of a scoring chunk."""
        self._append(
            "tenant_scoring_started",
            "INFO",
            {"run_id": run_id, "partition_key": partition_key},
            {
                "tenant_id": chunk["tenant_id"].to_numpy(),
                "tenant_bucket": chunk["tenant_bucket"].to_numpy(),
                "sync_id": chunk.get("hubspot_sync_id"),
                "record_index": range(offset, offset + len(chunk)),
            },
        )

    def tenants_scored(
        self, scores: pd.DataFrame, rejected: pd.DataFrame, *, run_id: str, partition_key: str
    ) -> None:
        """One ``tenant_scored`` line per scored tenant (with every column of ``scores``) and one
        ``tenant_scoring_rejected`` per rejected routing message (docs/observability.md)."""
        shared = {"run_id": run_id, "partition_key": partition_key}
        self._append(
            "tenant_scored",
            "INFO",
            shared,
            {name: scores[name].to_numpy() for name in scores.columns},
        )
        if len(rejected):
            self._append(
                "tenant_scoring_rejected",
                "WARNING",
                shared,
                {
                    name: rejected[name].to_numpy()
                    for name in ("tenant_id", "tenant_bucket", "rejection_reason")
                },
            )


class PartitionEventLogs:
    """The event files of a run's partitions, opened as the run reaches each partition and
    published when the block ends, a failed run's too (its lines are what its reader most
    needs): ``published`` then holds those with lines, by partition."""

    def __init__(self, outputs: ReportOutputs) -> None:
        self.outputs = outputs
        self.logs: dict[str, TenantEventLog] = {}
        self.published: dict[str, Published] = {}

    def open(self, partition_key: str) -> TenantEventLog:
        log = self.logs[partition_key] = TenantEventLog.for_partition(self.outputs, partition_key)
        return log

    def __enter__(self) -> PartitionEventLogs:
        return self

    def __exit__(self, *exc: object) -> None:
        published = {key: log.publish() for key, log in self.logs.items()}
        self.published = {key: file for key, file in published.items() if file is not None}
