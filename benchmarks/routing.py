"""Routing at scale: 1,000,000 source tenants against a 50,000-company snapshot, end to end
through the code of tenant_candidates, enriched_tenants and routed_tenants on the embedded
Postgres (after the snapshot asset). Prints rows per second, peak memory and each asset's
ratio to a bare COPY of its output rows into an unindexed table, measured in the same run.

    uv run python benchmarks/routing.py [--tenants 1000000] [--companies 50000]
"""

import sys

import end_to_end

ROUTING_ASSETS = "hubspot_target_accounts,tenant_candidates,enriched_tenants,routed_tenants"

if __name__ == "__main__":
    if "--assets" not in sys.argv:
        sys.argv += ["--assets", ROUTING_ASSETS]
    end_to_end.main()
