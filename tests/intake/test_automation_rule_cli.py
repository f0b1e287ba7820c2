"""``morpheus automation-rule``: a rule that fits is added and described; one that could never
fire inside the WhatsApp window, or repeats a name, is refused with a sentence."""

from __future__ import annotations

import pytest

from morpheus_pipelines.cli import main
from tests.support.timeline import subscription


def test_rules_are_added_listed_and_refused_with_a_reason(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    sub = str(subscription(database_url))
    add = ["automation-rule", "add", "--subscription", sub]

    assert (
        main(
            [
                *add,
                "--name",
                "quiet_day",
                "--channel",
                "email",
                "--quiet-hours",
                "24",
                "--template",
                "still_interested",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                *add,
                "--name",
                "closing",
                "--channel",
                "whatsapp",
                "--quiet-hours",
                "12",
                "--window-lead-hours",
                "2",
                "--body",
                "Anything else?",
            ]
        )
        == 0
    )
    capsys.readouterr()
    too_long = main(
        [
            *add,
            "--name",
            "late",
            "--channel",
            "whatsapp",
            "--quiet-hours",
            "23",
            "--window-lead-hours",
            "2",
            "--template",
            "t",
        ]
    )
    too_long_error = capsys.readouterr().err
    again = main(
        [*add, "--name", "quiet_day", "--channel", "email", "--quiet-hours", "6", "--template", "t"]
    )
    again_error = capsys.readouterr().err
    tiny = main(
        [*add, "--name", "tiny", "--channel", "email", "--quiet-hours", "0.0001", "--template", "t"]
    )
    tiny_error = capsys.readouterr().err
    assert tiny == 2 and "between 1 second" in tiny_error
    assert main(["automation-rule", "list", "--subscription", sub]) == 0
    listed = capsys.readouterr().out

    assert too_long == 2 and "fit in the 24-hour window" in too_long_error
    assert again == 2 and "already has a rule named 'quiet_day'" in again_error
    assert listed.splitlines()[0].startswith("quiet_day: Nudge by email")
    assert "2 h before the 24-hour window closes" in listed.splitlines()[1]
