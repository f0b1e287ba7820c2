"""The per-tenant event lines of routing and scoring: seconds per 100,000 lines.

    uv run python benchmarks/event_lines.py [--rows 100000]

Routing and scoring write one JSON line per tenant for each of their events
(`TenantEventLog`, built by `platform.observability.events.json_lines`), a chunk at a time, on
the thread that reads the next chunk. The frames here have the columns and kinds those events
have: tenant ids, labels from a small vocabulary, counts, scores, flags and columns with
nulls. Prints the best of three per event and in all, and the `machine:` loop. No database.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from _common import best_of_three
from end_to_end import python_yardstick

from morpheus_pipelines.platform.observability.events import json_lines


def event_columns(rows: int, seed: int = 7) -> dict[str, dict[str, object]]:
    """The per-tenant columns of the four chunk events, ``rows`` tenants each."""
    rng = np.random.default_rng(seed)
    tenant_ids = np.array([str(1_000_000 + i) for i in range(rows)], dtype=object)

    def labels(*values: str | None, p: list[float] | None = None) -> np.ndarray:
        return np.array(values, dtype=object)[rng.choice(len(values), size=rows, p=p)]

    companies = labels(None, *(str(700_000 + i) for i in range(50)), p=[0.9] + [0.002] * 50)
    return {
        "tenant_routing_started": {
            "tenant_id": tenant_ids,
            "source_type": labels("active", "signup", p=[0.97, 0.03]),
            "record_index": range(rows),
            "enrichment_status": labels("success", "skipped", "failed", p=[0.8, 0.15, 0.05]),
            "enrichment_error_count": pd.array(rng.integers(0, 3, rows), dtype="Int64"),
            "enrichment_ms": rng.integers(5, 400, rows).astype(float),
        },
        "tenant_routing_completed": {
            "tenant_id": tenant_ids,
            "source_type": labels("active", "signup", p=[0.97, 0.03]),
            "record_index": range(rows),
            "match_result": labels("none", "portal_id", "email_domain", p=[0.9, 0.05, 0.05]),
            "hubspot_company_id": companies,
            "ambiguous_match": rng.random(rows) < 0.01,
            "name_hint_company_id": companies,
            "sales_owned_match": rng.random(rows) < 0.05,
            "tenant_bucket": labels("active", "sales_owned", p=[0.9, 0.1]),
            "status": labels("routed", "rejected", p=[0.99, 0.01]),
            "rejection_reason": labels(None, "tenant_id_missing", p=[0.99, 0.01]),
        },
        "tenant_scoring_started": {
            "tenant_id": tenant_ids,
            "tenant_bucket": labels("active", "sales_owned", p=[0.9, 0.1]),
            "sync_id": labels("20261128T020000Z-0910a0f5"),
            "record_index": range(rows),
        },
        "tenant_scored": {
            "tenant_id": tenant_ids,
            "tenant_bucket": labels("active", "sales_owned", p=[0.9, 0.1]),
            "total_score": np.round(rng.random(rows) * 100, 2),
            "calculated_priority": labels("P1", "P2", "P3", p=[0.1, 0.3, 0.6]),
            "priority": labels("P0", "P1", "P2", "P3", p=[0.02, 0.1, 0.3, 0.58]),
            "priority_reason": labels("score", "hubspot_target_account", p=[0.98, 0.02]),
            # The day's HubSpot snapshot, the same on every line.
            "sync_id": np.full(rows, "20261128T020000Z-0a1b2c3d", dtype=object),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    head = {"ts": "2026-11-28T02:00:00.000+00:00", "level": "INFO", "run_id": "r" * 36}
    total = 0.0
    print(f"{args.rows:,} lines per event; best of three")
    for event, columns in event_columns(args.rows).items():
        seconds = best_of_three(lambda c=columns, e=event: json_lines({**head, "event": e}, c))
        total += seconds
        size = len(json_lines({**head, "event": event}, columns))
        print(f"{event:<28}{seconds:>7.3f} s  {size / args.rows:>5.0f} bytes a line")
    print(f"{'the four events':<28}{total:>7.3f} s")
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")


if __name__ == "__main__":
    main()
