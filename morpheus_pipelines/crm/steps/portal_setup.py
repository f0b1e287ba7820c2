"""Setting up a portal without SQL (docs/ownership.md, "Setting up a portal"): the HubSpot list
behind each re-engagement segment, the routing pools with their members and rules, and the
reps' list and dialer ids. Each function checks its input against the subscription, says what
it refused with :class:`SetupRefused` (naming the command-line option), and reports whether it
``added``, ``updated``, ``removed`` or left the row ``unchanged``, so running it twice is safe.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from morpheus_pipelines.crm.models import (
    ReengagementSegment,
    RoutingPool,
    SalesRep,
    Subscription,
)
from morpheus_pipelines.crm.rules.availability import (
    InvalidAvailability,
    away_until,
    validate_working_hours,
)
from morpheus_pipelines.crm.rules.availability import (
    time_zone as checked_time_zone,
)
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient, HubSpotError

ADDED, UPDATED, UNCHANGED, REMOVED = "added", "updated", "unchanged", "removed"

CONTACTS = "0-1"
# HubSpot's ids of the standard object types a list may hold, by the name a person knows.
OBJECT_TYPES = {CONTACTS: "contacts", "0-2": "companies", "0-3": "deals", "0-5": "tickets"}
# The variable that carries the token, named when HubSpot refuses it.
TOKEN_VARIABLE = "HUBSPOT_PRIVATE_APP_TOKEN"


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


# A setting left as it is (``None`` clears it).
KEEP: Final = _Keep()


class SetupRefused(ValueError):
    """A setting refused; ``option`` names the command-line option it came from."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


def _subscription(store: CrmStore, subscription_id: uuid.UUID) -> None:
    if store.session.get(Subscription, subscription_id) is None:
        raise SetupRefused("--subscription", f"no subscription {subscription_id}")


def _text(option: str, value: str | None) -> str | None:
    if value is None:
        return None
    if not value.strip():
        raise SetupRefused(option, "must not be empty")
    return value.strip()


def assignable_rep(store: CrmStore, subscription_id: uuid.UUID, option: str, rep_id: int) -> None:
    """The rep may be given leads: active, of this subscription, with a HubSpot owner id (what
    intake writes as the lead's owner)."""
    rep = store.session.get(SalesRep, rep_id)
    if rep is None or rep.subscriptionId != subscription_id or not rep.isActive:
        raise SetupRefused(option, f"no active sales rep {rep_id} in this subscription")
    if not rep.hubspotOwnerId:
        raise SetupRefused(
            option, f"sales rep {rep_id} has no HubSpot owner id, so no lead can be given to it"
        )


def _pool(store: CrmStore, subscription_id: uuid.UUID, name: str) -> RoutingPool:
    pool = store.routing_config.pool_named(store.session, subscription_id, name, lock=True)
    if pool is None:
        raise SetupRefused("--pool", f"no pool {name!r} in this subscription")
    return pool


# -- segments -----------------------------------------------------------------------------


def set_segment_list(
    store: CrmStore,
    subscription_id: uuid.UUID,
    segment: str,
    hubspot_list_id: str,
    *,
    hubspot: HubSpotClient | None = None,
) -> str:
    """Point the subscription's ``segment`` at a HubSpot contact list. With ``hubspot`` the
    list is first looked up there (:func:`check_contact_list`) and nothing is stored unless
    it is a contact list; without, its existence and type are the admin's word."""
    _subscription(store, subscription_id)
    if segment not in {s.value for s in ReengagementSegment}:
        known = ", ".join(s.value for s in ReengagementSegment)
        raise SetupRefused("--segment", f"{segment!r} is not a segment; one of {known}")
    if hubspot is not None:
        check_contact_list(hubspot, hubspot_list_id)
    before = store.segment_lists.set_list(store.session, subscription_id, segment, hubspot_list_id)
    if before is None:
        return ADDED
    return UNCHANGED if before == hubspot_list_id else UPDATED


def check_contact_list(hubspot: HubSpotClient, hubspot_list_id: str) -> None:
    """``GET /crm/v3/lists/{listId}``: the list exists and holds contacts, or
    :class:`SetupRefused` (``--list-id``) says what HubSpot answered, in one line and without
    the token."""
    option = "--list-id"
    try:
        listing = hubspot.get_list(hubspot_list_id)
    except HubSpotError as error:
        if error.status == 404:
            raise SetupRefused(option, f"HubSpot has no list {hubspot_list_id}") from None
        if error.status == 401:
            raise SetupRefused(
                option,
                f"HubSpot refused the token ({TOKEN_VARIABLE}, 401), so list "
                f"{hubspot_list_id} could not be checked; nothing stored",
            ) from None
        if error.status == 403:
            raise SetupRefused(
                option,
                f"HubSpot does not let the token ({TOKEN_VARIABLE}, 403) read list "
                f"{hubspot_list_id}: its app needs the lists read scope; nothing stored",
            ) from None
        said = " ".join(str(error).split())
        raise SetupRefused(
            option,
            f"HubSpot did not answer for list {hubspot_list_id} ({said}); nothing stored",
        ) from None
    object_type = str(listing.get("objectTypeId") or "")
    if object_type != CONTACTS:
        holds = OBJECT_TYPES.get(object_type, f"objects of type {object_type or '?'}")
        raise SetupRefused(option, f"list {hubspot_list_id} holds {holds}, not contacts")


def segment_lists(store: CrmStore, subscription_id: uuid.UUID) -> list[tuple[str, str | None]]:
    """Every segment, in ReengagementSegment's order, with its list id or ``None``."""
    _subscription(store, subscription_id)
    lists = store.segment_lists.lists_of(store.session, subscription_id)
    return [(segment.value, lists.get(segment.value)) for segment in ReengagementSegment]


# -- pools --------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberView:
    rep_id: int
    email: str
    weight: int


@dataclass(frozen=True)
class RuleView:
    rule_id: int
    source: str | None
    campaign_id: str | None
    priority: int


@dataclass(frozen=True)
class PoolView:
    name: str
    default: bool
    fallback_rep_id: int | None
    members: list[MemberView]
    rules: list[RuleView]
    first_touch_sla_seconds: int | None = None


def add_pool(
    store: CrmStore,
    subscription_id: uuid.UUID,
    name: str,
    *,
    default: bool | None = None,
    fallback_rep_id: int | None = None,
) -> str:
    """Add the pool, or change the settings given of an existing one (``None``: leave as is).
    One default pool per subscription: another pool's default is refused, not taken over."""
    _subscription(store, subscription_id)
    name = _text("--name", name) or ""
    if fallback_rep_id is not None:
        assignable_rep(store, subscription_id, "--fallback-rep", fallback_rep_id)
    pool = store.routing_config.pool_named(store.session, subscription_id, name, lock=True)
    outcome = UNCHANGED
    if pool is None:
        pool, outcome = store.routing_config.add_pool(store.session, subscription_id, name), ADDED
    if default and not pool.isDefault:
        holder = store.routing_config.default_pool(store.session, subscription_id)
        if holder is not None:
            raise SetupRefused(
                "--default", f"pool {holder.name!r} is already the subscription's default pool"
            )
    if default is not None and pool.isDefault != default:
        pool.isDefault, outcome = default, outcome if outcome == ADDED else UPDATED
    if fallback_rep_id is not None and pool.fallbackSalesRepId != fallback_rep_id:
        pool.fallbackSalesRepId, outcome = fallback_rep_id, outcome if outcome == ADDED else UPDATED
    store.session.flush()
    return outcome


def set_pool(
    store: CrmStore, subscription_id: uuid.UUID, name: str, *, first_touch_sla_seconds: Any = KEEP
) -> str:
    """Set the pool's first-touch SLA in seconds (``None`` clears it: no deadline for its
    new leads; leads already created keep theirs)."""
    _subscription(store, subscription_id)
    pool = _pool(store, subscription_id, name)
    if first_touch_sla_seconds is KEEP:
        raise SetupRefused("--first-touch-sla", "nothing to set: give --first-touch-sla")
    if first_touch_sla_seconds is not None and first_touch_sla_seconds <= 0:
        raise SetupRefused("--first-touch-sla", "must be longer than 0 seconds")
    if pool.firstTouchSlaSeconds == first_touch_sla_seconds:
        return UNCHANGED
    pool.firstTouchSlaSeconds = first_touch_sla_seconds
    store.session.flush()
    return UPDATED


def pools(store: CrmStore, subscription_id: uuid.UUID) -> list[PoolView]:
    """The subscription's pools by name, each with its assignable members and its rules."""
    _subscription(store, subscription_id)
    reps = {
        rep.id: rep
        for rep in store.sales_reps.list_for_subscription(store.session, subscription_id)
    }
    rules = store.routing_config.rules(store.session, subscription_id)
    views = []
    for pool in store.routing_config.pools(store.session, subscription_id):
        members = [
            MemberView(member.salesRepId, reps[member.salesRepId].email, member.weight)
            for member in store.routing_config.members(store.session, pool.id)
            if member.isAssignable
        ]
        views.append(
            PoolView(
                pool.name,
                pool.isDefault,
                pool.fallbackSalesRepId,
                members,
                [
                    RuleView(rule.id, rule.source, rule.campaignId, rule.priority)
                    for rule in rules
                    if rule.poolId == pool.id
                ],
                pool.firstTouchSlaSeconds,
            )
        )
    return views


def remove_pool(store: CrmStore, subscription_id: uuid.UUID, name: str) -> str:
    """Delete a pool nothing refers to. A pool with rules is refused (remove them first, so
    which leads change route is a decision taken rule by rule), and so is a pool leads were
    given from: ``routing_pools`` has no status column, and deleting it would break their
    history."""
    _subscription(store, subscription_id)
    pool = store.routing_config.pool_named(store.session, subscription_id, name, lock=True)
    if pool is None:
        raise SetupRefused("--name", f"no pool {name!r} in this subscription")
    rules = [
        r for r in store.routing_config.rules(store.session, subscription_id) if r.poolId == pool.id
    ]
    if rules:
        ids = ", ".join(str(rule.id) for rule in rules)
        raise SetupRefused("--name", f"pool {name!r} still has rules ({ids}); remove them first")
    leads = store.routing_config.leads_of_pool(store.session, pool.id)
    if leads:
        raise SetupRefused(
            "--name", f"pool {name!r} routed {leads} lead(s); it stays for their history"
        )
    store.routing_config.remove_pool(store.session, pool.id)
    return REMOVED


# -- members ------------------------------------------------------------------------------


def add_member(
    store: CrmStore, subscription_id: uuid.UUID, pool_name: str, rep_id: int, weight: int
) -> str:
    """Put the rep in the pool with ``weight``; a member already there takes the new weight
    (and is assignable again if it had been removed)."""
    _subscription(store, subscription_id)
    if weight <= 0:
        raise SetupRefused("--weight", "must be a positive integer")
    pool = _pool(store, subscription_id, pool_name)
    assignable_rep(store, subscription_id, "--rep", rep_id)
    member = store.routing_config.member(store.session, pool.id, rep_id)
    if member is None:
        store.routing_config.add_member(store.session, pool.id, rep_id, weight)
        return ADDED
    if member.weight == weight and member.isAssignable:
        return UNCHANGED
    member.weight, member.isAssignable = weight, True
    store.session.flush()
    return UPDATED


def remove_member(store: CrmStore, subscription_id: uuid.UUID, pool_name: str, rep_id: int) -> str:
    """Stop the pool giving the rep leads: the member row stays, not assignable (the schema's
    own switch), so re-adding it is an update."""
    _subscription(store, subscription_id)
    pool = _pool(store, subscription_id, pool_name)
    member = store.routing_config.member(store.session, pool.id, rep_id)
    if member is None:
        raise SetupRefused("--rep", f"sales rep {rep_id} is not a member of pool {pool_name!r}")
    if not member.isAssignable:
        return UNCHANGED
    member.isAssignable = False
    store.session.flush()
    return REMOVED


# -- rules --------------------------------------------------------------------------------


def add_rule(
    store: CrmStore,
    subscription_id: uuid.UUID,
    pool_name: str,
    *,
    source: str | None,
    campaign_id: str | None,
    priority: int,
) -> tuple[str, int]:
    """Send leads of ``source`` and/or carrying ``campaign_id`` to the pool, as intake's
    ``choose_pool`` reads them. The same source and campaign again only changes the priority;
    the same source and campaign sent to another pool is refused (intake would pick one of
    the two by priority alone). Returns the outcome and the rule's id."""
    _subscription(store, subscription_id)
    source, campaign_id = _text("--source", source), _text("--campaign-id", campaign_id)
    if source is None and campaign_id is None:
        raise SetupRefused("--source", "give --source, --campaign-id or both")
    pool = _pool(store, subscription_id, pool_name)
    matching = store.routing_config.rules_matching(
        store.session, subscription_id, source, campaign_id
    )
    mine = [rule for rule in matching if rule.poolId == pool.id]
    others = [rule for rule in matching if rule.poolId != pool.id]
    if others:
        other = store.session.get(RoutingPool, others[0].poolId)
        raise SetupRefused(
            "--source" if source is not None else "--campaign-id",
            f"rule {others[0].id} already sends these leads to pool {other.name!r}; "
            "remove it first",
        )
    if not mine:
        rule = store.routing_config.add_rule(
            store.session,
            subscription_id,
            pool.id,
            source=source,
            campaign_id=campaign_id,
            priority=priority,
        )
        return ADDED, rule.id
    rule = mine[0]
    if rule.priority == priority:
        return UNCHANGED, rule.id
    rule.priority = priority
    store.session.flush()
    return UPDATED, rule.id


def remove_rule(
    store: CrmStore,
    subscription_id: uuid.UUID,
    pool_name: str,
    *,
    source: str | None,
    campaign_id: str | None,
) -> int:
    """Delete the pool's rule with exactly this source and campaign id; return its id. A rule
    that routed leads is refused: ``routing_pool_rules`` has no status column and each such
    lead names its rule."""
    _subscription(store, subscription_id)
    source, campaign_id = _text("--source", source), _text("--campaign-id", campaign_id)
    if source is None and campaign_id is None:
        raise SetupRefused("--source", "give --source, --campaign-id or both")
    pool = _pool(store, subscription_id, pool_name)
    option = "--source" if source is not None else "--campaign-id"
    mine = [
        rule
        for rule in store.routing_config.rules_matching(
            store.session, subscription_id, source, campaign_id
        )
        if rule.poolId == pool.id
    ]
    if not mine:
        raise SetupRefused(
            option, f"pool {pool_name!r} has no rule for {_said(source, campaign_id)}"
        )
    rule = mine[0]
    leads = store.routing_config.leads_of_rule(store.session, rule.id)
    if leads:
        raise SetupRefused(
            option, f"rule {rule.id} routed {leads} lead(s); it stays for their history"
        )
    store.routing_config.remove_rule(store.session, rule.id)
    return rule.id


def _said(source: str | None, campaign_id: str | None) -> str:
    parts = [f"source {source!r}"] if source is not None else []
    parts += [f"campaign {campaign_id!r}"] if campaign_id is not None else []
    return " and ".join(parts)


# -- reps ---------------------------------------------------------------------------------


def reps(store: CrmStore, subscription_id: uuid.UUID) -> list[SalesRep]:
    """Every rep of the subscription, active or not, by id."""
    _subscription(store, subscription_id)
    return store.sales_reps.list_for_subscription(store.session, subscription_id)


def set_rep(
    store: CrmStore,
    rep_id: int,
    *,
    active_list_id: str | None = None,
    call_list_id: str | None = None,
    nooks_user_id: str | None = None,
    time_zone: Any = KEEP,
    working_hours: Any = KEEP,
    away_until_text: Any = KEEP,
    max_open_leads: Any = KEEP,
) -> tuple[str, SalesRep]:
    """Set the ids given (``None``: leave as is) on the rep: ``activeListId`` (the HubSpot
    list re-engagement adds its contacts to), ``hubspotCallSegmentId`` and ``nooksUserId``;
    and its availability (:data:`KEEP`: leave as is, ``None``: clear): ``timeZone`` (IANA),
    ``workingHours`` (the shape of :mod:`..rules.availability`), ``awayUntil`` (a date is the
    start of that day in the rep's zone, the one being set if given) and ``maxOpenLeads``.
    The sales-rep mirror keeps them: it writes only what HubSpot owns."""
    availability = (time_zone, working_hours, away_until_text, max_open_leads)
    if (
        active_list_id is None
        and call_list_id is None
        and nooks_user_id is None
        and all(v is KEEP for v in availability)
    ):
        raise SetupRefused(
            "--active-list-id",
            "nothing to set: give --active-list-id, --call-list-id, --nooks-user-id, "
            "--working-hours, --time-zone, --away-until or --max-open-leads",
        )
    rep = store.session.get(SalesRep, rep_id, with_for_update=True)
    if rep is None:
        raise SetupRefused("REP_ID", f"no sales rep {rep_id}")
    changes: list[tuple[str, Any]] = [
        (attribute, value)
        for attribute, value in (
            ("activeListId", active_list_id),
            ("hubspotCallSegmentId", call_list_id),
            ("nooksUserId", nooks_user_id),
        )
        if value is not None
    ]
    try:
        if time_zone is not KEEP:
            zone = None if time_zone is None else checked_time_zone(time_zone)
            changes.append(("timeZone", zone))
    except InvalidAvailability as refused:
        raise SetupRefused("--time-zone", str(refused)) from None
    try:
        if working_hours is not KEEP:
            hours = None if working_hours is None else validate_working_hours(working_hours)
            changes.append(("workingHours", hours))
    except InvalidAvailability as refused:
        raise SetupRefused("--working-hours", str(refused)) from None
    if away_until_text is not KEEP:
        zone = rep.timeZone if time_zone is KEEP else time_zone
        try:
            back = None if away_until_text is None else away_until(away_until_text, zone)
        except InvalidAvailability as refused:
            raise SetupRefused("--away-until", str(refused)) from None
        changes.append(("awayUntil", back))
    if max_open_leads is not KEEP:
        if max_open_leads is not None and max_open_leads < 0:
            raise SetupRefused("--max-open-leads", "must not be negative")
        changes.append(("maxOpenLeads", max_open_leads))
    outcome = UNCHANGED
    for attribute, value in changes:
        if getattr(rep, attribute) != value:
            setattr(rep, attribute, value)
            outcome = UPDATED
    store.session.flush()
    return outcome, rep


def mark_rep_left(store: CrmStore, rep_id: int) -> tuple[str, SalesRep]:
    """The rep has left (though HubSpot may still list them): inactive from now, kept
    inactive by the mirror (``leftAt``), their call list emptied. The caller commits, then
    hands over (:func:`..rep_hand_over.hand_over_rep`). ``unchanged`` when already left."""
    from morpheus_pipelines.crm.steps.rep_hand_over import empty_call_list

    rep = store.session.get(SalesRep, rep_id, with_for_update=True)
    if rep is None:
        raise SetupRefused("REP_ID", f"no sales rep {rep_id}")
    if rep.leftAt is not None and not rep.isActive:
        return UNCHANGED, rep
    was_active = rep.isActive
    rep.leftAt = datetime.now(UTC)
    rep.isActive = False
    if was_active:
        empty_call_list(store, rep.subscriptionId, rep)
    store.session.flush()
    return UPDATED, rep


def mark_rep_back(store: CrmStore, rep_id: int) -> tuple[str, SalesRep]:
    """Undo :func:`mark_rep_left`: active again when HubSpot knows them as an owner (the next
    mirror run has the last word). ``unchanged`` when they had not left."""
    rep = store.session.get(SalesRep, rep_id, with_for_update=True)
    if rep is None:
        raise SetupRefused("REP_ID", f"no sales rep {rep_id}")
    if rep.leftAt is None:
        return UNCHANGED, rep
    rep.leftAt = None
    rep.isActive = bool(rep.hubspotOwnerId)
    store.session.flush()
    return UPDATED, rep
