"""``morpheus demo`` and the data behind ``morpheus dev``.

On a fresh clone with nothing running: start the embedded Postgres and migrate it, generate a
realistic APAC data set, load it as the DevOps source table, start the HubSpot and Domain
Intelligence emulators on free loopback ports, and materialise the whole graph for
yesterday's CST partition through Dagster with the Postgres instance (the runs show in the
UI afterwards). Deterministic: running it again gives the same tables.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from morpheus_pipelines.db.dagster_home import prepare_dagster_environment
from morpheus_pipelines.devtools.demo.dataset import DemoDataset, generate_dataset
from morpheus_pipelines.devtools.demo.hubspot_loop import (
    DEMO_CLIENT_SECRET,
    connect_portal,
    drain_outbox_lines,
    hubspot_lines,
    opt_out_by_webhook,
)
from morpheus_pipelines.devtools.demo.intake import post_demo_leads
from morpheus_pipelines.devtools.demo.ownership import (
    DEMO_SUBSCRIPTION_ID,
    assignments_per_rep,
    members_per_segment_list,
    prepare_ownership_demo,
    with_ownership_portal,
)
from morpheus_pipelines.devtools.emulators import DomainIntelEmulator, HubSpotEmulator
from morpheus_pipelines.devtools.source import SOURCE_COLUMNS, replace_source_tenants
from morpheus_pipelines.platform.observability.events import log_events_to
from morpheus_pipelines.platform.settings import Settings

CST = ZoneInfo("Asia/Shanghai")


def yesterday_cst(now: datetime | None = None) -> date:
    """The last complete CST day: the partition a run made today processes."""
    return (now or datetime.now(CST)).astimezone(CST).date() - timedelta(days=1)


@dataclass
class DemoEnvironment:
    dataset: DemoDataset
    partition_key: str
    env: dict[str, str]
    hubspot: HubSpotEmulator
    domain_intel: DomainIntelEmulator


@contextlib.contextmanager
def demo_environment(
    settings: Settings, *, tenants: int, companies: int, seed: int = 7
) -> Iterator[DemoEnvironment]:
    """Database up and migrated, source loaded, emulators serving; the environment that
    Dagster processes need (already applied to ``os.environ``). With nothing configured the
    embedded Postgres is started here (:func:`~morpheus_pipelines.db.urls.warehouse_url`)."""
    env = prepare_dagster_environment(settings)
    day = yesterday_cst()
    dataset = generate_dataset(tenants=tenants, companies=companies, seed=seed, partition_day=day)
    frame = dataset.tenants[list(SOURCE_COLUMNS)].astype(object)
    frame = frame.where(frame.notna(), None)
    replace_source_tenants(
        settings.source_database_url or env["MORPHEUS_DATABASE_URL"],
        settings.source_schema,
        frame.itertuples(index=False, name=None),
    )
    # The ownership demo's contacts and segment lists are in the portal, like a customer's.
    entered = datetime(day.year, day.month, day.day, 9, tzinfo=CST)
    portal = with_ownership_portal(dataset.hubspot_data(), dataset.owners, entered_at=entered)
    with (
        HubSpotEmulator(portal) as hubspot,
        DomainIntelEmulator(dataset.domain_intel) as domain_intel,
    ):
        env.update(dataset.environment())
        env.update(
            {
                "HUBSPOT_BASE_URL": hubspot.base_url,
                "DOMAIN_INTELLIGENCE_BASE_URL": domain_intel.base_url,
                # The emulators run on loopback without HubSpot's limits to respect here.
                "HUBSPOT_REQUESTS_PER_10S": env.get("HUBSPOT_REQUESTS_PER_10S") or "1000",
            }
        )
        env.update(prepare_ownership_demo(env["MORPHEUS_DATABASE_URL"], dataset.owners))
        os.environ.update(env)
        yield DemoEnvironment(dataset, day.isoformat(), env, hubspot, domain_intel)


def run_demo(settings: Settings, *, tenants: int, companies: int) -> int:
    started = time.perf_counter()
    print(f"Morpheus demo: {tenants:,} tenants, {companies:,} target companies")
    events = log_events_to(settings.home / "logs" / "events.jsonl")
    print(f"  event log  {events}")
    with demo_environment(settings, tenants=tenants, companies=companies) as demo:
        print(f"  database   {_redacted(demo.env['MORPHEUS_DATABASE_URL'])} (migrated)")
        print(f"  HubSpot    emulator on {demo.hubspot.base_url}")
        print(f"  Domain Intelligence emulator on {demo.domain_intel.base_url}")
        print(f"  partition  {demo.partition_key} (yesterday, Asia/Shanghai)")
        ok = _materialise(demo.partition_key)
        summary = _summary(demo.env["MORPHEUS_DATABASE_URL"], demo.partition_key)
        ownership = assignments_per_rep(demo.env["MORPHEUS_DATABASE_URL"])
        segment_lists = members_per_segment_list(demo.env["MORPHEUS_DATABASE_URL"])
        leads = _post_leads_and_close_the_loop(demo)
    _print_ownership(*ownership)
    _print_segment_lists(segment_lists)
    print("\nLead intake (morpheus serve, for a moment): each lead owned when the answer came,")
    print("written to HubSpot by the outbox, and HubSpot's webhooks heard")
    print("\n".join(leads))
    _print_summary(summary, settings.home, demo.partition_key, time.perf_counter() - started)
    return 0 if ok else 1


def _post_leads_and_close_the_loop(demo: DemoEnvironment) -> list[str]:
    """The demo's leads posted to the intake API, written to HubSpot by the outbox, and
    HubSpot's webhook unsubscribing the first one before the automations run."""
    url = demo.env["MORPHEUS_DATABASE_URL"]
    connect_portal(url, DEMO_SUBSCRIPTION_ID)

    def crm_loop(base: str, lead_ids: dict[str, str]) -> tuple[list[str], set[str]]:
        lines = drain_outbox_lines()
        shown, contact_ids = hubspot_lines(url, demo.hubspot, lead_ids)
        lines += shown
        unsubscribed = {"demo-lead-1"} & set(contact_ids)
        for submission in sorted(unsubscribed):
            lines += opt_out_by_webhook(base, contact_ids[submission], submission)
        return lines, unsubscribed

    return post_demo_leads(
        url, DEMO_SUBSCRIPTION_ID, crm_loop=crm_loop, hubspot_client_secret=DEMO_CLIENT_SECRET
    )


def demo_partitions(yesterday: str) -> tuple[list[str], str]:
    """The daily partitions to run, oldest first, and the weekly partition to report: the
    last complete Monday-to-Sunday week (so its report has seven days of data) and
    yesterday."""
    from morpheus_pipelines.platform.partitions import weekly_partitions

    week = weekly_partitions.get_last_partition_key()
    start = date.fromisoformat(week)
    days = {(start + timedelta(days=i)).isoformat() for i in range(7)} | {yesterday}
    return sorted(days), week


def materialise_if_new_instance(partition_key: str) -> bool | None:
    """What ``morpheus dev`` does before starting the UI: on a Dagster instance that has no
    run yet, materialise the demo partitions exactly as ``morpheus demo`` does, so the UI
    opens on a working pipeline. None when the instance already has runs (nothing is done),
    else whether every run succeeded."""
    import dagster as dg

    with dg.DagsterInstance.get() as instance:
        runs = instance.get_runs_count()
    if runs:
        print(f"  Dagster instance has {runs:,} runs: not materialising the demo partitions")
        return None
    print("  Dagster instance has no runs yet: materialising the demo partitions first")
    return _materialise(partition_key)


def _materialise(partition_key: str) -> bool:
    """The daily job for each demo partition, then the weekly report, on the persistent
    Dagster instance (so the runs appear in the UI). Ctrl-C (or SIGTERM) stops it: the run
    in progress is recorded as failed (or completes, when the signal comes after its last
    step) and no further run starts."""
    import dagster as dg

    from morpheus_pipelines.definitions import defs

    # Dagster's console logger prints every event; the demo prints a summary instead (the
    # full event log is in the UI).
    quiet = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
    days, week = demo_partitions(partition_key)
    ok = True
    with dg.DagsterInstance.get() as instance, _interrupts_recorded() as interrupted:
        for day in days:
            daily = defs.resolve_job_def("apac_daily_job").execute_in_process(
                partition_key=day, instance=instance, raise_on_error=False, run_config=quiet
            )
            _stop_if(interrupted, daily)
            print(f"  daily run  {day} {daily.run_id[:8]} {_outcome(daily)}")
            ok = ok and daily.success
        weekly = defs.resolve_job_def("apac_weekly_job").execute_in_process(
            partition_key=week, instance=instance, raise_on_error=False, run_config=quiet
        )
        _stop_if(interrupted, weekly)
        print(
            f"  weekly run {week} {weekly.run_id[:8]} {'succeeded' if weekly.success else 'FAILED'}"
        )
        ok = ok and weekly.success
        if os.environ.get("MORPHEUS_SUBSCRIPTION_ID"):  # the ownership slice (docs/ownership.md)
            for job in ("reengagement_job", "follow_up_escalation_job"):
                result = defs.resolve_job_def(job).execute_in_process(
                    instance=instance, raise_on_error=False, run_config=quiet
                )
                _stop_if(interrupted, result)
                print(f"  {job} {result.run_id[:8]} {_outcome(result)}")
                ok = ok and result.success
    return ok


def _outcome(result) -> str:
    """``succeeded`` or ``FAILED``, then the checks that failed (a segment list not read
    fails a check, not the run)."""
    failed = sorted(e.check_name for e in result.get_asset_check_evaluations() if not e.passed)
    return ("succeeded" if result.success else "FAILED") + (
        f"; failed checks: {', '.join(failed)}" if failed else ""
    )


def _stop_if(interrupted: Callable[[], bool], result) -> None:
    if interrupted():
        print(
            f"  run {result.run_id[:8]} {'finished' if result.success else 'interrupted'}; "
            "stopping on the signal received"
        )
        raise KeyboardInterrupt


@contextlib.contextmanager
def _interrupts_recorded() -> Iterator[Callable[[], bool]]:
    """A function telling whether SIGINT or SIGTERM arrived since entry; until exit, neither
    raises anywhere else than where the caller asks.

    Between runs the signals are only recorded, so that no run is left half-created in the
    instance. During a run ``execute_in_process`` installs its own handlers: it turns the
    signal into an interrupted run, or drops it when it arrives after the last step. The
    signal wakeup fd is written by the interpreter whichever Python handler runs, so it
    records the signal in every case."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    os.set_blocking(write_fd, False)
    handlers = {s: signal.signal(s, lambda *_: None) for s in (signal.SIGINT, signal.SIGTERM)}
    previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    received: set[int] = set()

    def interrupted() -> bool:
        with contextlib.suppress(BlockingIOError):
            while data := os.read(read_fd, 64):
                received.update(data)
        return bool(received & {signal.SIGINT, signal.SIGTERM})

    try:
        yield interrupted
    finally:
        signal.set_wakeup_fd(previous_fd)
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        os.close(read_fd)
        os.close(write_fd)


def _summary(url: str, partition_key: str) -> dict:
    from sqlalchemy import text

    from morpheus_pipelines.db.session import get_session

    with get_session(url) as session:

        def rows(statement: str) -> list:
            return session.execute(text(statement), {"p": partition_key}).all()

        return {
            # Retired rows (no longer selected) are kept but counted apart, as reports do.
            "buckets": rows(
                "SELECT 'active', CASE WHEN retired_at IS NULL THEN priority ELSE 'retired' END, "
                "count(*) FROM apac_active_tenants GROUP BY 2 "
                "UNION ALL SELECT 'sales_owned', "
                "CASE WHEN retired_at IS NULL THEN priority ELSE 'retired' END, count(*) "
                "FROM apac_sales_owned_tenants GROUP BY 2 ORDER BY 1, 2"
            ),
            "rules": rows(
                "SELECT routing_rule, coalesce(hubspot_match_method, ''), count(*) "
                "FROM apac_routing_decisions WHERE partition_key = :p GROUP BY 1, 2 ORDER BY 1, 2"
            ),
            "snapshot": rows(
                "SELECT last_successful_sync_id, last_successful_list_total, last_attempt_status "
                "FROM apac_hubspot_target_sync_state"
            ),
        }


def _print_ownership(per_rep: list[tuple[str, bool, int, int]], outcomes: dict[str, int]) -> None:
    print("\nRe-engagement follow-ups per rep (demo workspace)")
    print(f"  {'rep':<36} {'':<9} {'round-robin':>11} {'all':>5}")
    for email, active, rotated, total in per_rep:
        print(f"  {email:<36} {'active' if active else 'inactive':<9} {rotated:>11} {total:>5}")
    print("  outcomes: " + ", ".join(f"{k} {v}" for k, v in outcomes.items()))


def _print_segment_lists(lists: list[tuple[str, str | None, int]]) -> None:
    print("\nSegment members read from HubSpot (reengagement_segment_members)")
    for segment, list_id, members in lists:
        print(f"  {segment:<18} list {list_id or '-':<8} {members:>4} members read")


def _print_summary(summary: dict, home: Path, partition_key: str, seconds: float) -> None:
    print("\nTenants per bucket and priority")
    for bucket, priority, n in summary["buckets"]:
        print(f"  {bucket:<12} {priority or 'unscored':<9} {n:>8,}")
    print(f"\nRouting decisions for {partition_key}")
    for rule, method, n in summary["rules"]:
        print(f"  {rule:<24} {method:<17} {n:>8,}")
    for sync_id, total, status in summary["snapshot"]:
        print(f"\nHubSpot snapshot: sync {sync_id}, {total} companies, last attempt {status}")
    reports = home / "reports"
    print(f"\nReports: {reports / 'daily' / partition_key}")
    print(f"         {reports / 'weekly'}")
    print("Dagster UI: uv run morpheus dev   (then open http://127.0.0.1:3000)")
    print(f"Done in {seconds:.0f} s.")


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def main() -> int:  # pragma: no cover - `python -m morpheus_pipelines.devtools.demo.runner`
    from morpheus_pipelines.platform.settings import load_settings

    return run_demo(load_settings(), tenants=10_000, companies=500)


if __name__ == "__main__":
    sys.exit(main())
