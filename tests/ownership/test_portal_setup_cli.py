"""``morpheus segment|pool|rep`` against the real warehouse: a portal set up without SQL, each
command safe to run twice, each bad value one line naming its option with exit status 2."""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator

import click
import pytest

from morpheus_pipelines.cli import main
from morpheus_pipelines.crm.models import (
    Lead,
    ReengagementSegmentList,
    RoutingPoolMember,
    RoutingPoolRule,
    SalesRep,
)
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from tests.support.crm_round_robin import add_rep
from tests.support.ownership import TOKEN, UNASSIGNED_LIST


@pytest.fixture
def cli(database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    # No HubSpot unless a test configures it: lists are then stored unchecked.
    monkeypatch.delenv("HUBSPOT_PRIVATE_APP_TOKEN", raising=False)

    def run(*argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


@pytest.fixture
def subscription(cli) -> str:
    status, out, _ = cli("subscription", "create", "--name", "Acme")
    assert status == 0
    return out.strip().splitlines()[-1]


def _rep(url: str, subscription: str, email: str, owner: str | None = "o-1", active=True) -> int:
    with get_session(url) as session:
        return add_rep(
            session, uuid.UUID(subscription), email, hubspot_owner_id=owner, is_active=active
        ).id


def _refused(result: tuple[int, str, str], line: str) -> None:
    status, _, err = result
    assert status == 2
    assert err.strip().splitlines() == [line]


# -- segment ------------------------------------------------------------------------------


def test_segment_set_then_list_and_again(cli, subscription: str) -> None:
    s = subscription
    assert cli("segment", "set", "--subscription", s, "--segment", "no_show", "--list-id", "71")[
        :2
    ] == (0, "segment no_show list=71 added\n")
    again = cli("segment", "set", "--subscription", s, "--segment", "no_show", "--list-id", "71")
    assert again[:2] == (0, "segment no_show list=71 unchanged\n")
    moved = cli("segment", "set", "--subscription", s, "--segment", "no_show", "--list-id", "72")
    assert moved[:2] == (0, "segment no_show list=72 updated\n")
    status, out, _ = cli("segment", "list", "--subscription", s)
    assert status == 0
    assert "segment no_show list=72\n" in out and "segment email_click list=-\n" in out
    assert len(out.splitlines()) == 6


def test_segment_set_refuses_bad_input_in_one_line(cli, subscription: str) -> None:
    s, unknown = subscription, str(uuid.uuid4())
    base = ("segment", "set", "--list-id", "71", "--segment")
    _refused(
        cli(*base, "no_show", "--subscription", unknown),
        f"error: --subscription: no subscription {unknown}",
    )
    _refused(
        cli(*base, "no_show", "--subscription", "nope"),
        "error: --subscription: 'nope' is not a subscription id (a UUID)",
    )
    status, _, err = cli(*base, "bogus", "--subscription", s)
    assert status == 2 and err.startswith("error: --segment: 'bogus' is not a segment; one of ")
    assert len(err.splitlines()) == 1
    for bad in ("0", "-4", "abc", "7.5"):
        line = "error: --list-id: must be a positive integer"
        _refused(
            cli("segment", "set", "--subscription", s, "--segment", "no_show", "--list-id", bad),
            line,
        )
    _refused(
        cli("segment", "list", "--subscription", unknown),
        f"error: --subscription: no subscription {unknown}",
    )


def _stored_lists(url: str, subscription: str) -> dict[str, str]:
    with get_session(url) as session:
        rows = session.query(ReengagementSegmentList).filter_by(
            subscriptionId=uuid.UUID(subscription)
        )
        return {row.segment: row.hubspotListId for row in rows}


def test_segment_set_without_a_token_stores_the_list_unchecked_with_a_warning(
    cli, subscription: str, database_url: str
) -> None:
    status, out, err = cli(
        "segment", "set", "--subscription", subscription, "--segment", "no_show", "--list-id", "71"
    )
    assert (status, out) == (0, "segment no_show list=71 added\n")
    assert err.splitlines() == [
        "warning: list 71 was not checked in HubSpot (HUBSPOT_PRIVATE_APP_TOKEN is not set): "
        "that it exists and holds contacts is up to you"
    ]
    assert _stored_lists(database_url, subscription) == {"no_show": "71"}


@pytest.fixture
def hubspot_configured(
    hubspot: HubSpotEmulator, monkeypatch: pytest.MonkeyPatch
) -> HubSpotEmulator:
    """The command's environment pointed at the emulated portal, with its token."""
    monkeypatch.setenv("HUBSPOT_BASE_URL", hubspot.base_url)
    monkeypatch.setenv("HUBSPOT_PRIVATE_APP_TOKEN", TOKEN)
    monkeypatch.setenv("HUBSPOT_RETRY_COUNT", "1")
    hubspot.set_list("7201", name="Trade-fair companies", object_type_id="0-2")
    hubspot.set_list("7203", name="Open deals", object_type_id="0-3")
    hubspot.set_list("7209", name="Custom objects", object_type_id="2-3209")
    return hubspot


def test_segment_set_checks_the_list_in_hubspot(
    cli, subscription: str, database_url: str, hubspot_configured: HubSpotEmulator
) -> None:
    s = subscription
    base = ("segment", "set", "--subscription", s, "--segment", "no_show", "--list-id")
    assert cli(*base, UNASSIGNED_LIST) == (0, f"segment no_show list={UNASSIGNED_LIST} added\n", "")
    [read] = hubspot_configured.log.entries("list")
    assert (read.path, read.status) == (f"/crm/v3/lists/{UNASSIGNED_LIST}", 200)
    for list_id, line in (
        ("424242", "error: --list-id: HubSpot has no list 424242"),
        ("7201", "error: --list-id: list 7201 holds companies, not contacts"),
        ("7203", "error: --list-id: list 7203 holds deals, not contacts"),
        ("7209", "error: --list-id: list 7209 holds objects of type 2-3209, not contacts"),
    ):
        _refused(cli(*base, list_id), line)
        # the segment keeps the list it had
        assert _stored_lists(database_url, s) == {"no_show": UNASSIGNED_LIST}
    _refused(
        cli("segment", "set", "--subscription", s, "--segment", "lost_deal", "--list-id", "7201"),
        "error: --list-id: list 7201 holds companies, not contacts",
    )
    assert _stored_lists(database_url, s) == {"no_show": UNASSIGNED_LIST}


def test_segment_set_refused_by_hubspot_names_the_token_and_stores_nothing(
    cli,
    subscription: str,
    database_url: str,
    hubspot_configured: HubSpotEmulator,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HUBSPOT_PRIVATE_APP_TOKEN", "pat-na1-revoked")
    status, out, err = cli(
        "segment",
        "set",
        "--subscription",
        subscription,
        "--segment",
        "no_show",
        "--list-id",
        UNASSIGNED_LIST,
    )
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        "error: --list-id: HubSpot refused the token (HUBSPOT_PRIVATE_APP_TOKEN, 401), so list "
        f"{UNASSIGNED_LIST} could not be checked; nothing stored"
    ]
    assert "pat-na1-revoked" not in err
    assert _stored_lists(database_url, subscription) == {}


def test_segment_set_when_hubspot_fails_says_so_and_stores_nothing(
    cli, subscription: str, database_url: str, hubspot_configured: HubSpotEmulator
) -> None:
    hubspot_configured.fail(503, endpoint="list", times=None)
    status, out, err = cli(
        "segment",
        "set",
        "--subscription",
        subscription,
        "--segment",
        "no_show",
        "--list-id",
        UNASSIGNED_LIST,
    )
    assert (status, out) == (2, "")
    # one error line; the client's structured retry event may come before it, wherever the
    # event log goes
    *events, line = err.splitlines()
    assert all(json.loads(event)["event"] == "hubspot_retry" for event in events)
    assert hubspot_configured.log.statuses("list") == [503, 503]  # the one retry allowed
    assert TOKEN not in err
    assert line.startswith(
        f"error: --list-id: HubSpot did not answer for list {UNASSIGNED_LIST} (HubSpot list "
        "failed after 2 attempts: HTTP 503"
    ) and line.endswith("; nothing stored")
    assert _stored_lists(database_url, subscription) == {}


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port bound but not listening: a connection to it is refused."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


def test_segment_set_when_hubspot_is_unreachable_says_so_and_stores_nothing(
    cli, subscription: str, database_url: str, closed_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUBSPOT_BASE_URL", f"http://127.0.0.1:{closed_port}")
    monkeypatch.setenv("HUBSPOT_PRIVATE_APP_TOKEN", TOKEN)
    monkeypatch.setenv("HUBSPOT_RETRY_COUNT", "0")
    status, out, err = cli(
        "segment", "set", "--subscription", subscription, "--segment", "no_show", "--list-id", "71"
    )
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        "error: --list-id: HubSpot did not answer for list 71 (HubSpot list failed after 1 "
        "attempts: ConnectionError); nothing stored"
    ]
    assert _stored_lists(database_url, subscription) == {}


# -- pool ---------------------------------------------------------------------------------


def test_pool_add_member_rule_list_and_reruns(cli, subscription: str, database_url: str) -> None:
    s = subscription
    ana = _rep(database_url, s, "ana@acme.test", "o-ana")
    bo = _rep(database_url, s, "bo@acme.test", "o-bo")
    added = cli("pool", "add", "--subscription", s, "--name", "inbound", "--default")
    assert added[:2] == (0, "pool inbound default=yes fallback-rep=- first-touch-sla=- added\n")
    again = cli("pool", "add", "--subscription", s, "--name", "inbound", "--default")
    assert again[:2] == (0, "pool inbound default=yes fallback-rep=- first-touch-sla=- unchanged\n")
    fallback = cli(
        "pool", "add", "--subscription", s, "--name", "inbound", "--fallback-rep", str(bo)
    )
    assert fallback[:2] == (
        0,
        f"pool inbound default=yes fallback-rep={bo} first-touch-sla=- updated\n",
    )

    member = ("pool", "member", "add", "--subscription", s, "--pool", "inbound")
    assert cli(*member, "--rep", str(ana), "--weight", "3")[:2] == (
        0,
        f"member inbound rep={ana} weight=3 added\n",
    )
    assert cli(*member, "--rep", str(ana), "--weight", "3")[1].endswith(" unchanged\n")
    assert cli(*member, "--rep", str(ana), "--weight", "2")[1].endswith(" updated\n")
    assert cli(*member, "--rep", str(bo))[1] == f"member inbound rep={bo} weight=1 added\n"

    rule = ("pool", "rule", "add", "--subscription", s, "--pool", "inbound")
    status, out, _ = cli(*rule, "--source", "web-form", "--campaign-id", "c-9")
    assert status == 0 and out.endswith("source=web-form campaign-id=c-9 priority=0 added\n")
    rule_id = out.split("id=")[1].split()[0]
    assert cli(*rule, "--source", "web-form", "--campaign-id", "c-9")[1].endswith(" unchanged\n")
    assert cli(*rule, "--source", "web-form", "--campaign-id", "c-9", "--priority", "5")[
        1
    ].endswith("priority=5 updated\n")

    status, out, _ = cli("pool", "list", "--subscription", s)
    assert status == 0
    assert out.splitlines() == [
        f"pool inbound default=yes fallback-rep={bo} first-touch-sla=-",
        f"member inbound rep={ana} weight=2 email=ana@acme.test",
        f"member inbound rep={bo} weight=1 email=bo@acme.test",
        f"rule inbound id={rule_id} source=web-form campaign-id=c-9 priority=5",
    ]

    # removing: the member row stays, not assignable; the rule goes; then the pool goes
    removed = cli(
        "pool", "member", "remove", "--subscription", s, "--pool", "inbound", "--rep", str(bo)
    )
    assert removed[:2] == (0, f"member inbound rep={bo} removed\n")
    assert cli(
        "pool", "member", "remove", "--subscription", s, "--pool", "inbound", "--rep", str(bo)
    )[1].endswith(" unchanged\n")
    with get_session(database_url) as session:
        row = session.query(RoutingPoolMember).filter_by(salesRepId=bo).one()
        assert row.isAssignable is False
    assert f"member inbound rep={bo} " not in cli("pool", "list", "--subscription", s)[1]
    _refused(
        cli("pool", "remove", "--subscription", s, "--name", "inbound"),
        f"error: --name: pool 'inbound' still has rules ({rule_id}); remove them first",
    )
    assert cli(
        "pool",
        "rule",
        "remove",
        "--subscription",
        s,
        "--pool",
        "inbound",
        "--source",
        "web-form",
        "--campaign-id",
        "c-9",
    )[:2] == (0, f"rule inbound id={rule_id} removed\n")
    assert cli("pool", "remove", "--subscription", s, "--name", "inbound")[:2] == (
        0,
        "pool inbound removed\n",
    )
    assert cli("pool", "list", "--subscription", s)[1] == ""


def test_pool_commands_refuse_bad_input_in_one_line(
    cli, subscription: str, database_url: str
) -> None:
    s, unknown = subscription, str(uuid.uuid4())
    ana = _rep(database_url, s, "ana@acme.test", "o-ana")
    gone = _rep(database_url, s, "gone@acme.test", "o-gone", active=False)
    ownerless = _rep(database_url, s, "new@acme.test", None)
    other = _rep(database_url, str(_other_subscription(cli)), "x@other.test", "o-x")
    assert cli("pool", "add", "--subscription", s, "--name", "inbound", "--default")[0] == 0
    assert cli("pool", "add", "--subscription", s, "--name", "events")[0] == 0

    _refused(
        cli("pool", "add", "--subscription", unknown, "--name", "x"),
        f"error: --subscription: no subscription {unknown}",
    )
    _refused(
        cli("pool", "add", "--subscription", s, "--name", "events", "--default"),
        "error: --default: pool 'inbound' is already the subscription's default pool",
    )
    _refused(
        cli("pool", "add", "--subscription", s, "--name", "  "), "error: --name: must not be empty"
    )
    _refused(
        cli("pool", "add", "--subscription", s, "--name", "x", "--fallback-rep", "99999"),
        "error: --fallback-rep: no active sales rep 99999 in this subscription",
    )

    member = ("pool", "member", "add", "--subscription", s)
    _refused(
        cli(*member, "--pool", "nope", "--rep", str(ana)),
        "error: --pool: no pool 'nope' in this subscription",
    )
    for bad in ("0", "-1", "two"):
        _refused(
            cli(*member, "--pool", "events", "--rep", str(ana), "--weight", bad),
            "error: --weight: must be a positive integer",
        )
    for rep_id in (gone, other, 424242):
        _refused(
            cli(*member, "--pool", "events", "--rep", str(rep_id)),
            f"error: --rep: no active sales rep {rep_id} in this subscription",
        )
    _refused(
        cli(*member, "--pool", "events", "--rep", str(ownerless)),
        f"error: --rep: sales rep {ownerless} has no HubSpot owner id, so no lead can be "
        "given to it",
    )
    _refused(
        cli("pool", "member", "remove", "--subscription", s, "--pool", "events", "--rep", str(ana)),
        f"error: --rep: sales rep {ana} is not a member of pool 'events'",
    )

    rule = ("pool", "rule", "add", "--subscription", s)
    _refused(
        cli(*rule, "--pool", "events"), "error: --source: give --source, --campaign-id or both"
    )
    _refused(
        cli(*rule, "--pool", "events", "--source", "fair", "--priority", "high"),
        "error: --priority: must be a whole number",
    )
    assert cli(*rule, "--pool", "events", "--campaign-id", "c-1")[0] == 0
    out = cli(*rule, "--pool", "events", "--campaign-id", "c-1")[1]
    rule_id = out.split("id=")[1].split()[0]
    _refused(
        cli(*rule, "--pool", "inbound", "--campaign-id", "c-1"),
        f"error: --campaign-id: rule {rule_id} already sends these leads to pool 'events'; "
        "remove it first",
    )
    _refused(
        cli("pool", "rule", "remove", "--subscription", s, "--pool", "events", "--source", "fair"),
        "error: --source: pool 'events' has no rule for source 'fair'",
    )
    _refused(
        cli("pool", "remove", "--subscription", s, "--name", "nope"),
        "error: --name: no pool 'nope' in this subscription",
    )


def test_a_pool_and_rule_leads_were_routed_by_stay(
    cli, subscription: str, database_url: str
) -> None:
    s = subscription
    ana = _rep(database_url, s, "ana@acme.test", "o-ana")
    assert cli("pool", "add", "--subscription", s, "--name", "events")[0] == 0
    assert (
        cli("pool", "member", "add", "--subscription", s, "--pool", "events", "--rep", str(ana))[0]
        == 0
    )
    out = cli("pool", "rule", "add", "--subscription", s, "--pool", "events", "--source", "fair")[1]
    rule_id = int(out.split("id=")[1].split()[0])
    with get_session(database_url) as session:
        pool_id = session.get(RoutingPoolRule, rule_id).poolId
        session.add(
            Lead(
                subscriptionId=uuid.UUID(s),
                idempotencyKey="k",
                requestFingerprint="f",
                source="fair",
                sourceSubmissionId="1",
                poolId=pool_id,
                poolRuleId=rule_id,
                ownerSalesRepId=ana,
                ownerHubspotOwnerId="o-ana",
                response={},
            )
        )
    _refused(
        cli("pool", "rule", "remove", "--subscription", s, "--pool", "events", "--source", "fair"),
        f"error: --source: rule {rule_id} routed 1 lead(s); it stays for their history",
    )
    assert (
        cli("pool", "rule", "remove", "--subscription", s, "--pool", "events", "--source", "fair")[
            0
        ]
        == 2
    )
    with get_session(database_url) as session:
        session.query(Lead).filter_by(poolRuleId=rule_id).update({"poolRuleId": None})
        session.query(RoutingPoolRule).filter_by(id=rule_id).delete()
    _refused(
        cli("pool", "remove", "--subscription", s, "--name", "events"),
        "error: --name: pool 'events' routed 1 lead(s); it stays for their history",
    )


def _other_subscription(cli) -> uuid.UUID:
    _status, out, _ = cli("subscription", "create", "--name", "Other")
    return uuid.UUID(out.strip().splitlines()[-1])


# -- rep ----------------------------------------------------------------------------------


def test_rep_list_and_set(cli, subscription: str, database_url: str) -> None:
    s = subscription
    ana = _rep(database_url, s, "ana@acme.test", "o-ana")
    status, out, _ = cli("rep", "list", "--subscription", s)
    assert status == 0
    assert out == (
        f"rep {ana} email=ana@acme.test active=yes hubspot-owner-id=o-ana active-list-id=- "
        "call-list-id=- nooks-user-id=- time-zone=- working-hours=- away-until=- "
        "max-open-leads=- open-leads=0\n"
    )
    status, out, _ = cli(
        "rep",
        "set",
        str(ana),
        "--active-list-id",
        "710",
        "--call-list-id",
        "711",
        "--nooks-user-id",
        "nk-1",
    )
    assert status == 0 and out.endswith(
        "active-list-id=710 call-list-id=711 nooks-user-id=nk-1 time-zone=- working-hours=- "
        "away-until=- max-open-leads=- open-leads=0 updated\n"
    )
    assert cli("rep", "set", str(ana), "--active-list-id", "710")[1].endswith(" unchanged\n")
    with get_session(database_url) as session:
        rep = session.get(SalesRep, ana)
        assert (rep.activeListId, rep.hubspotCallSegmentId, rep.nooksUserId) == (
            "710",
            "711",
            "nk-1",
        )


def test_rep_commands_refuse_bad_input_in_one_line(cli, subscription: str) -> None:
    unknown = str(uuid.uuid4())
    _refused(
        cli("rep", "list", "--subscription", unknown),
        f"error: --subscription: no subscription {unknown}",
    )
    _refused(
        cli("rep", "set", "424242", "--nooks-user-id", "x"), "error: REP_ID: no sales rep 424242"
    )
    _refused(
        cli("rep", "set", "1"),
        "error: --active-list-id: nothing to set: give --active-list-id, --call-list-id, "
        "--nooks-user-id, --working-hours, --time-zone, --away-until or --max-open-leads",
    )
    _refused(
        cli("rep", "set", "1", "--call-list-id", "zero"),
        "error: --call-list-id: must be a positive integer",
    )
    _refused(
        cli("rep", "set", "1", "--nooks-user-id", " "),
        "error: --nooks-user-id: must be one word, not empty",
    )


@pytest.mark.parametrize(
    "command",
    [
        ("segment", "set"),
        ("segment", "list"),
        ("pool", "add"),
        ("pool", "list"),
        ("pool", "remove"),
        ("pool", "member", "add"),
        ("pool", "member", "remove"),
        ("pool", "rule", "add"),
        ("pool", "rule", "remove"),
        ("rep", "list"),
        ("rep", "set"),
    ],
)
def test_every_option_has_help(command: tuple[str, ...], capsys: pytest.CaptureFixture) -> None:
    from morpheus_pipelines.cli import morpheus

    assert main([*command, "--help"]) == 0
    capsys.readouterr()
    leaf = morpheus
    for name in command:
        leaf = leaf.commands[name]
    for param in leaf.params:
        if isinstance(param, click.Option) and param.name != "help":
            assert param.help, f"{' '.join(command)} {param.name} has no help"


# -- availability and the first-touch SLA ------------------------------------------------------


def test_rep_availability_is_set_shown_and_cleared(
    cli, subscription: str, database_url: str
) -> None:
    ana = _rep(database_url, subscription, "ana@acme.test", "o-ana")
    status, out, _ = cli(
        "rep",
        "set",
        str(ana),
        "--working-hours",
        "mon-fri 09:00-18:00, sat 10:00-14:00",
        "--time-zone",
        "Asia/Singapore",
        "--away-until",
        "2026-12-24",
        "--max-open-leads",
        "30",
    )
    assert status == 0
    assert out.endswith(
        "time-zone=Asia/Singapore working-hours=mon-fri:09:00-18:00,sat:10:00-14:00 "
        "away-until=2026-12-23T16:00:00+00:00 max-open-leads=30 open-leads=0 updated\n"
    )  # the date is the start of that day in the rep's zone
    with get_session(database_url) as session:
        rep = session.get(SalesRep, ana)
        assert rep.workingHours["fri"] == [["09:00", "18:00"]] and "sun" not in rep.workingHours
    again = cli("rep", "set", str(ana), "--max-open-leads", "30", "--time-zone", "Asia/Singapore")
    assert again[1].endswith(" unchanged\n")
    status, out, _ = cli(
        "rep", "set", str(ana), "--working-hours", "", "--away-until", "", "--max-open-leads", ""
    )
    assert status == 0 and out.endswith(
        "time-zone=Asia/Singapore working-hours=- away-until=- max-open-leads=- open-leads=0 "
        "updated\n"
    )
    listed = cli("rep", "list", "--subscription", subscription)[1]
    assert "time-zone=Asia/Singapore working-hours=- " in listed


def test_rep_availability_refusals_name_the_option(
    cli, subscription: str, database_url: str
) -> None:
    ana = _rep(database_url, subscription, "ana@acme.test", "o-ana")
    r = str(ana)
    _refused(
        cli("rep", "set", r, "--working-hours", "weekdays 9-6"),
        "error: --working-hours: unknown day 'weekdays' (one of mon, tue, wed, thu, fri, sat, sun)",
    )
    _refused(
        cli("rep", "set", r, "--working-hours", "mon-fri 18:00-09:00"),
        "error: --working-hours: mon: 18:00-09:00 must start before it ends",
    )
    _refused(
        cli("rep", "set", r, "--working-hours", "mon 25:00-26:00"),
        "error: --working-hours: mon: ['25:00', '26:00'] is not [HH:MM, HH:MM]",
    )
    _refused(
        cli("rep", "set", r, "--time-zone", "Mars/Olympus_Mons"),
        "error: --time-zone: unknown time zone 'Mars/Olympus_Mons' (an IANA name, e.g. "
        "Asia/Singapore)",
    )
    _refused(
        cli("rep", "set", r, "--time-zone", "../../etc/passwd"),
        "error: --time-zone: '../../etc/passwd' is not an IANA time zone (e.g. Asia/Singapore)",
    )
    _refused(
        cli("rep", "set", r, "--max-open-leads", "-1"),
        "error: --max-open-leads: must not be negative",
    )
    _refused(
        cli("rep", "set", r, "--max-open-leads", "lots"),
        "error: --max-open-leads: must be a whole number",
    )
    _refused(
        cli("rep", "set", r, "--away-until", "2026-13-40"),
        "error: --away-until: '2026-13-40' is not a date (YYYY-MM-DD)",
    )
    _refused(
        cli("rep", "set", r, "--away-until", "next tuesday"),
        "error: --away-until: 'next tuesday' is not a date (YYYY-MM-DD)",
    )
    with get_session(database_url) as session:  # nothing of the refused values was stored
        rep = session.get(SalesRep, ana)
        assert (rep.workingHours, rep.timeZone, rep.maxOpenLeads, rep.awayUntil) == (
            None,
            None,
            None,
            None,
        )


def test_pool_first_touch_sla_is_set_and_refused(cli, subscription: str) -> None:
    s = subscription
    assert cli("pool", "add", "--subscription", s, "--name", "inbound")[0] == 0
    status, out, _ = cli(
        "pool", "set", "--subscription", s, "--pool", "inbound", "--first-touch-sla", "15m"
    )
    assert (status, out) == (
        0,
        "pool inbound default=no fallback-rep=- first-touch-sla=15m updated\n",
    )
    assert cli(
        "pool", "set", "--subscription", s, "--pool", "inbound", "--first-touch-sla", "900s"
    )[1].endswith(" unchanged\n")
    assert (
        "first-touch-sla=90s"
        in cli("pool", "set", "--subscription", s, "--pool", "inbound", "--first-touch-sla", "90s")[
            1
        ]
    )
    for bad, why in (
        ("0m", "must be longer than 0 seconds"),
        ("-5m", "'-5m' is not a duration (e.g. 90s, 15m, 1h)"),
        ("soon", "'soon' is not a duration (e.g. 90s, 15m, 1h)"),
        ("15", "'15' is not a duration (e.g. 90s, 15m, 1h)"),
    ):
        _refused(
            cli("pool", "set", "--subscription", s, "--pool", "inbound", "--first-touch-sla", bad),
            f"error: --first-touch-sla: {why}",
        )
    _refused(
        cli("pool", "set", "--subscription", s, "--pool", "nope", "--first-touch-sla", "1h"),
        "error: --pool: no pool 'nope' in this subscription",
    )
    cleared = cli("pool", "set", "--subscription", s, "--pool", "inbound", "--first-touch-sla", "")
    assert cleared[1] == "pool inbound default=no fallback-rep=- first-touch-sla=- updated\n"
