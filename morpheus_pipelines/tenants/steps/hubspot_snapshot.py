"""The HubSpot target-account snapshot: fetch, validate, refresh atomically (docs/pipeline.md).

``sync_target_list`` is the whole Dispatcher part: it never raises for a HubSpot, validation
or database failure. It records the attempt and returns a :class:`SyncOutcome` saying whether
the snapshot is ``fresh``, ``stale`` (an earlier success is still in place) or ``unavailable``
(none ever succeeded), so tenant routing in the same run goes on through an outage (429, 5xx,
timeouts: docs/pipeline.md). An answer that means a setting is wrong (401/403: the token; 404:
the list id) is ``SyncOutcome.configuration_error``, naming the variable, which the asset
raises.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import requests
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import BATCH_READ_SIZE, HubSpotClient, HubSpotError
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.observability.redaction import redact
from morpheus_pipelines.platform.text.normalise import (
    additional_domain_roots,
    normalise_identifier,
    registrable_root,
)
from morpheus_pipelines.platform.versions import normalisation
from morpheus_pipelines.tenants.rules.snapshot_validation import (
    FetchedList,
    RuleResult,
    validate,
)
from morpheus_pipelines.tenants.store.hubspot_target_account import KnownRoots
from morpheus_pipelines.tenants.store.store import TenantStore


@dataclass(frozen=True)
class SnapshotState:
    """What the warehouse says about the snapshot, as routing sees it (docs/pipeline.md)."""

    status: str  # fresh | stale | unavailable
    sync_id: str | None
    synced_at: datetime | None
    age_seconds: float | None
    last_attempt_status: str | None = None
    last_error: str | None = None

    @property
    def age_hours(self) -> float | None:
        return None if self.age_seconds is None else round(self.age_seconds / 3600, 2)


@dataclass
class SyncOutcome:
    succeeded: bool
    state: SnapshotState
    sync_id: str
    list_total: int | None = None
    rows_upserted: int = 0
    rows_deleted: int = 0
    roots: DomainRoots | None = None
    validation: list[RuleResult] = field(default_factory=list)
    error: str | None = None
    configuration_error: str | None = None  # see configuration_problem
    requests: int = 0
    retries: int = 0
    rate_limited: int = 0
    duration_seconds: float = 0.0


def _parse_time(value: Any) -> datetime | None:
    if not value or not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def new_sync_id(now: datetime, run_id: str | None) -> str:
    """``20260714T073000Z-<run>`` (docs/pipeline.md): sortable, and traceable to the run."""
    return f"{now:%Y%m%dT%H%M%SZ}-{(run_id or 'manual')[:8]}"


def configuration_problem(error: HubSpotError, list_id: str) -> str | None:
    """What to fix when HubSpot's answer means the configuration is wrong, not that HubSpot is
    down; ``None`` for an outage (429, 5xx, timeouts), which routing rides out."""
    if error.status in (401, 403):
        return (
            f"HubSpot refused the token (HTTP {error.status} on {error.endpoint}): set "
            "HUBSPOT_PRIVATE_APP_TOKEN to a private app token with the crm.lists.read and "
            "crm.objects.companies.read scopes"
        )
    if error.status == 404 and error.endpoint in ("list", "memberships"):
        return (
            f"HubSpot has no list {list_id} (HTTP 404 on {error.endpoint}): set "
            "HUBSPOT_TARGET_LIST_ID to the target-account list's id"
        )
    return None


def fetch_target_list(
    client: HubSpotClient, list_id: str, *, log: logging.Logger | None = None
) -> FetchedList:
    """Read the list, every membership page and every member company into memory.

    A HubSpot failure stops the fetch and is recorded in ``fetch_error``; the partial result
    is still returned so validation can report what was seen.
    """
    log = log or logging.getLogger(__name__)
    fetched = FetchedList(list_id=list_id)
    try:
        _read_listing(client, fetched)
        _read_memberships(client, fetched, log)
        _read_companies(client, fetched, log)
    except HubSpotError as exc:
        fetched.fetch_error = redact(str(exc))
        fetched.configuration_error = configuration_problem(exc, list_id)
    except requests.RequestException as exc:
        # Retryable transport errors become HubSpotError in the client; anything else the HTTP
        # stack raises (a redirect loop, an invalid URL) is still a failed fetch, not a crash.
        fetched.fetch_error = redact(f"HubSpot request failed: {type(exc).__name__}")
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        # A payload of the wrong shape (missing fields, wrong types) is a failed fetch with a
        # specific reason, never a crash of the run.
        fetched.fetch_error = redact(f"malformed HubSpot response: {type(exc).__name__}: {exc}")[
            :500
        ]
    return fetched


def _read_listing(client: HubSpotClient, fetched: FetchedList) -> None:
    """The list itself: its processing status and the size HubSpot reports."""
    listing = client.get_list(fetched.list_id)
    fetched.processing_status = listing.get("processingStatus")
    size = listing.get("size")
    fetched.list_size = int(size) if isinstance(size, int | str) and str(size).isdigit() else None


def _read_memberships(client: HubSpotClient, fetched: FetchedList, log: logging.Logger) -> None:
    """Every membership page, to the end: the member ids and when each joined."""
    for page in client.iter_membership_pages(fetched.list_id):
        fetched.pages_fetched += 1
        for member in page:
            record_id = normalise_identifier((member or {}).get("recordId"))
            if record_id is None:
                continue
            fetched.member_ids.append(record_id)
            fetched.membership_timestamps[record_id] = member.get("membershipTimestamp")
        log_event(
            "hubspot_sync_page",
            list_id=fetched.list_id,
            page=fetched.pages_fetched,
            members_so_far=len(fetched.member_ids),
        )
        if fetched.pages_fetched % 20 == 0:
            log.info(
                f"memberships: {fetched.pages_fetched} pages, {len(fetched.member_ids):,} members"
            )
    fetched.pagination_complete = True


def _read_companies(client: HubSpotClient, fetched: FetchedList, log: logging.Logger) -> None:
    """Every member company, ``BATCH_READ_SIZE`` at a time; the ids HubSpot did not return
    are recorded as missing."""
    unique_ids = list(dict.fromkeys(fetched.member_ids))
    for start in range(0, len(unique_ids), BATCH_READ_SIZE):
        batch = client.batch_read_companies(unique_ids[start : start + BATCH_READ_SIZE])
        fetched.batches += 1
        if batch.missing_ids:
            fetched.failed_batches += 1
            fetched.missing_company_ids.extend(batch.missing_ids)
        for company in batch.companies:
            company_id = normalise_identifier(company.get("id"))
            if company_id is not None:
                fetched.companies[company_id] = company.get("properties") or {}
        if fetched.batches % 50 == 0:
            log.info(f"companies: {fetched.batches} batches, {len(fetched.companies):,} read")
            log_event(
                "hubspot_sync_batch",
                list_id=fetched.list_id,
                batch=fetched.batches,
                companies_so_far=len(fetched.companies),
            )


@dataclass
class DomainRoots:
    """The registrable roots of a sync's domains, websites and additional domains: the ones
    the stored snapshot holds for the same raw value (``known``), else computed. Computing
    them is most of a sync's own work (docs/decisions/0074), and a list's domains rarely
    change from one day to the next. ``reused`` and ``computed`` count the values of each
    kind."""

    known: KnownRoots | None = None
    reused: int = 0
    computed: int = 0

    def of(self, value: object) -> str | None:
        """``registrable_root(value)``."""
        if value is None:
            return None
        known = self.known.domains_and_websites if self.known is not None else {}
        if isinstance(value, str) and value in known:
            self.reused += 1
            return known[value]
        self.computed += 1
        return registrable_root(value)

    def of_additional(self, value: object) -> list[str] | None:
        """``additional_domain_roots(value)``, None for None."""
        if value is None:
            return None
        known = self.known.additional if self.known is not None else {}
        if isinstance(value, str) and value in known:
            self.reused += 1
            return list(known[value])
        self.computed += 1
        return additional_domain_roots(value)


def snapshot_rows(
    fetched: FetchedList,
    *,
    sync_id: str,
    synced_at: datetime,
    roots: DomainRoots | None = None,
) -> list[tuple]:
    """Rows in ``SNAPSHOT_COLUMNS`` order, one per member, normalised (docs/pipeline.md);
    the roots from ``roots`` (default: each computed)."""
    roots = roots or DomainRoots()
    rows = []
    for company_id in dict.fromkeys(fetched.member_ids):
        props = fetched.companies[company_id]
        domain, website = props.get("domain"), props.get("website")
        additional = props.get("hs_additional_domains")
        rows.append(
            (
                company_id,
                _parse_time(fetched.membership_timestamps.get(company_id)),
                normalise_identifier(props.get("portal_id__c")),
                normalise_identifier(props.get("account_id__c")),
                props.get("name"),
                props.get("account_allias__c"),
                domain,
                website,
                additional,
                roots.of(domain),
                roots.of(website),
                roots.of_additional(additional),
                _parse_time(props.get("hs_lastmodifieddate")),
                sync_id,
                synced_at,
            )
        )
    return rows


def sync_belongs_to_run(sync_id: str, run_ids: Iterable[str]) -> bool:
    """Whether ``sync_id`` (see :func:`new_sync_id`) was made by one of ``run_ids``."""
    return any(sync_id.endswith(f"-{run_id[:8]}") for run_id in run_ids)


def read_snapshot_state(
    session: Session,
    list_id: str,
    *,
    now: datetime,
    run_ids: Iterable[str] | None = None,
) -> SnapshotState:
    """``fresh`` when the snapshot in place comes from a successful sync of this run (with
    ``run_ids``: the run and, for a re-execution, the runs it re-executes) or, without them,
    when the last attempt succeeded; ``stale`` when an older success exists; ``unavailable``
    when none ever did."""
    row = TenantStore(session).sync_state.get_by_id(session, list_id)
    if row is None or row.last_successful_sync_id is None:
        return SnapshotState(
            "unavailable",
            None,
            None,
            None,
            row.last_attempt_status if row else None,
            row.last_error if row else None,
        )
    fresh = row.last_attempt_status == "success"
    if run_ids is not None:
        # Materialising routing alone must not call a days-old snapshot fresh.
        fresh = fresh and sync_belongs_to_run(row.last_successful_sync_id, run_ids)
    status = "fresh" if fresh else "stale"
    age = (now - row.last_successful_sync_at).total_seconds()
    return SnapshotState(
        status,
        row.last_successful_sync_id,
        row.last_successful_sync_at,
        age,
        row.last_attempt_status,
        row.last_error,
    )


def sync_target_list(
    client: HubSpotClient,
    session_factory: SessionFactory,
    *,
    list_id: str,
    run_id: str | None,
    log: logging.Logger | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> SyncOutcome:
    """Fetch, validate and atomically refresh the snapshot; never raises for a failed sync."""
    log = log or logging.getLogger(__name__)
    started = time.perf_counter()
    attempted_at = now()
    sync_id = new_sync_id(attempted_at, run_id)
    log_event("hubspot_sync_start", run_id=run_id, sync_id=sync_id, list_id=list_id)
    fetched = fetch_target_list(client, list_id, log=log)
    outcome = _validated(fetched, sync_id=sync_id, run_id=run_id)
    outcome.configuration_error = fetched.configuration_error
    refusal = _refusal(fetched, outcome.validation)
    if refusal is None:
        _refresh(session_factory, fetched, outcome, attempted_at=attempted_at, log=log)
    else:
        outcome.error = refusal
    if not outcome.succeeded:
        _record_failure(
            session_factory, outcome, list_id=list_id, attempted_at=attempted_at, log=log
        )
    _read_state(session_factory, outcome, list_id=list_id, now=now, log=log)
    _finish(outcome, client, started=started, run_id=run_id, list_id=list_id)
    return outcome


def _validated(fetched: FetchedList, *, sync_id: str, run_id: str | None) -> SyncOutcome:
    """The outcome so far: the fetch validated in memory, nothing written yet."""
    results = validate(fetched)
    failed_rules = [r.rule for r in results if not r.passed]
    log_event(
        "hubspot_sync_validated",
        run_id=run_id,
        sync_id=sync_id,
        list_id=fetched.list_id,
        passed=not failed_rules,
        failed_rules=failed_rules,
        memberships=len(fetched.member_ids),
        companies=len(fetched.companies),
    )
    return SyncOutcome(
        False,
        SnapshotState("unavailable", None, None, None),
        sync_id,
        list_total=fetched.list_size,
        validation=results,
    )


def _refusal(fetched: FetchedList, results: list[RuleResult]) -> str | None:
    """Why the fetched list must not replace the snapshot, or None when it may."""
    failed_rules = [r.rule for r in results if not r.passed]
    if fetched.fetch_error:
        return fetched.fetch_error
    if failed_rules:
        return f"validation failed: {', '.join(failed_rules)}"
    return None


def _refresh(
    session_factory: SessionFactory,
    fetched: FetchedList,
    outcome: SyncOutcome,
    *,
    attempted_at: datetime,
    log: logging.Logger,
) -> None:
    """Replace the snapshot and record the success, in one transaction. The roots of values
    the snapshot already holds are taken from it while it is as the last sync left it."""
    current = normalisation()
    roots = DomainRoots(_known_roots(session_factory, fetched.list_id, current, log))
    rows = snapshot_rows(fetched, sync_id=outcome.sync_id, synced_at=attempted_at, roots=roots)
    try:
        with session_factory() as session:
            store = TenantStore(session)
            outcome.rows_upserted, outcome.rows_deleted = store.accounts.replace_snapshot(
                session, rows, sync_id=outcome.sync_id
            )
            store.sync_state.record_success(
                session,
                list_id=fetched.list_id,
                sync_id=outcome.sync_id,
                synced_at=attempted_at,
                list_total=len(rows),
                snapshot_hash=store.accounts.content_hash(session, normalisation=current),
            )
        outcome.roots = roots
        outcome.succeeded = True
    # The refresh rolled back: record it and carry on (docs/reliability.md).
    except Exception as exc:
        outcome.error = redact(f"database refresh failed: {type(exc).__name__}: {exc}")[:2000]


def _known_roots(
    session_factory: SessionFactory, list_id: str, current: str, log: logging.Logger
) -> KnownRoots | None:
    """The roots the stored snapshot holds, read in a transaction of their own: a value's
    root does not depend on what happens to the table afterwards. Unreadable, they are
    computed, and the sync goes on."""
    try:
        with session_factory() as session:
            return TenantStore(session).accounts.known_roots(
                session, list_id=list_id, normalisation=current
            )
    except Exception as exc:
        log.warning(
            f"could not read the snapshot's domain roots, computing them all: {type(exc).__name__}"
        )
        return None


def _record_failure(
    session_factory: SessionFactory,
    outcome: SyncOutcome,
    *,
    list_id: str,
    attempted_at: datetime,
    log: logging.Logger,
) -> None:
    try:
        with session_factory() as session:
            TenantStore(session).sync_state.record_failure(
                session,
                list_id=list_id,
                attempted_at=attempted_at,
                error=outcome.error or "unknown error",
            )
    except Exception as exc:
        log.warning(f"could not record the failed HubSpot sync attempt: {type(exc).__name__}")


def _read_state(
    session_factory: SessionFactory,
    outcome: SyncOutcome,
    *,
    list_id: str,
    now: Callable[[], datetime],
    log: logging.Logger,
) -> None:
    """The snapshot as routing will see it after this attempt (unavailable if unreadable)."""
    try:
        with session_factory() as session:
            outcome.state = read_snapshot_state(session, list_id, now=now())
    except Exception as exc:
        log.warning(f"could not read the HubSpot sync state: {type(exc).__name__}")


def _finish(
    outcome: SyncOutcome,
    client: HubSpotClient,
    *,
    started: float,
    run_id: str | None,
    list_id: str,
) -> None:
    """What the sync cost, and the event that says how it ended."""
    outcome.requests = client.stats.requests
    outcome.retries = client.stats.retries
    outcome.rate_limited = client.stats.rate_limited
    outcome.duration_seconds = time.perf_counter() - started
    log_event(
        "hubspot_sync_succeeded" if outcome.succeeded else "hubspot_sync_failed",
        level=logging.INFO if outcome.succeeded else logging.WARNING,
        run_id=run_id,
        sync_id=outcome.sync_id,
        list_id=list_id,
        list_total=outcome.list_total,
        rows_upserted=outcome.rows_upserted,
        rows_deleted=outcome.rows_deleted,
        snapshot_status=outcome.state.status,
        snapshot_sync_id=outcome.state.sync_id,
        snapshot_age_seconds=outcome.state.age_seconds,
        error=outcome.error,
        requests=outcome.requests,
        retries=outcome.retries,
        duration_seconds=round(outcome.duration_seconds, 3),
    )
