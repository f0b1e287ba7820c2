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
