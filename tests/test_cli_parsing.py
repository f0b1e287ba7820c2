"""How ``morpheus`` reads a command line: the spellings the argparse parser accepted still
work on Click (options before the sub-command, abbreviated options, a sibling sub-command's
option checked and ignored), usage errors exit 2, ``--version`` tells the package's version.
The commands themselves are replaced by a recorder: nothing here touches a database."""

from __future__ import annotations

import uuid
from importlib.metadata import version
from typing import Any

import click
import pytest

from morpheus_pipelines.cli import main, morpheus

KEY = "12345678-1234-5678-1234-567812345678"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Every leaf command records its parameters instead of running."""
    recorded: list[tuple[str, dict[str, Any]]] = []

    def replace(group: click.Group, path: str) -> None:
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                replace(command, f"{path} {name}".strip())
                continue

            def record(_path: str = f"{path} {name}".strip(), **params: Any) -> int:
                recorded.append((_path, params))
                return 0

            monkeypatch.setattr(command, "callback", record)

    replace(morpheus, "")
    return recorded


@pytest.mark.parametrize(
    ("line", "command", "expected"),
    [
        ("db url --driver psycopg", "db url", {"driver": "psycopg", "database": "morpheus"}),
        ("db --driver psycopg url", "db url", {"driver": "psycopg", "database": "morpheus"}),
        (
            "db --dri=psycopg url --datab dagster",
            "db url",
            {"driver": "psycopg", "database": "dagster"},
        ),
        ("db start --driver psycopg", "db start", {}),
        ("subscription list --name x", "subscription list", {}),
        (f"api-key --subscription {KEY} --label web create", "api-key create", {"label": "web"}),
        (f"api-key create {KEY} --sub {KEY}", "api-key create", {"label": None}),
        (f"api-key revoke {KEY} --label x", "api-key revoke", {"key_id": uuid.UUID(KEY)}),
        (f"automation-rule --subscription {KEY} list --channel email", "automation-rule list", {}),
        (f"lead --status won close {KEY}", "lead close", {"status": "won", "at": None}),
        ("serve --po 9000 --no-owner --work 3", "serve", {"port": 9000, "no_owner_cache": True}),
        ("dev --no-demo --tenants 10_000", "dev", {"no_demo_runs": True, "tenants": 10_000}),
        ("emulate --port 5 hubspot", "emulate hubspot", {"port": 5, "data": None}),
    ],
)
def test_the_spellings_argparse_accepted_still_work(
    calls: list, line: str, command: str, expected: dict[str, Any]
) -> None:
    assert main(line.split()) == 0
    [(called, params)] = calls
    assert called == command
    assert params.items() >= expected.items()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("db start --driver bogus", "'bogus' is not one of"),
        ("db start --driver", "requires an argument"),
        ("db --d x url", "ambiguous"),
        (f"automation-rule list --subscription {KEY} --channel sms", "'sms' is not one of"),
        (f"automation-rule add --subscription {KEY} --name n", "Missing option '--channel'"),
        ("api-key create", "Missing option '--subscription'"),
        ("api-key create not-a-key --subscription " + KEY, "not a valid UUID"),
        ("api-key revoke", "Missing argument 'KEY_ID'"),
        (f"lead close {KEY} --status lost --at 2026-11-03T09:00", "needs a timezone"),
        (f"lead close {KEY} --status lost --at yesterday", "must be an ISO 8601 time"),
        ("subscription create", "Missing option '--name'"),
        ("db nope", "No such command 'nope'"),
    ],
)
def test_a_usage_error_exits_2_and_says_why(
    calls: list, capsys: pytest.CaptureFixture, line: str, message: str
) -> None:
    assert main(line.split()) == 2
    assert message in capsys.readouterr().err
    assert calls == []


def test_version_and_help(capsys: pytest.CaptureFixture) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"morpheus {version('morpheus-pipelines')}\n"
    assert main(["-h"]) == 0
    listing = capsys.readouterr().out
    for group in ("db", "dev", "demo", "serve", "api-key", "automation-rule", "lead", "emulate"):
        assert f"\n  {group} " in listing


def test_ctrl_c_ends_a_command_with_130_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    def interrupted(**_params: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(morpheus.commands["demo"], "callback", interrupted)
    assert main(["demo"]) == 130
    assert capsys.readouterr().err == ""
