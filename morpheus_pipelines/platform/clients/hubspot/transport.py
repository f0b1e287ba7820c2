"""HubSpot CRM v3 client: the target-account snapshot (docs/pipeline.md) and the ownership
slice's owners mirror and write-back (docs/ownership.md).

Every request has (connect, read) timeouts and goes through a client-side rate budget of
``requests_per_10s``. 429, 5xx, connection errors, read timeouts, bodies cut short and
unparseable bodies are retried at most ``retry_count`` times, waiting for ``Retry-After`` when
present, else for the ``X-HubSpot-RateLimit-Interval-Milliseconds`` window when the remaining
budget is 0, else an exponential back-off with jitter. 400/401/403/404 fail at once. A DAILY
rate-limit 429 is not retried inside a run: HubSpot resets that budget at midnight.

No message this module produces contains the token: it is sent only in the Authorization
header and errors quote HubSpot's ``status``, ``category`` and ``message`` fields.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import requests

from morpheus_pipelines.platform.clients.http import (
    TRANSIENT_TRANSPORT_ERRORS,
    RateBudget,
    RequestStats,
    backoff_seconds,
    error_summary,
    pause_before_retry,
    retry_after_seconds,
)
from morpheus_pipelines.platform.observability.redaction import register_secret

# Only what deterministic matching and audit need.
COMPANY_PROPERTIES = (
    "hs_object_id",
    "portal_id__c",
    "account_id__c",
    "domain",
    "website",
    "hs_additional_domains",
    "name",
    "account_allias__c",
    "hs_lastmodifieddate",
)
MEMBERSHIP_PAGE_SIZE = 250
OWNERS_PAGE_SIZE = 500
BATCH_READ_SIZE = 100
BATCH_UPDATE_SIZE = 100
NOT_RETRIED = frozenset({400, 401, 403, 404})
SEARCH_PAGE_SIZE = 100
# HubSpot's search refuses to page past 10,000 results of one query; the engagement sync
# starts a new query from the last modification time it saw before it gets there.
SEARCH_RESULT_CAP = 10_000


class HubSpotError(RuntimeError):
    """A HubSpot call failed for good; the message is safe to log (no token)."""

    def __init__(self, message: str, *, status: int | None = None, endpoint: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.endpoint = endpoint


@dataclass(frozen=True)
class CompanyBatch:
    """One ``batch/read`` answer: the companies found and the ids HubSpot says are missing."""

    companies: list[dict[str, Any]]
    missing_ids: list[str]
    status: int


@dataclass(frozen=True)
class ContactUpdateBatch:
    """One contacts ``batch/update`` answer: the ids written and those HubSpot does not know."""

    updated_ids: list[str]
    missing_ids: list[str]


@dataclass(frozen=True)
class ListMembershipChange:
    """One ``memberships/add`` answer (HubSpot ignores records already on the list)."""

    added_ids: list[str]
    missing_ids: list[str]


def _error_ids(body: dict[str, Any]) -> list[str]:
    """Record ids named by the ``errors`` of a 207 batch answer."""
    ids: list[str] = []
    for error in body.get("errors") or []:
        ids.extend(str(i) for i in ((error or {}).get("context") or {}).get("ids") or [])
    return ids


def _error_summary(response: requests.Response) -> str:
    return error_summary(response, ("category", "policyName", "message"))


class HubSpotClient:
    """A small, strict client of the endpoints the snapshot needs."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        read_timeout: float = 30.0,
        connect_timeout: float = 5.0,
        retry_count: int = 3,
        requests_per_10s: int = 100,
        logger: logging.Logger | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        max_backoff: float = 30.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = (connect_timeout, read_timeout)
        self.retry_count = retry_count
        self.max_backoff = max_backoff
        self.stats = RequestStats()
        self.budget = RateBudget(requests_per_10s, clock=clock, sleep=sleep)
        self._sleep = sleep
        self._log = logger or logging.getLogger(__name__)
        self._session = requests.Session()
        self._session.headers["Accept"] = "application/json"
        if token:
            self._session.headers["Authorization"] = f"Bearer {token}"
        register_secret(token)

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> HubSpotClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transport ----------------------------------------------------------------------------

    def _wait_before_retry(self, response: requests.Response | None, attempt: int) -> float:
        if response is not None:
            retry_after = retry_after_seconds(response.headers.get("Retry-After"))
            if retry_after is not None:
                return min(retry_after, self.max_backoff * 4)
            remaining = response.headers.get("X-HubSpot-RateLimit-Remaining")
            interval = response.headers.get("X-HubSpot-RateLimit-Interval-Milliseconds")
            if remaining is not None and interval and remaining.strip() == "0":
                try:
                    return min(int(interval) / 1000.0, self.max_backoff * 4)
                except ValueError:
                    pass
        return backoff_seconds(attempt, cap=self.max_backoff)

    def request(self, method: str, path: str, *, endpoint: str, **kwargs: Any) -> tuple[int, Any]:
        """Send one logical request with bounded retries; returns (status, parsed JSON)."""
        url = f"{self.base_url}{path}"
        last_problem = ""
        for attempt in range(self.retry_count + 1):
            if attempt:
                self.stats.retries += 1
            self.budget.acquire()
            response: requests.Response | None = None
            try:
                response = self._session.request(method, url, timeout=self.timeout, **kwargs)
            except TRANSIENT_TRANSPORT_ERRORS as exc:
                self.stats.count(type(exc).__name__)
                last_problem = f"{type(exc).__name__}"
            else:
                self.stats.count(response.status_code)
                status = response.status_code
                if status in NOT_RETRIED:
                    raise HubSpotError(
                        f"HubSpot {endpoint} failed: {_error_summary(response)}",
                        status=status,
                        endpoint=endpoint,
                    )
                if status == 429:
                    self.stats.rate_limited += 1
                    if _is_daily_limit(response):
                        raise HubSpotError(
                            f"HubSpot {endpoint}: daily rate limit reached "
                            f"({_error_summary(response)}); not retried before it resets",
                            status=status,
                            endpoint=endpoint,
                        )
                if status == 429 or status >= 500:
                    last_problem = _error_summary(response)
                elif 200 <= status < 300:
                    try:
                        return status, response.json()
                    except ValueError:
                        last_problem = f"HTTP {status} with an unparseable JSON body"
                else:
                    raise HubSpotError(
                        f"HubSpot {endpoint} failed: {_error_summary(response)}",
                        status=status,
                        endpoint=endpoint,
                    )
            if attempt == self.retry_count:
                break
            pause_before_retry(
                self.budget,
                self._sleep,
                wait=self._wait_before_retry(response, attempt),
                rate_limited=response is not None and response.status_code == 429,
                event="hubspot_retry",
                endpoint=endpoint,
                attempt=attempt + 1,
                problem=last_problem,
            )
        raise HubSpotError(
            f"HubSpot {endpoint} failed after {self.retry_count + 1} attempts: {last_problem}",
            endpoint=endpoint,
        )

    def _iter_pages(
        self, path: str, *, endpoint: str, params: dict[str, Any]
    ) -> Iterator[list[dict[str, Any]]]:
        """Every page of a ``GET`` that pages forward with ``after``; a page without
        ``results`` or a cursor that does not advance is an error, not an endless loop."""
        after: str | None = None
        page = 0
        while True:
            query = dict(params) | ({"after": after} if after else {})
            _, body = self.request("GET", path, endpoint=endpoint, params=query)
            if not isinstance(body, dict) or not isinstance(body.get("results"), list):
                raise HubSpotError(
                    f"{endpoint} page {page + 1} has no 'results' list", endpoint=endpoint
                )
            page += 1
            yield body["results"]
            next_after = ((body.get("paging") or {}).get("next") or {}).get("after")
            if not next_after:
                return
            if next_after == after:
                raise HubSpotError(
                    f"{endpoint} paging did not advance after page {page}", endpoint=endpoint
                )
            after = str(next_after)

    # -- endpoints ----------------------------------------------------------------------------

    def get_list(self, list_id: str) -> dict[str, Any]:
        """``GET /crm/v3/lists/{listId}``; HubSpot wraps the list in ``{"list": …}``."""
        _, body = self.request("GET", f"/crm/v3/lists/{list_id}", endpoint="list")
        listing = body.get("list") if isinstance(body, dict) else None
        if not isinstance(listing, dict):
            raise HubSpotError("HubSpot list response has no 'list' object", endpoint="list")
        return listing

    def iter_membership_pages(
        self, list_id: str, *, limit: int = MEMBERSHIP_PAGE_SIZE
    ) -> Iterator[list[dict[str, Any]]]:
        """Every page of ``GET /crm/v3/lists/{listId}/memberships``, following ``after``."""
        return self._iter_pages(
            f"/crm/v3/lists/{list_id}/memberships", endpoint="memberships", params={"limit": limit}
        )

    def batch_read_companies(
        self, company_ids: Sequence[str], properties: Sequence[str] = COMPANY_PROPERTIES
    ) -> CompanyBatch:
        """``POST /crm/v3/objects/companies/batch/read`` for ≤ 100 ids.

        A 207 carries ``errors``; the ids they name are returned as ``missing_ids``.
        """
        return self._batch_read("companies", "batch_read", company_ids, properties)

    def read_contact_owners(self, contact_ids: Sequence[str]) -> dict[str, str | None]:
        """The current ``hubspot_owner_id`` of ≤ 100 contacts (``None``: no owner); contacts
        HubSpot does not know are left out. The ownership block decides on this, not on a
        local copy that a person may have changed in HubSpot since."""
        batch = self._batch_read(
            "contacts", "contacts_batch_read", contact_ids, ("hubspot_owner_id",)
        )
        return {
            str(c["id"]): ((c.get("properties") or {}).get("hubspot_owner_id") or None)
            for c in batch.companies
            if isinstance(c, dict) and c.get("id") is not None
        }

    def _batch_read(
        self, object_type: str, endpoint: str, ids: Sequence[str], properties: Sequence[str]
    ) -> CompanyBatch:
        if len(ids) > BATCH_READ_SIZE:
            raise ValueError(f"batch/read takes at most {BATCH_READ_SIZE} ids")
        payload = {
            "inputs": [{"id": str(i)} for i in ids],
            "properties": list(properties),
            "propertiesWithHistory": [],
        }
        status, body = self.request(
            "POST", f"/crm/v3/objects/{object_type}/batch/read", endpoint=endpoint, json=payload
        )
        if not isinstance(body, dict) or not isinstance(body.get("results"), list):
            raise HubSpotError("batch/read response has no 'results' list", endpoint=endpoint)
        missing = _error_ids(body)
        found = {str(c.get("id")) for c in body["results"] if isinstance(c, dict)}
        missing.extend(i for i in map(str, ids) if i not in found and i not in missing)
        return CompanyBatch(companies=body["results"], missing_ids=missing, status=status)

    def iter_engagement_pages(
        self,
        object_type: str,
        *,
        modified_since_ms: int,
        properties: Sequence[str],
        limit: int = SEARCH_PAGE_SIZE,
    ) -> Iterator[list[dict[str, Any]]]:
        """Every engagement of ``object_type`` (calls, emails, meetings, notes) modified at or
        after ``modified_since_ms``, oldest modification first, through
        ``POST /crm/v3/objects/{type}/search``. Past HubSpot's 10,000-result cap of one query
        a new query starts from the last modification time seen (its rows come again; the
        caller's upsert absorbs them)."""
        # Paged by key, not by offset: each page starts a new query at the last modification
        # time seen. An engagement edited during the run moves to the end of the order, and
        # with offsets the row behind it would slide into a page already read and be lost;
        # this way rows come again at worst (the caller's upsert absorbs repeats). Only rows
        # sharing one modification time are paged by offset.
        since, after = modified_since_ms, 0
        endpoint = "engagements_search"
        while True:
            payload = {
                "filterGroups": [
                    {
                        "filters": [
                            {
                                "propertyName": "hs_lastmodifieddate",
                                "operator": "GTE",
                                "value": str(since),
                            }
                        ]
                    }
                ],
                "sorts": ["hs_lastmodifieddate"],  # ascending; the spec types a sort as a string
                "properties": [*properties, "hs_lastmodifieddate"],
                "limit": limit,
                "after": str(after),
            }
            _, body = self.request(
                "POST", f"/crm/v3/objects/{object_type}/search", endpoint=endpoint, json=payload
            )
            if not isinstance(body, dict) or not isinstance(body.get("results"), list):
                raise HubSpotError("search response has no 'results' list", endpoint=endpoint)
            results = body["results"]
            if results:
                yield results
            more = ((body.get("paging") or {}).get("next") or {}).get("after")
            if not more or not results:
                return
            last = _modified_ms(results[-1])
            if last > since:
                since, after = last, 0
                continue
            after += limit  # a whole page shared one modification time
            if after + limit > SEARCH_RESULT_CAP:
                raise HubSpotError(
                    f"more than {SEARCH_RESULT_CAP} {object_type} share one modification "
                    "time; the search cannot page through them",
                    endpoint=endpoint,
                )

    def read_engagement_contacts(
        self, object_type: str, engagement_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        """The contacts each of ≤ 100 engagements is associated with
        (``POST /crm/v4/associations/{type}/contacts/batch/read``)."""
        if len(engagement_ids) > BATCH_READ_SIZE:
            raise ValueError(f"associations batch/read takes at most {BATCH_READ_SIZE} ids")
        endpoint = "associations_batch_read"
        _, body = self.request(
            "POST",
            f"/crm/v4/associations/{object_type}/contacts/batch/read",
            endpoint=endpoint,
            json={"inputs": [{"id": str(i)} for i in engagement_ids]},
        )
        if not isinstance(body, dict) or not isinstance(body.get("results"), list):
            raise HubSpotError("associations response has no 'results' list", endpoint=endpoint)
        return {
            str(item["from"]["id"]): [str(to["toObjectId"]) for to in item.get("to") or ()]
            for item in body["results"]
            if isinstance(item, dict) and isinstance(item.get("from"), dict)
        }

    def read_contact_emails(self, contact_ids: Sequence[str]) -> dict[str, str]:
        """The ``email`` of ≤ 100 contacts (contacts without one, or unknown, are left
        out)."""
        batch = self._batch_read("contacts", "contacts_batch_read", contact_ids, ("email",))
        return {
            str(c["id"]): email
            for c in batch.companies
            if isinstance(c, dict) and (email := (c.get("properties") or {}).get("email"))
        }

    def iter_owner_pages(
        self, *, archived: bool, limit: int = OWNERS_PAGE_SIZE
    ) -> Iterator[list[dict[str, Any]]]:
        """Every page of ``GET /crm/v3/owners`` (active or archived owners), following
        ``after`` to the end."""
        return self._iter_pages(
            "/crm/v3/owners",
            endpoint="owners",
            params={"limit": limit, "archived": str(archived).lower()},
        )

    def batch_update_contacts(
        self, updates: Sequence[tuple[str, dict[str, str]]]
    ) -> ContactUpdateBatch:
        """``POST /crm/v3/objects/contacts/batch/update`` for ≤ 100 ``(contact id,
        properties)`` pairs. Setting a property to the value it already has changes nothing,
        so a retried batch is harmless."""
        if len(updates) > BATCH_UPDATE_SIZE:
            raise ValueError(f"batch/update takes at most {BATCH_UPDATE_SIZE} contacts")
        payload = {"inputs": [{"id": str(i), "properties": dict(p)} for i, p in updates]}
        _, body = self.request(
            "POST",
            "/crm/v3/objects/contacts/batch/update",
            endpoint="contacts_batch_update",
            json=payload,
        )
        if not isinstance(body, dict) or not isinstance(body.get("results"), list):
            raise HubSpotError(
                "batch/update response has no 'results' list", endpoint="contacts_batch_update"
            )
        updated = [str(r.get("id")) for r in body["results"] if isinstance(r, dict)]
        return ContactUpdateBatch(updated_ids=updated, missing_ids=_error_ids(body))

    def add_list_members(self, list_id: str, record_ids: Sequence[str]) -> ListMembershipChange:
        """``PUT /crm/v3/lists/{listId}/memberships/add``; records already on the list are
        ignored by HubSpot, so adding twice enrols once."""
        _, body = self.request(
            "PUT",
            f"/crm/v3/lists/{list_id}/memberships/add",
            endpoint="memberships_add",
            json=[str(i) for i in record_ids],
        )
        if not isinstance(body, dict):
            raise HubSpotError(
                "memberships/add response is not an object", endpoint="memberships_add"
            )
        return ListMembershipChange(
            added_ids=[str(i) for i in body.get("recordsIdsAdded") or []],
            missing_ids=[str(i) for i in body.get("recordIdsMissing") or []],
        )


def _modified_ms(engagement: dict[str, Any]) -> int:
    value = str((engagement.get("properties") or {}).get("hs_lastmodifieddate") or "0")
    if value.isdigit():
        return int(value)
    return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)


def _is_daily_limit(response: requests.Response) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and str(body.get("policyName", "")).upper() == "DAILY"
