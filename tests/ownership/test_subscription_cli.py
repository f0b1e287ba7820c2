"""``morpheus subscription create|list`` against the real warehouse."""

from __future__ import annotations

import uuid

import pytest

from morpheus_pipelines.cli import main
from morpheus_pipelines.crm.models import Subscription
from morpheus_pipelines.db.session import get_session


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


def test_set_stores_the_hubspot_portal_id_and_show_prints_it(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    created = _created(capsys)
    assert main(["subscription", "show", created]) == 0
    assert "hubspot-portal-id  (not set)" in capsys.readouterr().out

    assert main(["subscription", "set", created, "--hubspot-portal-id", "62515"]) == 0
    assert "hubspot-portal-id  62515" in capsys.readouterr().out
    with get_session(database_url) as session:
        assert session.get(Subscription, uuid.UUID(created)).hubspotPortalId == 62515
    assert main(["subscription", "show", created]) == 0
    shown = capsys.readouterr().out
    assert f"id                 {created}" in shown and "name               Acme" in shown
    # setting the same portal again changes nothing and is not an error
    assert main(["subscription", "set", created, "--hubspot-portal-id", "62515"]) == 0


@pytest.mark.parametrize(
    ("arguments", "option", "message"),
    [
        (["--hubspot-portal-id", "0"], "--hubspot-portal-id", "positive"),
        (["--hubspot-portal-id", "-3"], "--hubspot-portal-id", "positive"),
        (["--hubspot-portal-id", "abc"], "--hubspot-portal-id", "not a whole number"),
        (["--hubspot-portal-id", str(2**63)], "--hubspot-portal-id", "larger than"),
        ([], "--hubspot-portal-id", "nothing to set"),
    ],
)
def test_set_refuses_bad_input_with_one_line_naming_the_option(
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
    arguments: list[str],
    option: str,
    message: str,
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    created = _created(capsys)
    assert main(["subscription", "set", created, *arguments]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {option}: ") and message in line


def test_a_portal_another_subscription_answers_for_is_refused(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    first, second = _created(capsys, "First"), _created(capsys, "Second")
    assert main(["subscription", "set", first, "--hubspot-portal-id", "62515"]) == 0
    capsys.readouterr()
    assert main(["subscription", "set", second, "--hubspot-portal-id", "62515"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == f"error: --hubspot-portal-id: portal 62515 belongs to subscription {first}"
    with get_session(database_url) as session:
        assert session.get(Subscription, uuid.UUID(second)).hubspotPortalId is None


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
    assert main(["subscription", "set", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "--hubspot-portal-id N" in shown and "webhook deliveries" in shown
