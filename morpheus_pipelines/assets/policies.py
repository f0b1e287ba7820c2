"""What Dagster itself runs around the assets (docs/observability.md, "Freshness"): the
freshness policies the daemon evaluates without launching runs, and the retry policy of the
assets that call a service over the network."""

from __future__ import annotations

from datetime import time, timedelta

import dagster as dg

from morpheus_pipelines.platform.partitions import TIMEZONE, daily_partitions, weekly_partitions
from morpheus_pipelines.tenants.rules.snapshot_health import DEFAULT_MAX_AGE_HOURS

SNAPSHOT_KEY = dg.AssetKey("hubspot_target_accounts")

# The snapshot refreshes once a day (07:30 CST with the daily job): WARN an hour before the
# 26 hours the `snapshot_freshness` check and the health sensor allow, FAIL at 26 hours.
# The policy judges when the asset last materialised; the check judges whether that run's
# refresh succeeded (a failed sync still materialises, with `snapshot_refresh_succeeded` red).
SNAPSHOT_FRESHNESS = dg.FreshnessPolicy.time_window(
    fail_window=timedelta(hours=DEFAULT_MAX_AGE_HOURS),
    warn_window=timedelta(hours=DEFAULT_MAX_AGE_HOURS - 1),
)

# A daily partition is a finished CST day, available from 00:00; the daily job runs it at
# 07:30 and Sales read the Daily Summary at 08:30. So every day at 08:30 Asia/Shanghai each
# daily asset must have materialised since 00:00 that day, else it FAILs until it does.
DAILY_DEADLINE = time(8, 30)
DAILY_DEADLINE_CRON = f"{DAILY_DEADLINE.minute} {DAILY_DEADLINE.hour} * * *"
DAILY_FRESHNESS = dg.FreshnessPolicy.cron(
    deadline_cron=DAILY_DEADLINE_CRON,
    lower_bound_delta=timedelta(hours=8, minutes=30),
    timezone=TIMEZONE,
)

# A week is finished at Monday 00:00 CST; the weekly job runs it at 08:30 that Monday. An
# hour later each weekly asset must have materialised since that midnight.
WEEKLY_DEADLINE_CRON = "30 9 * * 1"
WEEKLY_FRESHNESS = dg.FreshnessPolicy.cron(
    deadline_cron=WEEKLY_DEADLINE_CRON,
    lower_bound_delta=timedelta(hours=9, minutes=30),
    timezone=TIMEZONE,
)


def freshness_policy(spec: dg.AssetSpec) -> dg.FreshnessPolicy | None:
    """The snapshot's time window, the daily deadline for every daily-partitioned asset, the
    Monday deadline for every weekly one, and none for the rest (the event-driven drains and
    syncs have their own checks)."""
    if spec.key == SNAPSHOT_KEY:
        return SNAPSHOT_FRESHNESS
    if spec.partitions_def == daily_partitions:
        return DAILY_FRESHNESS
    if spec.partitions_def == weekly_partitions:
        return WEEKLY_FRESHNESS
    return None


# For the assets that call HubSpot, Domain Intelligence, the Graph API or the message
# providers. Their clients already retry 429/5xx/timeouts request by request, and several
# assets record an outage as data and carry on ("unavailable, routing continues", "drain
# stopped", "left pending"): none of that raises. This policy is for what does raise and
# may pass on a second try (a connection pool exhausted, a dropped database connection, a
# deadlock with a concurrent writer). Each of these assets is safe to run again: their
# writes are idempotent or settle row by row, which is what their sensors and schedules rely
# on already. 30 s, 60 s, 120 s, each ±jitter so retried runs do not arrive together.
EXTERNAL_SERVICE_RETRY = dg.RetryPolicy(
    max_retries=3, delay=30, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS
)

# The resources whose use means the asset calls a service over the network.
EXTERNAL_SERVICE_RESOURCES = frozenset(
    {"hubspot", "domain_intelligence", "meta_graph", "message_senders"}
)
