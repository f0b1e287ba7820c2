"""``morpheus subscription create|list|set|show`` against the real warehouse: every setting
set, shown and cleared; every refusal one line naming its option, with nothing stored."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import uuid

import click
import pytest
from sqlalchemy import text

from morpheus_pipelines.cli import main
from morpheus_pipelines.crm.models import Subscription
from morpheus_pipelines.crm.steps.subscriptions import SubscriptionRefused, change_settings
from morpheus_pipelines.db.session import get_session
from tests.support.crm_round_robin import add_rep

GOOGLE_KEY = "gk-7Hq2-secret-of-the-form"
SETTING_COLUMNS = (
    "hubspotPortalId",
    "defaultRegion",
    "fallbackSalesRepId",
    "metaPageId",
    "whatsappPhoneNumberId",
    "googleAdsKeyHash",
)


def test_create_prints_the_id_last_and_list_shows_it(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    assert main(["subscription", "create", "--name", " Acme APAC "]) == 0
    created = uuid.UUID(capsys.readouterr().out.strip().splitlines()[-1])
    with get_session(database_url) as session:
        assert session.get(Subscription, created).name == "Acme APAC"
    assert main(["subscription", "list"]) == 0
    assert f"{created}  Acme APAC" in capsys.readouterr().out


def test_an_empty_name_is_refused(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    assert main(["subscription", "create", "--name", "  "]) == 2
    assert "non-empty name" in capsys.readouterr().err


def _created(capsys: pytest.CaptureFixture, name: str = "Acme") -> str:
    assert main(["subscription", "create", "--name", name]) == 0
    return capsys.readouterr().out.strip().splitlines()[-1]


def _settings(url: str, subscription: str) -> dict[str, object]:
    with get_session(url) as session:
        row = session.get(Subscription, uuid.UUID(subscription))
        return {column: getattr(row, column) for column in SETTING_COLUMNS}


def _rep(url: str, subscription: str, email: str, owner: str | None = "o-1", active=True) -> int:
    with get_session(url) as session:
        return add_rep(
            session, uuid.UUID(subscription), email, hubspot_owner_id=owner, is_active=active
        ).id


@pytest.fixture
def cli(database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)

    def run(*argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


def _shown(out: str) -> dict[str, str]:
    return dict(line.split(None, 1) for line in out.strip().splitlines())


def test_set_stores_the_hubspot_portal_id_and_show_prints_it(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    created = _created(capsys)
    assert main(["subscription", "show", created]) == 0
    assert _shown(capsys.readouterr().out)["hubspot-portal-id"] == "(not set)"

    assert main(["subscription", "set", created, "--hubspot-portal-id", "62515"]) == 0
    assert _shown(capsys.readouterr().out)["hubspot-portal-id"] == "62515"
    with get_session(database_url) as session:
        assert session.get(Subscription, uuid.UUID(created)).hubspotPortalId == 62515
    assert main(["subscription", "show", created]) == 0
    shown = _shown(capsys.readouterr().out)
    assert (shown["id"], shown["name"]) == (created, "Acme")
    # setting the same portal again changes nothing and is not an error
    assert main(["subscription", "set", created, "--hubspot-portal-id", "62515"]) == 0


def test_set_takes_every_setting_at_once_and_show_prints_each(
    cli, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    s = _created_by(cli)
    ana = _rep(database_url, s, "ana@acme.test", "o-ana")
    status, out, err = cli(
        "subscription",
        "set",
        s,
        "--hubspot-portal-id",
        "62515",
        "--default-region",
        "sg",
        "--fallback-rep",
        str(ana),
        "--meta-page-id",
        "104857600123",
        "--whatsapp-phone-number-id",
        "106540352242922",
        "--google-ads-key",
        GOOGLE_KEY,
    )
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        f"id                        {s}",
        "name                      Acme",
        "hubspot-portal-id         62515",
        "default-region            SG",
        f"fallback-rep              {ana}",
        "meta-page-id              104857600123",
        "whatsapp-phone-number-id  106540352242922",
        "google-ads-key            set",
    ]
    assert _settings(database_url, s) == {
        "hubspotPortalId": 62515,
        "defaultRegion": "SG",
        "fallbackSalesRepId": ana,
        "metaPageId": "104857600123",
        "whatsappPhoneNumberId": "106540352242922",
        # a shared secret: only its hash is kept
        "googleAdsKeyHash": hashlib.sha256(GOOGLE_KEY.encode()).hexdigest(),
    }
    assert cli("subscription", "show", s)[1] == out
    # the same values again change nothing and are not an error
    again = cli("subscription", "set", s, "--google-ads-key", GOOGLE_KEY, "--default-region", "SG")
    assert again == (0, out, "")
    # the key is never printed nor logged, and neither is its hash
    hashed = hashlib.sha256(GOOGLE_KEY.encode()).hexdigest()
    assert GOOGLE_KEY not in out + caplog.text and hashed not in out + caplog.text


def _created_by(cli, name: str = "Acme") -> str:
    status, out, _ = cli("subscription", "create", "--name", name)
    assert status == 0
    return out.strip().splitlines()[-1]


def test_an_empty_value_clears_a_setting_and_leaves_the_others(cli, database_url: str) -> None:
    s = _created_by(cli)
    ana = _rep(database_url, s, "ana@acme.test", "o-ana")
    status, _, _ = cli(
        "subscription",
        "set",
        s,
        "--fallback-rep",
        str(ana),
        "--default-region",
        "PH",
        "--meta-page-id",
        "42",
        "--google-ads-key",
        GOOGLE_KEY,
    )
    assert status == 0
    status, out, _ = cli("subscription", "set", s, "--fallback-rep", "", "--google-ads-key", "")
    assert status == 0
    shown = _shown(out)
    assert (shown["fallback-rep"], shown["google-ads-key"]) == ("(not set)", "(not set)")
    assert _settings(database_url, s) == {
        "hubspotPortalId": None,
        "defaultRegion": "PH",
        "fallbackSalesRepId": None,
        "metaPageId": "42",
        "whatsappPhoneNumberId": None,
        "googleAdsKeyHash": None,
    }
    assert cli("subscription", "set", s, "--default-region", "", "--meta-page-id", "")[0] == 0
    assert set(_settings(database_url, s).values()) == {None}


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        (
            ["--hubspot-portal-id", "0"],
            "error: --hubspot-portal-id: a HubSpot portal id is positive",
        ),
        (
            ["--hubspot-portal-id", "-3"],
            "error: --hubspot-portal-id: a HubSpot portal id is positive",
        ),
        (["--hubspot-portal-id", "abc"], "error: --hubspot-portal-id: 'abc' is not a whole number"),
        (
            ["--hubspot-portal-id", str(2**63)],
            f"error: --hubspot-portal-id: {2**63} is larger than any HubSpot portal id",
        ),
        (
            [],
            "error: --hubspot-portal-id: nothing to set: give --hubspot-portal-id, "
            "--default-region, --fallback-rep, --meta-page-id, --whatsapp-phone-number-id or "
            "--google-ads-key",
        ),
        (
            ["--default-region", "XX"],
            "error: --default-region: 'XX' is not a region phone numbers can be read in",
        ),
        (
            ["--default-region", "SGP"],
            "error: --default-region: 'SGP' is not a region phone numbers can be read in",
        ),
        (
            ["--default-region", "001"],
            "error: --default-region: '001' is not a region phone numbers can be read in",
        ),
        (["--fallback-rep", "abc"], "error: --fallback-rep: must be a positive integer"),
        (["--fallback-rep", "0"], "error: --fallback-rep: must be a positive integer"),
        (
            ["--fallback-rep", "424242"],
            "error: --fallback-rep: no active sales rep 424242 in this subscription",
        ),
        (
            ["--meta-page-id", "fb.com/acme"],
            "error: --meta-page-id: 'fb.com/acme' is not a Facebook page id (digits only)",
        ),
        (
            ["--whatsapp-phone-number-id", "+65 6123 4567"],
            "error: --whatsapp-phone-number-id: '+65 6123 4567' is not a WhatsApp "
            "phone-number id (digits only)",
        ),
        (["--google-ads-key", "   "], "error: --google-ads-key: the key is blank"),
        (
            ["--google-ads-key", f" {GOOGLE_KEY}"],
            "error: --google-ads-key: the key starts or ends with a space; give it exactly as "
            "Google does",
        ),
        # one good value and one bad: neither is stored
        (
            ["--default-region", "SG", "--meta-page-id", "x1"],
            "error: --meta-page-id: 'x1' is not a Facebook page id (digits only)",
        ),
        (
            ["--google-ads-key", GOOGLE_KEY, "--fallback-rep", "424242"],
            "error: --fallback-rep: no active sales rep 424242 in this subscription",
        ),
    ],
)
def test_set_refuses_bad_input_with_one_line_and_stores_nothing(
    cli, database_url: str, arguments: list[str], line: str
) -> None:
    s = _created_by(cli)
    before = _settings(database_url, s)
    status, out, err = cli("subscription", "set", s, *arguments)
    assert (status, out) == (2, "")
    assert err.strip().splitlines() == [line]
    assert GOOGLE_KEY not in err
    assert _settings(database_url, s) == before == dict.fromkeys(SETTING_COLUMNS)


def test_the_fallback_rep_must_be_an_active_rep_of_the_subscription_with_an_owner(
    cli, database_url: str
) -> None:
    s, other = _created_by(cli), _created_by(cli, "Other")
    gone = _rep(database_url, s, "gone@acme.test", "o-gone", active=False)
    ownerless = _rep(database_url, s, "new@acme.test", None)
    theirs = _rep(database_url, other, "x@other.test", "o-x")
    for rep_id in (gone, theirs):
        status, _, err = cli(
            "subscription", "set", s, "--default-region", "SG", "--fallback-rep", str(rep_id)
        )
        assert status == 2
        assert err.strip().splitlines() == [
            f"error: --fallback-rep: no active sales rep {rep_id} in this subscription"
        ]
    status, _, err = cli("subscription", "set", s, "--fallback-rep", str(ownerless))
    assert status == 2
    assert err.strip().splitlines() == [
        f"error: --fallback-rep: sales rep {ownerless} has no HubSpot owner id, so no lead can "
        "be given to it"
    ]
    assert _settings(database_url, s) == dict.fromkeys(SETTING_COLUMNS)


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--hubspot-portal-id", "62515", "portal 62515 belongs to subscription {first}"),
        (
            "--meta-page-id",
            "104857600123",
            "Facebook page 104857600123 belongs to subscription {first}",
        ),
        (
            "--whatsapp-phone-number-id",
            "106540352242922",
            "WhatsApp phone number 106540352242922 belongs to subscription {first}",
        ),
        ("--google-ads-key", GOOGLE_KEY, "the key is already set on subscription {first}"),
    ],
)
def test_a_value_another_subscription_has_is_refused_and_nothing_is_stored(
    cli, database_url: str, option: str, value: str, message: str
) -> None:
    first, second = _created_by(cli, "First"), _created_by(cli, "Second")
    assert cli("subscription", "set", first, option, value)[0] == 0
    # the good value given with it is not stored either: one transaction
    status, out, err = cli("subscription", "set", second, "--default-region", "SG", option, value)
    assert (status, out) == (2, "")
    assert err.strip().splitlines() == [f"error: {option}: {message.format(first=first)}"]
    assert GOOGLE_KEY not in err and hashlib.sha256(GOOGLE_KEY.encode()).hexdigest() not in err
    assert _settings(database_url, second) == dict.fromkeys(SETTING_COLUMNS)
    # once the first lets go of it, the second may take it
    assert cli("subscription", "set", first, option, "")[0] == 0
    assert cli("subscription", "set", second, option, value)[0] == 0


@pytest.mark.parametrize("command", ["set", "show"])
def test_an_unknown_or_malformed_subscription_is_refused_in_one_line(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, command
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    options = ["--hubspot-portal-id", "5"] if command == "set" else []
    unknown = str(uuid.uuid4())
    assert main(["subscription", command, unknown, *options]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == f"error: SUBSCRIPTION: subscription {unknown} does not exist"
    assert main(["subscription", command, "not-a-uuid", *options]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: SUBSCRIPTION: 'not-a-uuid' is not a subscription id")


def test_every_option_of_set_has_help(capsys: pytest.CaptureFixture) -> None:
    from morpheus_pipelines.cli import morpheus

    assert main(["subscription", "set", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "--hubspot-portal-id N" in shown and "webhook deliveries" in shown
    assert "An empty value clears a setting" in shown
    command = morpheus.commands["subscription"].commands["set"]
    options = [p for p in command.params if isinstance(p, click.Option) and p.name != "help"]
    assert len(options) == 6
    for option in options:
        assert option.help, f"subscription set {option.name} has no help"
        assert option.opts[0] in shown


def test_two_subscriptions_taking_one_page_at_once_one_is_refused_by_the_constraint(
    cli, database_url: str
) -> None:
    """The second transaction waits on the UNIQUE index for the first, then is refused with
    the option named (not a traceback): no check-then-write could tell them apart."""
    first, second = _created_by(cli, "First"), _created_by(cli, "Second")
    outcome: list[BaseException | None] = []

    def take_it() -> None:
        try:
            with get_session(database_url) as session:
                change_settings(session, uuid.UUID(second), {"--meta-page-id": "555"})
        except BaseException as exc:  # reported by the assertions below
            outcome.append(exc)
        else:
            outcome.append(None)

    with get_session(database_url) as holder:
        change_settings(holder, uuid.UUID(first), {"--meta-page-id": "555"})
        racer = threading.Thread(target=take_it)
        racer.start()
        _wait_until_blocked(database_url)
    racer.join(timeout=30)
    [refused] = outcome
    assert isinstance(refused, SubscriptionRefused)
    assert (refused.option, str(refused)) == (
        "--meta-page-id",
        f"Facebook page 555 belongs to subscription {first}",
    )
    assert _settings(database_url, second) == dict.fromkeys(SETTING_COLUMNS)


def _wait_until_blocked(url: str, timeout: float = 30.0) -> None:
    """Until another backend of this database waits for a lock (the racer on the index)."""
    deadline = time.monotonic() + timeout
    query = text(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock'"
    )
    while time.monotonic() < deadline:
        with get_session(url) as session:
            if session.scalar(query):
                return
    raise AssertionError("the second transaction never waited for the first")
